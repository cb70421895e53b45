"""Run a batch function over items, isolating the items it fails on: a failed batch is retried by halves, down to
single items, so one bad input (an over-long sentence, text a tokenizer refuses) rejects itself, with its own error,
and not the rows that merely shared its batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class RowRejected(ValueError):
    """A failure that is the input's own fault (an over-long source): its message is the row's reason as it stands,
    not a backend error."""


def row_reason(error: Exception, failure: str) -> str:
    """A row's reject reason for ``error``: a :class:`RowRejected`'s message, else ``failure: Type: message``."""
    if isinstance(error, RowRejected):
        return str(error)
    return f"{failure}: {type(error).__name__}: {error}"


def run_by_halves(function: Callable[[list[Any]], Sequence[Any]], items: Sequence[Any]
                  ) -> tuple[list[Any], dict[int, Exception]]:
    """(outputs, errors): ``outputs[k]`` is ``function``'s output for ``items[k]`` (``None`` where it failed);
    ``errors`` maps the index of each item that still fails alone to its exception. A batch that raises is split in
    two and each half tried again (a batch of n with one bad item costs about 2 log2 n more calls)."""
    outputs: list[Any] = [None] * len(items)
    errors: dict[int, Exception] = {}

    def attempt(start: int, stop: int) -> None:
        try:
            results = list(function(list(items[start:stop])))
        except Exception as error:  # noqa: BLE001 - a backend's failure is the rows' reason, not the job's end
            if stop - start == 1:
                errors[start] = error
                return
            middle = (start + stop) // 2
            attempt(start, middle)
            attempt(middle, stop)
            return
        outputs[start:stop] = results

    if items:
        attempt(0, len(items))
    return outputs, errors
