"""``prefetched``: the same values in the same order as inline calls, computed ahead in one thread."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from interlingua.trainers.engine.prefetch import prefetched


@pytest.mark.parametrize("ahead", [0, 1, 3])
def test_values_and_order_equal_inline_calls_even_for_a_stateful_transform(ahead):
    import random

    def stateful(seed):
        rng = random.Random(seed)
        return lambda x: (x, rng.random())  # the sequence depends on the call order

    expected = list(map(stateful(7), range(20)))
    assert list(prefetched(range(20), stateful(7), ahead=ahead)) == expected


def test_transform_runs_in_a_background_thread_ahead_of_the_consumer():
    threads, done = [], []

    def slow(x):
        threads.append(threading.current_thread().name)
        time.sleep(0.05)
        done.append(x)
        return x

    values = prefetched(range(3), slow, ahead=1)
    assert next(values) == 0
    time.sleep(0.2)  # while the consumer "computes", item 1 is transformed
    assert 1 in done
    assert list(values) == [1, 2]
    assert all(name.startswith("prefetch") for name in threads)


def test_pulls_at_most_ahead_items_beyond_those_yielded():
    pulled = []
    source = (pulled.append(i) or i for i in itertools.count())
    values = prefetched(source, lambda x: x, ahead=2)
    assert [next(values) for _ in range(3)] == [0, 1, 2]
    assert len(pulled) <= 3 + 2
    values.close()


def test_an_error_reaches_the_consumer_at_the_item_that_raised():
    def fails_on_two(x):
        if x == 2:
            raise ValueError("bad batch 2")
        return x

    values = prefetched(range(5), fails_on_two, ahead=2)
    assert [next(values), next(values)] == [0, 1]
    with pytest.raises(ValueError, match="bad batch 2"):
        next(values)


def test_negative_ahead_is_refused():
    with pytest.raises(ValueError, match="ahead"):
        list(prefetched([1], lambda x: x, ahead=-1))
