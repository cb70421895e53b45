"""benchmarks/gradcache_memory.py's report: the floor from F0/F/B, the goal line on the ratio at the cached
maximum (not at the equal batch), and the breakdown rows, on made-up trial results."""

from __future__ import annotations

from interlingua.benchmarks.gradcache_memory import report


def _run(step_s: float, growth: float, first_pass: float = 0.0) -> dict:
    phases = {"first_pass": first_pass, "forward": step_s * 0.2, "loss": step_s * 0.01, "backward": step_s * 0.4}
    return {"step_s": step_s, "growth_mib": growth, "phases_s": phases}


def test_goal_line_uses_the_ratio_at_the_cached_maximum(capsys):
    plain_max, cached_max = 10, 640
    # per sample: plain 1.0 s / 10 = 0.1; cached at plain max 0.2 (2.0x); cached at its max 0.15 (1.5x)
    runs = {
        "plain_eq": [_run(1.0, 60.0)] * 3,
        "cached_eq": [_run(2.0, 30.0, 0.5)] * 3,
        "cached_big": [_run(0.15 * cached_max, 50.0, 24.0)] * 3,
        # per row: F0 = 1, F = 1, B = 2 -> floor (1 + 1 + 2) / 3 = 1.33; 1 + F/(F+B) = 1.33
        "phases": [{"f0": 1e-3, "f": 1e-3, "b": 2e-3}] * 3,
    }
    report(runs, plain_max, cached_max, chunk=10, cap=64.0, time_steps=(64, 1), rounds=3, max_ratio=64, elapsed=1.0)
    out = capsys.readouterr().out
    assert "| cached, largest that fits (search cap) | 640 | 50.0 |" in out
    assert "| 1.50 (1.50-1.50) | 64.0 |" in out
    assert "floor (F0+F+B)/(F+B) = 1.33 (1.33-1.33)" in out
    goal = "goal: the cached step at its maximum within 5% of the floor -> 1.50x vs floor 1.33x (+12.5%: not met)"
    assert goal in out  # the ratio at the maximum (1.50), not the equal-batch one (2.00)
    # the breakdown's first pass of the cached maximum: 24 s / 640 pairs = 37.5 ms per pair, 25% of the step
    assert "| first pass (inference mode) | 0.000 (0%) | 50.000 (25%) | 37.500 (25%) | 2.000 |" in out
