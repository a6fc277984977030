"""Benchmark: reading the Yandex WSCD 2012 sample (35,064 and 21,413 sessions) into a ClickLog.

Target: each file in well under a second (``read_wscd``).  The peer is the
least any reader must do: read the file and split it into session strings;
the ratio is what parsing, checking and building the sessions cost on top.
The same log written in our JSONL and TSV formats is read too.

    python integration/bench/bench_log_readers.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from benchkit import interleaved, print_report  # noqa: E402

from irmeasures_markov.calibration.readers import read_log, read_wscd, write_log  # noqa: E402
from irmeasures_markov.testing import shared_data_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    data = shared_data_dir()
    folder = data / "logs" / "yandex-wscd2012-sample" if data else None
    if folder is None or not folder.is_dir():
        print("shared data (../shared/data/logs/yandex-wscd2012-sample) not found: nothing to time")
        return 0
    for name in ("train.txt", "test.txt"):
        path = folder / name

        def split_only(path=path):
            with open(path, encoding="utf-8") as fh:
                return [s for line in fh for s in line.split(";") if s.strip()]

        log = read_wscd(path)
        with tempfile.TemporaryDirectory() as tmp:
            jsonl, tsv = os.path.join(tmp, "log.jsonl"), os.path.join(tmp, "log.tsv")
            write_log(log, jsonl)
            write_log(log, tsv)
            times = interleaved({"split into sessions": split_only,
                                 "read_wscd": lambda path=path: read_wscd(path),
                                 "read_log jsonl": lambda jsonl=jsonl: read_log(jsonl),
                                 "read_log tsv": lambda tsv=tsv: read_log(tsv, format="tsv")}, rounds=args.rounds)
        print(f"\n{name}: {len(log)} sessions, {sum(s.n_clicks for s in log)} clicks")
        print_report(times, peer="split into sessions")
        print(f"  target: read_wscd well under 1 s; best {min(times['read_wscd']):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
