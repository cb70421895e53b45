"""Whether a process id names a live process on this machine (the one copy of the ``os.kill(pid, 0)`` rule)."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine: ``os.kill(pid, 0)`` succeeds, or is refused with
    PermissionError (another user's live process); ProcessLookupError means it is gone.

    Raises ValueError for a ``pid`` that names no single process: 0 or below (``os.kill(0 or -1, 0)`` asks about a
    process group or every process) and a number no process id can be (``os.kill`` raises OverflowError). Callers
    decide what such a pid means (gc: no writer; a corpus lease: malformed, treated as expired). Other OSErrors
    propagate."""
    if pid <= 0:
        raise ValueError(f"{pid} is not a process id (0 or below names a process group or every process)")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OverflowError:
        raise ValueError(f"{pid} is not a process id (too large)") from None
    return True
