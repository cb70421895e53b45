"""benchmarks/interleave.py: the order runs are called in, what is kept per round, and an early stop."""

from __future__ import annotations

import os
import signal

import pytest

from interlingua.benchmarks.interleave import (
    complete_rounds,
    interleave,
    interleave_results,
    interleaved,
    ratio,
    round_order,
)


def _recording(calls: list[str], name: str, value: float):
    def run() -> float:
        calls.append(name)
        return value

    return run


def test_rounds_call_every_run_in_order_or_rotated():
    calls: list[str] = []
    runs = {name: _recording(calls, name, i) for i, name in enumerate("abc")}
    assert [(r, n) for r, n, _ in interleaved(runs, 3)] == [(r, n) for r in range(3) for n in "abc"]
    calls.clear()
    list(interleaved(runs, 3, rotate=True))
    assert "".join(calls) == "abc" "bca" "cab"
    assert round_order(["a", "b"], 3, rotate=True) == ["b", "a"]


def test_results_are_kept_per_run_and_warmup_is_not_reported():
    calls: list[str] = []
    runs = {"base": _recording(calls, "base", 2.0), "cand": _recording(calls, "cand", 1.0)}
    results = interleave_results(runs, 2, warmup=True)
    assert results == {"base": [2.0, 2.0], "cand": [1.0, 1.0]}
    assert calls == ["base", "cand"] * 3  # the warm-up round, then two reported rounds
    assert ratio(results["base"], results["cand"]) == (2.0, 2.0, 2.0)
    seconds = interleave(runs, 2)
    assert len(seconds["base"]) == 2 and all(s >= 0 for s in seconds["base"])
    calls.clear()
    seconds = interleave(runs, 3, rotate=True)  # timed like the plain rounds, the order alternating
    assert calls == ["base", "cand", "cand", "base", "base", "cand"] and len(seconds["cand"]) == 3


def test_sigterm_ends_the_rounds_and_keeps_the_complete_ones():
    calls: list[str] = []

    def stopping() -> float:
        calls.append("b")
        if calls.count("b") == 3:  # round 3's second run: the time limit hits
            os.kill(os.getpid(), signal.SIGTERM)
        return 1.0

    before = signal.getsignal(signal.SIGTERM)
    results = interleave_results({"a": _recording(calls, "a", 3.0), "b": stopping}, 5, stop_on_sigterm=True)
    assert results == {"a": [3.0, 3.0], "b": [1.0, 1.0]}
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is put back


def test_complete_rounds_and_bad_rounds():
    assert complete_rounds({"a": [1, 2, 3], "b": [1, 2]}) == {"a": [1, 2], "b": [1, 2]}
    with pytest.raises(ValueError, match="rounds must be >= 1, got 0"):
        list(interleaved({"a": lambda: 1}, 0))
