"""Tokens of a pre-tokenized line as fast_align reads them: split at spaces and tabs only.

fast_align's ``ConvertWhitespaceDelimitedLine`` ends a token at ``' '`` or ``'\\t'``; every other character (a
no-break space, U+2009, U+3000, ``\\v``, ``\\f``, a ``\\r`` inside the line, ...) is part of a token. ``str.split()``
also splits at those, so its indices would point at another token sequence than fast_align's.
"""

from __future__ import annotations


def split_tokens(text: str) -> list[str]:
    """``text``'s tokens: the runs between spaces and tabs (none for a blank line)."""
    return [token for token in text.replace("\t", " ").split(" ") if token]
