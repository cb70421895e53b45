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

#: A link of a chained URL (``simplecache::s3://b/k``) that fsspec reads as a protocol though it has no ``://``.
_BARE_PROTOCOL = re.compile(r"[a-z]+")


def url_filesystem(url: str, **storage_options: Any):
    """``fsspec.core.url_to_fs(url, **storage_options)``: ``(filesystem, path)``; an unknown protocol is a
    :class:`UserError` naming the closest known one (:func:`require_known_protocol`)."""
    from fsspec.core import url_to_fs

    require_known_protocol(url)
    return url_to_fs(url, **storage_options)


def require_known_protocol(url: str) -> None:
    """:class:`UserError` (:func:`unknown_protocol_message`) when ``url``, or a link of a chained one, names a protocol
    fsspec does not know. Nothing is imported, built or contacted: a command checks the URLs it is given with it
    before any work (a known protocol whose package is missing is left to the open, which names the package)."""
    import fsspec

    known = {*fsspec.available_protocols(), *fsspec.registry}
    for protocol in url_protocols(str(url), known):
        if protocol not in known:
            raise UserError(unknown_protocol_message(str(url), protocol))


def url_protocols(url: str, known: set[str]) -> list[str]:
    """The protocols ``url`` names, as fsspec reads them: each link's of a chained URL (a link that is a ``known``
    protocol or a lower-case word is one), none for a local path."""
    from fsspec.core import split_protocol

    links = url.split("::")
    protocols = []
    for link in links:
        if len(links) > 1 and (link in known or _BARE_PROTOCOL.fullmatch(link)):
            protocols.append(link)
        elif (protocol := split_protocol(link)[0]) is not None:
            protocols.append(protocol)
    return protocols


def unknown_protocol_message(url: str, protocol: str) -> str:
    """One line: ``url``'s ``protocol`` is not one fsspec knows, with the closest known one and the common ones."""
    from fsspec import available_protocols

    from interlingua.core.redact import redact_url

    close = difflib.get_close_matches(protocol, [*COMMON_PROTOCOLS, *available_protocols()], n=1, cutoff=0.5)
    guess = f"did you mean {close[0]}://? " if close else ""
    return (f"unknown protocol {protocol!r} in {redact_url(url)} (hint: {guess}a URL takes a protocol fsspec knows: "
            f"{', '.join(COMMON_PROTOCOLS)}, ...; fsspec.available_protocols() lists them all)")
