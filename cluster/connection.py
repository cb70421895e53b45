"""Which Ray cluster, and how to authenticate to it: the address and the token, resolved as Ray does.

- Address: ``--address``, else ``$RAY_API_SERVER_ADDRESS``, else ``$RAY_ADDRESS`` (Ray's job CLI order),
  else ``http://127.0.0.1:8265``. An explicit ``--address`` wins over the environment (Ray's SDK would
  let the environment override it). It is the dashboard's job API: ``http(s)://HOST:PORT`` or a bare ``HOST:PORT``
  (or a Ray Client ``ray://`` address, which the SDK asks for it); another scheme (a typo such as ``htp://``) is
  refused before anything is contacted, a bare address that answers other than in HTTP (a GCS address) once it has
  answered. Before Ray is asked anything, the head's port is probed with a short timeout, so an unreachable cluster
  is one line after seconds, not a minute of retries.
- Token: Ray 2.60's job SDK sends ``Authorization: Bearer <token>`` only when token mode is on
  (``RAY_AUTH_MODE=token``). As ``ray start`` does, token mode is turned on when ``RAY_AUTH_MODE`` is unset
  and Ray's token loader finds a token (``$RAY_AUTH_TOKEN``, the file ``$RAY_AUTH_TOKEN_PATH``, or
  ``~/.ray/auth_token``); ``RAY_AUTH_MODE=disabled`` is respected. The token itself is never read by us,
  printed or logged: only where it comes from is named in messages.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from interlingua.core.errors import ServiceUnavailable, UserError
from interlingua.core.net import unreachable
from interlingua.cluster.shared_storage import redact

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
#: What the job API takes, as a refused scheme's message lists it: the dashboard's URL, or a Ray Client address Ray's
#: job SDK looks it up through (the schemes: :data:`~interlingua.core.runtime.RAY_ADDRESS_SCHEMES`).
JOB_API_FORMS = ("http:// or https:// (the dashboard, e.g. http://HEAD:8265) or ray:// (Ray Client, e.g. "
                 "ray://HEAD:10001)")
ADDRESS_ENV = ("RAY_API_SERVER_ADDRESS", "RAY_ADDRESS")
PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ClusterAddress:
    url: str  # what the job SDK is given (http(s)://host:port, or a Ray address it resolves)
    source: str  # "--address", "$RAY_ADDRESS", ... for messages

    @property
    def shown(self) -> str:
        return redact(self.url)


def resolve_address(explicit: str | None) -> ClusterAddress:
    if explicit:
        return _checked(explicit, "--address")
    for name in ADDRESS_ENV:
        value = os.environ.get(name)
        if value:
            return _checked(value, f"${name}")
    return ClusterAddress(DEFAULT_ADDRESS, "the default")


def _checked(text: str, source: str) -> ClusterAddress:
    """``text`` (from ``source``) as a cluster address; a :class:`UserError` for what the string alone shows is not a
    job API: ``auto`` / ``local`` (a Ray to find or start) or a scheme no Ray address has
    (:func:`~interlingua.core.runtime.ray_address_scheme`, which `run` checks its address with too)."""
    from interlingua.core.runtime import ray_address_scheme, scheme_in_lower_case

    address = ClusterAddress(text.strip().rstrip("/"), source)
    if address.url in ("auto", "local"):
        raise UserError(f"{source} {address.url}: a job is submitted to a running cluster's dashboard; "
                        "give its URL, e.g. --address http://HEAD:8265")
    ray_address_scheme(address.url, source=source, takes="the job API", forms=JOB_API_FORMS)
    return ClusterAddress(scheme_in_lower_case(address.url), source)  # Ray's SDK takes http://, not HTTP://


def probe(address: ClusterAddress, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Open (and close) a TCP connection to the address's host and port, or raise a :class:`ServiceUnavailable`
    (a :class:`UserError` for an address without a host or with an invalid port)."""
    parts = urlsplit(address.url if "://" in address.url else f"tcp://{address.url}")
    host = parts.hostname
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme, 8265)
    except ValueError:
        raise UserError(f"cluster address {address.shown} ({address.source}) has an invalid port; "
                        "expected e.g. http://HEAD:8265") from None
    if not host:
        raise UserError(f"cluster address {address.shown} ({address.source}) has no host; expected e.g. http://HEAD:8265")
    reason = unreachable(host, port, timeout)
    if reason:
        # a ray:// address is the Ray Client server's (the job SDK asks it for the dashboard), not the dashboard's
        client = parts.scheme == "ray"
        server = "Ray Client server port" if client else "dashboard port"
        other = " Or set --address or RAY_ADDRESS to the dashboard's URL, http://HEAD:8265" if client else ""
        raise ServiceUnavailable(f"cannot reach the Ray cluster at {address.shown} ({address.source}): {reason}; "
                                 f"is the head running and its {server} ({port}) open to this machine?{other}")


def sdk_address(address: ClusterAddress, timeout: float = PROBE_TIMEOUT_S) -> str:
    """The address to give Ray's job SDK: a URL as given; a bare ``HOST:PORT`` is the dashboard, ``http://HOST:PORT``
    (given bare, the SDK would take it for a GCS address and look the dashboard up through it: a minute and a half of
    retries against an HTTP server). A bare address that answers, but not in HTTP, is a :class:`UserError` with the
    hint: a GCS address (``HOST:6379``, what ``run --address`` takes) answers so, and the job API is the dashboard's
    (its bytes were printed as ``BadStatusLine``)."""
    if "://" in address.url:
        return address.url
    url = f"http://{address.url}"
    if not _answers_http(url, timeout):
        raise UserError(f"cluster address {address.shown} ({address.source}) answers, but not in HTTP: not the "
                        "dashboard's job API that `interlingua jobs` and `submit` talk to (a GCS address, HOST:6379, is "
                        "what `run --address` takes); give the dashboard's URL, e.g. http://HEAD:8265")
    return url


def _answers_http(url: str, timeout: float) -> bool:
    """False when the server at ``url`` answers a request with bytes that are not HTTP; True for an HTTP answer (401,
    403, 404 are answers too) and for none in time or a connection cut (the job SDK's requests say so)."""
    import http.client
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/api/version", timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):  # before HTTPException: a connection closed unanswered is both
        return True
    except http.client.HTTPException:
        return False


def token_source() -> str | None:
    """Where Ray would take the token from (a name, never the token), or None; a ``RAY_AUTH_TOKEN_PATH`` that names no
    file (and no ``RAY_AUTH_TOKEN`` before it) is a :class:`UserError`."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "$RAY_AUTH_TOKEN"
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if path:
        if not Path(path).expanduser().is_file():
            raise UserError(f"RAY_AUTH_TOKEN_PATH names {path}, which is not a file (hint - point it at the file holding "
                            "the cluster's token, or unset it to use RAY_AUTH_TOKEN or ~/.ray/auth_token)")
        return f"$RAY_AUTH_TOKEN_PATH ({path})"
    default = Path.home() / ".ray" / "auth_token"
    return str(default) if default.is_file() else None


def enable_token_auth() -> str | None:
    """Turn Ray's token mode on for this process when a token is available and ``RAY_AUTH_MODE`` is
    unset (as ``ray start`` does); returns the token's source for messages, or None (no token sent)."""
    mode = os.environ.get("RAY_AUTH_MODE")
    if mode is not None and mode.lower() != "token":
        return None
    source = token_source()
    if source is None:
        if mode is not None:
            raise UserError("RAY_AUTH_MODE=token but no Ray token was found: set RAY_AUTH_TOKEN, or "
                            "RAY_AUTH_TOKEN_PATH to a file holding the cluster's token (default ~/.ray/auth_token)")
        return None
    from ray._private.authentication.authentication_token_setup import _enable_token_auth
    from ray._raylet import AuthenticationTokenLoader

    if mode is None:
        _enable_token_auth()
    AuthenticationTokenLoader.instance().reset_cache()
    return source


@contextmanager
def without_address_env():
    """Ray's job SDK lets ``$RAY_ADDRESS`` override an explicit address; hide it while the client is built."""
    saved = {name: os.environ.pop(name) for name in ADDRESS_ENV if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)
