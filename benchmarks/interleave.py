"""Interleaved timing for a shared, noisy machine: run A B C, A B C, ... and report per-round ratios.

Timing the baseline and the candidate one after the other lets the machine's load decide the ratio;
interleaving them round by round and taking the median of the per-round ratios (with its min-max
spread) does not::

    from interlingua.benchmarks.interleave import interleave, ratio

    seconds = interleave({"baseline": run_a, "candidate": run_b}, rounds=5)
    median, low, high = ratio(seconds["baseline"], seconds["candidate"])   # candidate speed-up

Runs that measure themselves (a step timed inside a child process, a throughput read from a training
run's metrics) go through :func:`interleaved` / :func:`interleave_results`, which keep what each run
returns instead of its wall-clock time.
"""

from __future__ import annotations

import signal
import statistics
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")


def round_order(names: list[str], round_index: int, rotate: bool) -> list[str]:
    """The order of the runs in one round: as given, or rotated by the round (A B C, B C A, C A B, ...)."""
    if not rotate or not names:
        return list(names)
    shift = round_index % len(names)
    return names[shift:] + names[:shift]


def interleaved(runs: dict[str, Callable[[], T]], rounds: int, warmup: bool = False,
                rotate: bool = False) -> Iterator[tuple[int, str, T]]:
    """Yield ``(round, name, what the run returned)`` as the runs are called, round by round.

    Every round calls every run, in the given order or (``rotate``) starting one later each round, so no
    run always goes first after a pause. With ``warmup`` every run is called once first, untimed and
    unreported. A caller stopped midway keeps what was yielded so far (whole rounds: see
    :func:`complete_rounds`).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if warmup:
        for run in runs.values():
            run()
    names = list(runs)
    for r in range(rounds):
        for name in round_order(names, r, rotate):
            yield r, name, runs[name]()


class Stopped(Exception):
    """Raised by the SIGTERM handler of :func:`interleave_results` (``stop_on_sigterm``)."""


def interleave_results(runs: dict[str, Callable[[], T]], rounds: int, warmup: bool = False, rotate: bool = False,
                       on_result: Callable[[int, str, T], object] | None = None,
                       stop_on_sigterm: bool = False) -> dict[str, list[T]]:
    """What each run returned in each round (runs that measure themselves), see :func:`interleaved`.

    ``on_result(round, name, value)`` is called after every run (progress lines). With ``stop_on_sigterm`` a
    SIGTERM (``timeout``'s) ends the rounds early: the rounds every run completed are returned, and a line
    says so. Only from the main thread.
    """
    results: dict[str, list[T]] = {name: [] for name in runs}
    previous = signal.signal(signal.SIGTERM, _raise_stopped) if stop_on_sigterm else None
    try:
        for r, name, value in interleaved(runs, rounds, warmup=warmup, rotate=rotate):
            results[name].append(value)
            if on_result is not None:
                on_result(r, name, value)
    except Stopped:
        done = complete_rounds(results)
        print(f"stopped (SIGTERM): reporting the {len(next(iter(done.values()), []))} complete round(s)", flush=True)
        return done
    finally:
        if stop_on_sigterm:
            signal.signal(signal.SIGTERM, previous)
    return results


def interleave(runs: dict[str, Callable[[], object]], rounds: int, warmup: bool = False,
               progress: Callable[[str], None] | None = None, rotate: bool = False) -> dict[str, list[float]]:
    """Seconds of each run in each round, the runs called in the given order within a round (``rotate``: starting
    one later each round, see :func:`interleaved`).

    With ``warmup`` every run is called once first, untimed (compilation, caches). ``progress`` gets one
    line per finished round (its seconds), so a run cut short still leaves its rounds behind.
    """
    names = list(runs)
    so_far: dict[str, list[float]] = {name: [] for name in names}

    def on_result(r: int, name: str, value: float) -> None:
        so_far[name].append(value)
        if all(len(values) == r + 1 for values in so_far.values()):
            progress(f"round {r + 1}: " + ", ".join(f"{n} {so_far[n][-1]:.2f} s" for n in names))

    return interleave_results({name: _timed(run) for name, run in runs.items()}, rounds, warmup=warmup, rotate=rotate,
                              on_result=on_result if progress else None)


def complete_rounds(results: dict[str, list[T]]) -> dict[str, list[T]]:
    """``results`` cut to the rounds every run completed (after an interrupted :func:`interleaved`)."""
    done = min((len(values) for values in results.values()), default=0)
    return {name: values[:done] for name, values in results.items()}


def ratio(baseline: list[float], candidate: list[float]) -> tuple[float, float, float]:
    """Median, min and max over rounds of ``baseline / candidate`` seconds (> 1: candidate faster)."""
    ratios = [b / c for b, c in zip(baseline, candidate)]
    return statistics.median(ratios), min(ratios), max(ratios)


def format_ratio(baseline: list[float], candidate: list[float]) -> str:
    median, low, high = ratio(baseline, candidate)
    return f"{median:.2f}x ({low:.2f}-{high:.2f})"


def _raise_stopped(signum, frame):
    raise Stopped()


def _timed(run: Callable[[], object]) -> Callable[[], float]:
    def timed() -> float:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start

    return timed
