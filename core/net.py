"""Whether something listens at a host and port: the fail-fast check before a client that would retry for minutes
(Ray's GCS client, Ray's job API, MLflow's REST client)."""

from __future__ import annotations

import socket


def unreachable(host: str, port: int, timeout: float) -> str | None:
    """None when a TCP connection to ``host:port`` opens within ``timeout`` seconds (it is closed at once); else
    why not, for a message ("Connection refused", "timed out", "Name or service not known")."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as err:
        return "timed out" if isinstance(err, TimeoutError) else (err.strerror or str(err))
