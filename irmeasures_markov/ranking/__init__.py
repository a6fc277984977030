"""Rankings joined with judgments: the layer every measure reads its input from.

Modules, lowest first:

* :mod:`~irmeasures_markov.ranking._qrels_index`: judgments by query (:class:`QrelsIndex`, :data:`UNJUDGED`);
* :mod:`~irmeasures_markov.ranking._order`: trec_eval order (score descending, ties by docid descending);
* :mod:`~irmeasures_markov.ranking._join`: a dict run made columns, and every run joined at once (one query:
  :class:`RankedQuery`);
* :mod:`~irmeasures_markov.ranking._prepared`: :class:`PreparedRun` and the :class:`RelevanceBatch` measures read;
* :mod:`~irmeasures_markov.ranking._cache`: one :class:`QrelsIndex` per qrels object, reused across calls.

How the preparation works, and why: docs/design.md.
"""
from irmeasures_markov.ranking._cache import clear as clear_cache
from irmeasures_markov.ranking._join import RankedQuery
from irmeasures_markov.ranking._prepared import PreparedRun, RelevanceBatch
from irmeasures_markov.ranking._qrels_index import UNJUDGED, QrelsIndex

__all__ = ["UNJUDGED", "QrelsIndex", "RankedQuery", "RelevanceBatch", "PreparedRun"]
__all__ += ["clear_cache"]
