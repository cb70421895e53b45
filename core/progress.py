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
