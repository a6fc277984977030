"""TBG with the tie groups that hold no relevant document in file order, against the full docid order.

    python integration/reproduce/crosscheck_tbg_tie_order.py

TBG orders by docid only the tie groups of scores that hold a relevant
document and adds the holding times of the others in the run file's order
(docs/conventions.md, "Ranking order and ties").  On all 129 TREC-8 runs
(seeded lengths for every retrieved or judged document, as in
integration/bench/bench_tbg.py) this prints how many of the tied documents share
a tie group with a relevant document, and how many values of three TBG
variants differ from the same measures computed with every tie group in
docid order, and by how much.
"""
import os
import sys
from collections.abc import Mapping

import irmeasures_markov as imm
from irmeasures_markov.plugin import _tbg as tbg_plugin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))  # bench_tbg
from bench_tbg import assumed_lengths  # noqa: E402

LENGTHS_NAME = "crosscheck-tie-order"


def variants() -> list:
    return [imm.TBG(lengths=LENGTHS_NAME), imm.TBG(lengths=LENGTHS_NAME, halflife=30.0),
            imm.TBG(lengths=LENGTHS_NAME, norm="ideal")]


def tied_share(qrels: Mapping, runs: list[Mapping]) -> tuple[int, int]:
    """``(tied, with_relevant)``: tied documents of the runs' long rankings, and those in a tie group that holds
    a positive grade."""
    evaluator = imm.PROVIDER.evaluator(variants()[:1], qrels)
    tied = with_relevant = 0
    for run in runs:
        flat = evaluator.prepare(run)._flat
        ties = flat._ties
        if ties is None:
            continue
        in_positive_groups = flat.in_positive_tie_groups(ties)
        tied += in_positive_groups.size
        with_relevant += int(in_positive_groups.sum())
    return tied, with_relevant


def compare(qrels: Mapping, runs: list[Mapping]) -> tuple[int, int, float]:
    """``(values, differing, largest absolute difference)`` of the three TBG variants on ``runs``: as TBG
    computes them, and with every tie group in docid order."""
    imm.register_lengths(LENGTHS_NAME, assumed_lengths(list(runs) + [qrels]))
    measures = variants()
    as_computed: list[dict] = [imm.PROVIDER.evaluator(measures, qrels).values(run) for run in runs]
    original = tbg_plugin.batch_lengths
    try:
        tbg_plugin.batch_lengths = lambda prepared, m, lengths, exact_tie_order=True: original(prepared, m, lengths)
        exact = [imm.PROVIDER.evaluator(measures, qrels).values(run) for run in runs]
    finally:
        tbg_plugin.batch_lengths = original
    n = differing = 0
    worst = 0.0
    for got, want in zip(as_computed, exact):
        for m in measures:
            for q, v in want[m].items():
                n += 1
                if got[m][q] != v:
                    differing += 1
                    worst = max(worst, abs(got[m][q] - v))
    return n, differing, worst


def main():
    from irmeasures_markov.io import read_trec_qrels, read_trec_run
    from irmeasures_markov.testing import shared_data_dir
    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    import glob
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    runs = [read_trec_run(p) for p in sorted(glob.glob(str(data / "runs" / "trec8" / "input.*.gz")))]
    tied, with_relevant = tied_share(qrels, runs)
    print(f"{len(runs)} runs: {tied} tied documents, {with_relevant} ({with_relevant / tied:.0%}) in a tie group "
          "holding a relevant document")
    n, differing, worst = compare(qrels, runs)
    print(f"{n} values of three TBG variants: {differing} differ from the full docid order, "
          f"by at most {worst:.2g}")


if __name__ == "__main__":
    main()
