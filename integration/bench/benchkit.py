"""Timing harness shared by the benchmark scripts.

A shared, noisy machine moves a block-timed ratio by tens of percent, so every
benchmark here times the peer and the candidate *interleaved*: each round runs
every contender once, in an order that alternates between rounds, and a ratio
is formed within each round.  The report gives the best time of each contender
and, for each ratio, its best and its range over the rounds, with the date.

    from benchkit import interleaved, print_report
    times = interleaved({"map": run_map, "MP16": run_mp}, rounds=5)
    print_report(times, peer="map")
"""
from __future__ import annotations

import datetime
import gc
import time
from collections.abc import Callable, Mapping, Sequence

Timings = dict[str, list[float]]


def interleaved(contenders: Mapping[str, Callable[[], object]], rounds: int = 5, *,
                warmup: bool = True) -> Timings:
    """Wall times of each contender, ``rounds`` times, interleaved round by round.

    Within round ``k`` the contenders run in their given order when ``k`` is even
    and in reverse when odd, so neither always runs right after the other.  A
    warm-up call of each (not timed) fills caches and JIT compilations first.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    names = list(contenders)
    if warmup:
        for name in names:
            contenders[name]()
    times: Timings = {name: [] for name in names}
    for k in range(rounds):
        order = names if k % 2 == 0 else names[::-1]
        for name in order:
            gc.collect()
            t0 = time.perf_counter()
            contenders[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def ratios(times: Timings, candidate: str, peer: str) -> list[float]:
    """Per-round ratios candidate / peer (same round, so the same machine load)."""
    return [c / p for c, p in zip(times[candidate], times[peer])]


def format_report(times: Timings, peer: str, *, targets: Mapping[str, float] | None = None,
                  candidates: Sequence[str] | None = None, unit: str = "s") -> str:
    """Best time of every contender, and each candidate's ratio to ``peer``: best and range."""
    targets = targets or {}
    candidates = [n for n in (candidates or times) if n != peer]
    rounds = len(times[peer])
    width = max(len(n) for n in times)
    lines = [f"{datetime.date.today().isoformat()}, {rounds} interleaved rounds; best time (range):"]
    for name, ts in times.items():
        lines.append(f"  {name:<{width}}  {min(ts):8.3f} {unit}  ({min(ts):.3f}-{max(ts):.3f})")
    for name in candidates:
        r = ratios(times, name, peer)
        target = f"  (target <= {targets[name]})" if name in targets else ""
        lines.append(f"  ratio {name} / {peer}: best {min(r):.3f}, per-round range "
                     f"{min(r):.3f}-{max(r):.3f}{target}")
    return "\n".join(lines)


def print_report(times: Timings, peer: str, **kwargs) -> None:
    print(format_report(times, peer, **kwargs), flush=True)


def trec8_inputs(n_runs: int | None = None):
    """``(qrels, runs)`` of TREC-8 from the shared data: the qrels dict and a list of run dicts.

    ``n_runs`` keeps only the first runs (by file name).  Exits with a
    message when the shared data is absent, as a benchmark script should.
    """
    import sys

    from irmeasures_markov.io import load_run_dir, read_trec_qrels
    from irmeasures_markov.testing import shared_data_dir

    data = shared_data_dir()
    if data is None:
        sys.exit("shared data not found (set IRMEASURES_MARKOV_DATA)")
    qrels = read_trec_qrels(data / "qrels" / "trec8.qrels.gz")
    # plain dicts, as pytrec_eval needs them: every contender gets the same parsed runs
    runs = [run.to_dict() for run in list(load_run_dir(data / "runs" / "trec8", progress=False).values())[:n_runs]]
    return qrels, runs
