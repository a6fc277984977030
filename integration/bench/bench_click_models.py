"""Benchmark: fitting PBM, CM, UBM, DBN (and SDBN) on the 35,064 Yandex training sessions (target: the four < 30 s).

Times ``fit_click_model`` for each model (50 EM iterations at most, the
default) and ``read_wscd`` as the reference, interleaved
(integration/bench/benchkit.py), and reports the sum of the four models' best
times against the target.

    python integration/bench/bench_click_models.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from benchkit import interleaved, print_report  # noqa: E402

from irmeasures_markov.calibration.click_models import CLICK_MODELS, fit_click_model  # noqa: E402
from irmeasures_markov.calibration.readers import read_wscd  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402

TARGET = 30.0
FOUR = ("PBM", "CM", "UBM", "DBN")


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
    contenders = {"read_wscd(train)": lambda: read_wscd(path)}
    for name in CLICK_MODELS:
        contenders[f"fit {name}"] = lambda name=name: fit_click_model(name, train)
    times = interleaved(contenders, rounds=args.rounds)
    print(f"{len(train):,} training sessions; target: PBM + CM + UBM + DBN < {TARGET:.0f} s")
    print_report(times, peer="read_wscd(train)")
    total = sum(min(times[f"fit {n}"]) for n in FOUR)
    worst = max(sum(times[f"fit {n}"][k] for n in FOUR) for k in range(args.rounds))
    print(f"PBM + CM + UBM + DBN: best {total:.2f} s, slowest round {worst:.2f} s -> "
          f"{'meets' if worst < TARGET else 'MISSES'} the {TARGET:.0f} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
