"""On all 129 TREC-8 runs: the fast ir_measures path (cached qrels index, rankings cut at the deepest cutoff)
gives bit for bit the values of a fresh index and full rankings.  18 of these runs have heavy score ties,
so the partial sort meets tie groups cut by the cutoff."""
import ir_measures
import numpy as np

import irmeasures_markov as imm
from irmeasures_markov import MP, PROVIDER
from irmeasures_markov.ranking import QrelsIndex
from irmeasures_markov.ranking import _cache as qrels_cache
from irmeasures_markov.ranking._prepared import PreparedRun, run_needs

MEASURES = [MP @ 10, MP(model="GL_AD_LID", recall=True) @ 100, MP(model="LO_OR_ID") @ 1, imm.M3 @ 20,
            imm.PH(order=2) @ 5]


def test_cached_depth_limited_path_equals_full_rankings(trec8):
    qrels, runs = trec8
    qrels_cache.clear()
    index = QrelsIndex(qrels)
    evaluator = PROVIDER.evaluator(MEASURES, qrels)
    assert run_needs(evaluator.measures)[0] == 100   # the deepest cutoff
    for name, run in runs.items():
        got = ir_measures.calc_aggregate(MEASURES, qrels, run)
        full = PreparedRun(index, run)
        for m in MEASURES:
            mean = 0.0
            values = np.asarray(m.compute(full), dtype=np.float64).tolist()
            for v in values + [m.DEFAULT] * (len(qrels) - len(values)):
                mean += v
            assert got[m] == mean / len(qrels), (name, m)
        cut = evaluator.prepare(run)
        for f, c in zip(full.queries, cut.queries):
            assert c.docids == f.docids[:100], (name, f.qid)
    assert qrels_cache.cache_info().hits >= len(runs)
