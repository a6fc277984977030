"""Rankings joined with judgments: the layer every measure reads its input from.

Modules, lowest first:

* `_qrels_index`: judgments by query ([`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex], `UNJUDGED`);
* `_order`: trec_eval order (score descending, ties by docid descending);
* `_join`: a dict run made columns, and every run joined at once (one query:
  [`RankedQuery`][irmeasures_markov.ranking.RankedQuery]);
* `_prepared`: [`PreparedRun`][irmeasures_markov.ranking.PreparedRun] and the
[`RelevanceBatch`][irmeasures_markov.ranking.RelevanceBatch] measures read;
* `_cache`: one [`QrelsIndex`][irmeasures_markov.ranking.QrelsIndex] per qrels object, reused across calls.

How the preparation works, and why: docs/design.md.
"""
from irmeasures_markov.ranking._cache import clear as clear_cache
from irmeasures_markov.ranking._join import RankedQuery
from irmeasures_markov.ranking._prepared import PreparedRun, RelevanceBatch
from irmeasures_markov.ranking._qrels_index import UNJUDGED, QrelsIndex

__all__ = ["UNJUDGED", "QrelsIndex", "RankedQuery", "RelevanceBatch", "PreparedRun"]
__all__ += ["clear_cache"]
