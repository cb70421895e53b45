"""A local port nothing answers on, for the tests of "cannot reach" errors (not a test module)."""

from __future__ import annotations

import atexit
import functools
import socket


@functools.cache
def _held_socket() -> socket.socket:
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    atexit.register(held.close)
    return held


def closed_port() -> int:
    """A local port that refuses connections: bound, never listening, and held so until the tests end. A free port
    closed again could be taken by a process beside the tests (a second suite's Ray or MLflow) and answer there."""
    return _held_socket().getsockname()[1]
