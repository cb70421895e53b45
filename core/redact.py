"""Keep credentials out of provenance: manifests, rejects, MLflow params and artifacts, logs and the console.

- :func:`redact_url`: ``scheme://user:password@host/p?token=…&lang=en`` -> ``scheme://***@host/p?token=***&lang=en``.
- :func:`redact_text`: every URL inside free text (error messages, log lines), plus ``password=…``-style pairs,
  connection-string secrets (``AccountKey=…;``, ``SharedAccessSignature=…;``, ``Pwd=…;``), a bare SAS token's
  ``sig=…``, a scheme-less ``user:password@host:port`` (a Ray address) and a scheme-less ``token@host:port`` (a port
  follows: an e-mail address such as ``me@example.com`` has none and is left alone).
- :func:`redact`: any JSON-like value (dicts, lists, strings): strings as :func:`redact_text`, and the value of
  every key that names a credential (``password``, ``api_key``, ``token``, ``storage_options``' ``secret`` …).
- :func:`install_log_redaction`: a logging filter that redacts every record on the root logger's handlers.

Redaction is for what is *recorded or shown*; the code that opens a URL keeps using the original string.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

MASK = "***"

#: Name parts (split at ``_ - .`` and camel case) that make a key or query parameter credential-like.
_SECRET_PARTS = frozenset({
    "token", "secret", "password", "passwd", "pwd", "passphrase", "signature", "sig", "credential",
    "credentials", "auth", "authorization", "apikey", "cookie", "session", "sas", "privatekey", "accesskeyid",
})
#: ``key`` counts alone (``?key=``, s3fs's ``key``) or after one of these parts (``api_key``, ``access_key``),
#: not in ``sort_key``.
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "account", "client", "master", "sas", "signing"})
_VENDOR_PREFIXES = ("x-amz-", "x-goog-", "x-ms-")

#: A URL in free text. The user-info (RFC 3986 allows ``!$&'()*+,;=`` in it) runs to the last ``@`` before the host
#: (``/``, ``?``, ``#`` or whitespace ends the authority); host, port and path end at prose punctuation
#: (``(see http://h/x)``); the query and fragment run to whitespace, a double quote or ``'``: a value may hold
#: ``,`` or ``)`` (``?token=ab,cd``), which :func:`redact_url` then masks whole.
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)"
                  r"(?:(?P<userinfo>[^\s/?#\"<>\[\]{}\\]*)@)?"
                  r"(?P<rest>(?:\[[0-9A-Za-z:.%]*\])?[^\s'\"<>()\[\]{},?#]*)"
                  r"(?P<tail>[?#][^\s'\"<>]*)?")
_PAIR = re.compile(r"(?i)\b([A-Za-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|account[_-]?key"
                   r"|signature|sig|credential)[A-Za-z0-9_.\-]*)"
                   r"(\s*[=:]\s*)(['\"]?)([^\s'\"&,;]+)")
#: Secrets of ``;``-separated connection strings (Azure storage / Service Bus, ODBC, ADO.NET): the whole value up
#: to the next ``;`` (a SAS token's ``&`` parts included), quoted or braced values too; a name at the start or after
#: ``;``, a space, a quote or ``=`` (not a URL's ``?password=``, which :func:`redact_url` handles).
_CONNECTION_SECRET = re.compile(
    r"(?i)(?:^|(?<=[;\s'\"{=]))(AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)(\s*=\s*)"
    r"(\"[^\"]*\"|'[^']*'|\{[^}]*\}|[^;\s'\"]+)")
#: ``user:password@host[:port]`` without a scheme (``ray start --address``-style), at the start of a word; not an
#: image reference's ``name:tag@sha256:…``, nor a corpus input's record ``corpus:NAME@v-HEX`` (corpus-mix and
#: hard-negatives record their sources so; ``corpus show`` printed them as ``***@v-…``).
_BARE_USERINFO = re.compile(r"(?<![^\s'\"(\[{<=,;])(?!corpus:[A-Za-z0-9_.\-]+@v-[0-9a-f]+\b)"
                            r"[^\s:@/'\"<>()\[\]{},;=]+:[^\s/'\"<>()\[\]{},;]+@"
                            r"(?=[A-Za-z0-9\[])(?!sha\d+:)")
#: ``token@host:port`` without a scheme: the user-info of an address (a port follows the host, which an e-mail address
#: never has), at the start of a word; the user-info may itself hold ``@``. Not ``name@sha256:…``.
_BARE_TOKEN = re.compile(r"(?<![^\s'\"(\[{<=,;])[^\s:/'\"<>()\[\]{},;=]+@"
                         r"(?!sha\d+:)(?=(?:[A-Za-z0-9][A-Za-z0-9\-.]*|\[[0-9A-Fa-f:.]+\]):\d{1,5}(?![\w@]|[.:]\w))")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _parts(name: str) -> list[str]:
    return [p for p in re.split(r"[_\-.\s]+", _CAMEL.sub("_", name).lower()) if p]


def is_secret_key(name: str, *, query: bool = False) -> bool:
    """Whether a mapping key (or, with ``query=True``, a URL query parameter) names a credential."""
    lowered = str(name).lower()
    if lowered.startswith(_VENDOR_PREFIXES):
        return True
    parts = _parts(str(name))
    if any(p in _SECRET_PARTS for p in parts) or "".join(parts) in _SECRET_PARTS:
        return True
    for i, part in enumerate(parts):
        if part in ("key", "keys") and (query or len(parts) == 1 or (i and parts[i - 1] in _KEY_QUALIFIERS)):
            return True
    return False


def redact_url(url: str) -> str:
    """``url`` without its user-info (a scheme-less address's ``user:password@host`` or ``token@host:port`` too) and
    with credential-like query parameters masked; other text unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.netloc:  # ``user:password@host:port`` or ``token@host:port``, no scheme (urlsplit sees no netloc)
        masked = _mask_bare_userinfo(url)
        if masked != url:
            return masked
    if not parts.scheme or not (parts.netloc or parts.query):
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_key(k, query=True) for k, _ in pairs):
            query = "&".join(f"{quote(k, safe='-_.~')}={MASK if is_secret_key(k, query=True) else quote(v, safe='-_.~/:,')}"
                             for k, v in pairs)
    fragment = parts.fragment
    if fragment and "=" in fragment:  # OAuth implicit flow: #access_token=...
        fragment = redact_url(f"x://h?{fragment}").split("?", 1)[1]
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_text(text: str) -> str:
    """Every URL in ``text`` through :func:`redact_url`; ``password=…`` / ``token: …`` pairs, connection-string
    secrets and the user-info of a scheme-less ``user:password@host`` or ``token@host:port`` masked."""
    if not text:
        return text
    out = _URL.sub(_redact_url_match, text)
    out = _mask_bare_userinfo(out)
    out = _CONNECTION_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    return _PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{MASK}"
                     if m.group(4) != MASK and is_secret_key(m.group(1)) else m.group(0), out)


def _redact_url_match(match: re.Match) -> str:
    """A URL :data:`_URL` found in text, its user-info masked whole (as text, so no parser can cut it short) and its
    query and fragment through :func:`redact_url`."""
    userinfo = "" if match["userinfo"] is None else f"{MASK}@"
    tail = match["tail"] or ""
    masked = redact_url(f"x://h{tail}") if tail else ""
    if MASK in masked:  # else as written (urlunsplit would drop an empty ``?``)
        tail = masked[len("x://h"):]
    return f"{match['scheme']}{userinfo}{match['rest']}{tail}"


def _mask_bare_userinfo(text: str) -> str:
    """``text`` with the user-info of scheme-less addresses masked: ``user:password@host[:port]`` and
    ``token@host:port``."""
    return _BARE_TOKEN.sub(f"{MASK}@", _BARE_USERINFO.sub(f"{MASK}@", text))


def redact(value: Any) -> Any:
    """A copy of a JSON-like ``value`` with credentials masked (see the module doc)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: (MASK if isinstance(k, str) and is_secret_key(k) and v not in (None, "") else redact(v))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value)
    return value


class RedactingFilter(logging.Filter):
    """Formats each record's message once and stores it redacted (arguments included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: let logging report it as usual
            return True
        cleaned = redact_text(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Add :class:`RedactingFilter` to ``logger`` (default: the root logger) and each of its handlers, once."""
    target = logger or logging.getLogger()
    for holder in (target, *target.handlers):
        if not any(isinstance(f, RedactingFilter) for f in holder.filters):
            holder.addFilter(RedactingFilter())
