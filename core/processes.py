"""Run a function in a fresh single-threaded process, for native code whose multithreaded result is not
deterministic (OpenMP reductions in another order give other floating-point sums).

The thread count of an OpenMP runtime is fixed when the runtime loads, and the driver has usually loaded one
already (torch's), so setting ``OMP_NUM_THREADS`` in this process is not enough: the function runs in a new
``spawn`` process started with ``OMP_NUM_THREADS=1`` (and the MKL/OpenBLAS equivalents). Arguments and result
travel between our own two processes; exceptions are re-raised here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def call_single_threaded(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` in a new process with one OpenMP/BLAS thread; its result or its exception."""
    saved = {key: os.environ.get(key) for key in SINGLE_THREAD_ENV}
    os.environ.update(SINGLE_THREAD_ENV)
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
            future = pool.submit(function, *args, **kwargs)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return future.result()
