"""Stage-by-stage progress lines with timings for long workflows."""

from __future__ import annotations

import contextlib
import time


class Stages:
    def __init__(self, workflow: str):
        self.workflow = workflow
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, stage: str):
        print(f"[{self.workflow}] {stage} ...", flush=True)
        t0 = time.perf_counter()
        yield
        self.seconds[stage] = round(time.perf_counter() - t0, 1)
        print(f"[{self.workflow}] {stage} done in {self.seconds[stage]:.1f} s", flush=True)


def progress_bar(total: int | None = None, desc: str = "", unit: str = "it", **kwargs):
    """A tqdm bar on stderr (rate and ETA): redrawn every second on a terminal, one line every 30 s
    when stderr is a file or a pipe (logs, CI), so long steps show progress without flooding a log."""
    import sys

    from tqdm.auto import tqdm

    interactive = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, mininterval=1.0 if interactive else 30.0,
                dynamic_ncols=interactive, leave=True, **kwargs)
