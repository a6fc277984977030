"""Rankings joined with judgments: the layer every measure reads its input from.

Modules, lowest first:

* :mod:`~irmeasures_markov.ranking.qrels_index`: judgments by query (:class:`QrelsIndex`, :data:`UNJUDGED`);
* :mod:`~irmeasures_markov.ranking.order`: trec_eval order (score descending, ties by docid descending);
* :mod:`~irmeasures_markov.ranking.positive_join`: the join of long rankings through their positive judgments;
* :mod:`~irmeasures_markov.ranking.join`: one query (:class:`RankedQuery`) or a whole run joined at once;
* :mod:`~irmeasures_markov.ranking.prepared`: :class:`PreparedRun` and the :class:`RelevanceBatch` measures read;
* :mod:`~irmeasures_markov.ranking.cache`: one :class:`QrelsIndex` per qrels object, reused across calls.

How the preparation works, and why: docs/design.md.
"""
from .join import RankedQuery
from .order import rank_documents, read_scores
from .prepared import PreparedRun, RelevanceBatch
from .qrels_index import UNJUDGED, QrelsIndex

__all__ = ["UNJUDGED", "QrelsIndex", "RankedQuery", "RelevanceBatch", "PreparedRun", "rank_documents",
           "read_scores"]
