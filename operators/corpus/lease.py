"""Lock files with an owner and a lease, on any fsspec filesystem.

Used to publish a corpus version on stores that cannot rename a folder atomically (object stores,
``memory://``): the writer holding the version's lock copies its staged files and writes the
manifest; everybody else waits. A lock file is created with an exclusive create (``open(path, "xb")``,
a conditional put on object stores that support it), holds ``{"owner", "expires_at"}`` and is
renewed by its holder while it works. A lock whose lease has expired (its holder crashed) is taken
over safely: the taker first creates ``<lock>.takeover-<sha of the stale content>`` exclusively, so
exactly one waiter replaces a given stale lease, whatever the number of waiters.

On a local disk a lock file is rewritten by a file renamed over it, so a symbolic link put in its place is
replaced, never written through (``no_follow.replace_file``); releasing removes the file (a link: the link).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from fsspec import AbstractFileSystem

from interlingua.core.integrity import POINTER_MAX_BYTES
from interlingua.core.no_follow import replace_file
from interlingua.operators.corpus.shards import sha256_bytes


logger = logging.getLogger(__name__)


def expiry(lease: dict, path: str) -> float | None:
    """The lease's ``expires_at`` (seconds since the epoch), or None, with a warning, when it is not a finite number
    (``"never"``, ``Infinity``, ...: a store may be shared, and a lease that cannot expire would hold a version, or
    crash the comparison with a TypeError after it was published). A malformed lease counts as expired."""
    value = lease.get("expires_at")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        logger.warning("%s holds a malformed lease (expires_at %.60r): treated as expired", path, value)
        return None
    return float(value)


class LeaseLost(RuntimeError):
    """The lock now names another owner (our lease expired and somebody took it over)."""


def create_exclusive(fs: AbstractFileSystem, path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` only if nothing is there; False when the path exists."""
    try:
        with fs.open(path, "xb") as handle:
            handle.write(data)
    except FileExistsError:
        return False
    return True


@dataclass
class Lease:
    """A held lock: renew it while working, release it when done."""

    fs: AbstractFileSystem
    path: str
    owner: str
    seconds: float

    def content(self) -> bytes:
        return json.dumps({"owner": self.owner, "expires_at": time.time() + self.seconds}).encode("utf-8")

    def check(self) -> None:
        """Raise LeaseLost unless the lock file still names this owner."""
        if _read(self.fs, self.path).get("owner") != self.owner:
            raise LeaseLost(f"the lock {self.path} was taken over by another writer (this writer's lease expired)")

    def renew(self) -> None:
        self.check()
        replace_file(self.fs, self.path, self.content())

    def release(self) -> None:
        try:
            if _read(self.fs, self.path).get("owner") == self.owner:
                self.fs.rm_file(self.path)
        except FileNotFoundError:
            pass


def acquire(
    fs: AbstractFileSystem,
    path: str,
    owner: str,
    lease_seconds: float,
    timeout: float,
    give_up: Callable[[], bool] = lambda: False,
    poll: float = 0.05,
) -> Lease | None:
    """Take the lock at ``path`` for ``owner``; None when ``give_up()`` turns true while waiting.

    Waits while a live holder has it; takes over an expired lease. Raises TimeoutError after
    ``timeout`` seconds, naming the holder.
    """
    lease = Lease(fs, path, owner, lease_seconds)
    deadline = time.monotonic() + timeout
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    while True:
        if give_up():
            return None
        if create_exclusive(fs, path, lease.content()):
            return lease
        raw = _read_bytes(fs, path)
        holder = _parse(raw)
        expires = expiry(holder, path) if holder else 0.0  # unreadable (torn or not a lease): stale, as before
        if raw and (expires is None or expires < time.time()):
            stale_token = f"{path}.takeover-{sha256_bytes(raw)[:16]}"
            if create_exclusive(fs, stale_token, owner.encode("utf-8")):
                replace_file(fs, path, lease.content())
                return lease
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"waited {timeout:.0f} s for the lock {path} held by {holder.get('owner', 'unknown')}; "
                "it is still held (a writer is publishing) — retry later"
            )
        time.sleep(poll)


def _read_bytes(fs: AbstractFileSystem, path: str) -> bytes:
    """The lock file's bytes (b"" when missing); one larger than 4 KiB (no lease is) is read no further than that:
    it does not parse, so it is a stale lease, taken over, with a warning."""
    try:
        with fs.open(path, "rb") as handle:
            raw = handle.read(POINTER_MAX_BYTES + 1)
    except FileNotFoundError:
        return b""
    if len(raw) > POINTER_MAX_BYTES:
        logger.warning("%s is larger than any lease (%d KiB): treated as a stale one", path, POINTER_MAX_BYTES >> 10)
    return raw


def _parse(raw: bytes) -> dict:
    if len(raw) > POINTER_MAX_BYTES:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}  # being written, or torn: treated as live until it parses
    return value if isinstance(value, dict) else {}


def _read(fs: AbstractFileSystem, path: str) -> dict:
    return _parse(_read_bytes(fs, path))
