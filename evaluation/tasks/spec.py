"""A runnable evaluation task: what the runner iterates over, whatever the data source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from interlingua.models.protocol import TextEncoder


@dataclass(frozen=True)
class TaskSpec:
    """``run(encoder, seed) -> {metric: value}``; ``primary`` names the metric shown in the table. ``check()``, when
    given, parses and validates the task's files (ValueError for a malformed one) without an encoder, so a bad file
    is refused before any model loads. ``release()``, when given, drops what the check and runs read and kept (the
    runner calls it once every model and seed ran the task). ``unsupported``, when given, says why this interlingua
    cannot run the task (a kind a newer one added): a selection skips it with that line, or refuses a pattern that
    selects nothing else."""

    name: str
    kind: str
    language: str
    primary: str
    run: Callable[[TextEncoder, int], dict[str, float]]
    check: Callable[[], object] | None = None
    release: Callable[[], None] | None = None
    unsupported: str | None = None
