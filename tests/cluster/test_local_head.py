"""The throw-away Ray cluster's port choices (``interlingua.cluster.local_head``), without starting Ray."""

import pytest

from interlingua.cluster.local_head import worker_port_range


def test_worker_port_range_holds_none_of_the_taken_ports():
    free = [41933, 35551, 42661, 34765, 55513, 41069]  # the ports of the failed start: all above the range
    lo, hi = worker_port_range(free)
    assert (lo, hi) == worker_port_range(free) and hi - lo == 200 and 11000 <= lo and hi <= 32767
    # ports inside the first choice move the range past them, however many windows they fill
    inside = [lo + 5, lo + 200, lo + 201, lo + 450]
    lo2, hi2 = worker_port_range(free + inside)
    assert not any(lo2 <= p <= hi2 for p in free + inside) and 11000 <= lo2 and hi2 <= 32767


def test_worker_port_range_wraps_and_refuses_when_nothing_is_left():
    # 43135 starts the range at the top (32567-32767); 32700 is inside it, so the next range wraps to the bottom
    assert worker_port_range([43135]) == (32567, 32767)
    assert worker_port_range([43135, 32700]) == (11200, 11400)
    with pytest.raises(RuntimeError, match="no range of 201 worker ports"):
        worker_port_range(list(range(11000, 32768, 150)))
