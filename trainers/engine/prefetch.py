"""Build the next steps' inputs while the current step computes.

The training loop turns every batch into views (tokenizing its texts) before the step can start. On a GPU that
tokenizing is on the critical path: with it inline, the device waits for the CPU every step. :func:`prefetched`
moves it to one background thread that works ``ahead`` items in front of the consumer. One thread, fed in order,
calls ``transform`` on the items in their order, so a transform with state of its own (a sampler's random
generator) sees the same sequence as inline calls and training stays reproducible. The Rust tokenizers release
the GIL, so the thread runs beside the step's Python work. An exception in ``transform`` is raised to the
consumer at the item that caused it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")


def prefetched(items: Iterable[T], transform: Callable[[T], U], ahead: int = 1) -> Iterator[U]:
    """``transform(item)`` for each item, in order, computed up to ``ahead`` items before they are asked for.

    ``ahead=0`` transforms inline (no thread). The iterator pulls at most ``ahead`` items of ``items`` beyond the
    ones it has yielded, so bound ``items`` (e.g. with ``itertools.islice``) when pulling more is not free."""
    if ahead < 0:
        raise ValueError(f"ahead must be >= 0, got {ahead}")
    if ahead == 0:
        for item in items:
            yield transform(item)
        return
    pending: deque[Future[U]] = deque()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefetch") as pool:
        try:
            for item in items:
                pending.append(pool.submit(transform, item))
                if len(pending) > ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:  # the consumer stopped early: drop what it will not ask for
                future.cancel()
