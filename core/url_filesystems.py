"""A URL's filesystem, with a protocol fsspec does not know refused in one line that says what it takes.

fsspec's own refusal is ``ValueError: Protocol not known: s4``, with no hint; a protocol it knows whose package is
not installed (``gs://`` without gcsfs) is an ``ImportError`` naming the package, which the CLI prints as one line.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from interlingua.core.errors import UserError

#: The protocols a hint names first: those a store, a model or an input is most often read from.
COMMON_PROTOCOLS = ("file", "memory", "s3", "gs", "az", "hf", "http", "https")

_UNKNOWN = re.compile(r"^Protocol not known: (?P<protocol>.+)$")


def url_filesystem(url: str, **storage_options: Any):
    """``fsspec.core.url_to_fs(url, **storage_options)``: ``(filesystem, path)``; an unknown protocol is a
    :class:`UserError` naming the closest known one."""
    from fsspec.core import url_to_fs

    try:
        return url_to_fs(url, **storage_options)
    except ValueError as error:
        unknown = _UNKNOWN.match(str(error))
        if unknown is None:
            raise
        raise UserError(unknown_protocol_message(url, unknown.group("protocol"))) from None


def unknown_protocol_message(url: str, protocol: str) -> str:
    """One line: ``url``'s ``protocol`` is not one fsspec knows, with the closest known one and the common ones."""
    from fsspec import available_protocols

    from interlingua.core.redact import redact_url

    close = difflib.get_close_matches(protocol, [*COMMON_PROTOCOLS, *available_protocols()], n=1, cutoff=0.5)
    guess = f"did you mean {close[0]}://? " if close else ""
    return (f"unknown protocol {protocol!r} in {redact_url(url)} (hint: {guess}a URL takes a protocol fsspec knows: "
            f"{', '.join(COMMON_PROTOCOLS)}, ...; fsspec.available_protocols() lists them all)")
