"""Benchmark: fitting all four families on the 35,064 Yandex training sessions (target < 10 s).

Times ``calibration.fit`` with the default bootstrap (200 replicates) and the
read of the log, interleaved (integration/bench/benchkit.py).  Without qrels and
timestamps, TBG contributes its notes only; MP, P@H and Carterette fit every
candidate.

    python integration/bench/bench_calibration.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from benchkit import interleaved, print_report  # noqa: E402

from irmeasures_markov.calibration import fit  # noqa: E402
from irmeasures_markov.calibration.readers import read_wscd  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402

TARGET = 10.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    data = shared_data_dir()
    if data is None or not (data / "logs" / "yandex-wscd2012-sample" / "train.txt").is_file():
        print("shared data not found (set IRMEASURES_MARKOV_DATA); nothing to benchmark")
        return 1
    path = data / "logs" / "yandex-wscd2012-sample" / "train.txt"
    train = read_wscd(path)
    times = interleaved({
        "read_wscd(train)": lambda: read_wscd(path),
        "fit(all families)": lambda: fit(train, bootstrap=200),
        "fit(all, bootstrap=0)": lambda: fit(train, bootstrap=0),
    }, rounds=args.rounds)
    print(f"{len(train):,} training sessions; target: fit(all families) < {TARGET:.0f} s")
    print_report(times, peer="read_wscd(train)")
    best = min(times["fit(all families)"])
    print(f"fit(all families): best {best:.2f} s -> {'meets' if best < TARGET else 'MISSES'} the {TARGET:.0f} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
