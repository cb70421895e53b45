"""Interleaved timing for a shared, noisy machine: run A B C, A B C, ... and report per-round ratios.

Timing the baseline and the candidate one after the other lets the machine's load decide the ratio;
interleaving them round by round and taking the median of the per-round ratios (with its min-max
spread) does not::

    from interlingua.benchmarks.interleave import interleave, ratio

    seconds = interleave({"baseline": run_a, "candidate": run_b}, rounds=5)
    median, low, high = ratio(seconds["baseline"], seconds["candidate"])   # candidate speed-up
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleave(runs: dict[str, Callable[[], object]], rounds: int, warmup: bool = False,
               progress: Callable[[str], None] | None = None) -> dict[str, list[float]]:
    """Seconds of each run in each round, the runs called in the given order within a round.

    With ``warmup`` every run is called once first, untimed (compilation, caches). ``progress`` gets one
    line per finished round (its seconds), so a run cut short still leaves its rounds behind.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if warmup:
        for run in runs.values():
            run()
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
        if progress:
            progress(f"round {len(seconds[name])}: " + ", ".join(f"{n} {seconds[n][-1]:.2f} s" for n in runs))
    return seconds


def ratio(baseline: list[float], candidate: list[float]) -> tuple[float, float, float]:
    """Median, min and max over rounds of ``baseline / candidate`` seconds (> 1: candidate faster)."""
    ratios = [b / c for b, c in zip(baseline, candidate)]
    return statistics.median(ratios), min(ratios), max(ratios)


def format_ratio(baseline: list[float], candidate: list[float]) -> str:
    median, low, high = ratio(baseline, candidate)
    return f"{median:.2f}x ({low:.2f}-{high:.2f})"
