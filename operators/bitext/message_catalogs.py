"""GNU gettext message catalogs (``.mo`` files) as bitext: English ``msgid`` -> translated ``msgstr``.

Every Debian system carries hundreds of human translations of its programs' messages under
``/usr/share/locale/<lang>/LC_MESSAGES/<domain>.mo``. :func:`read_mo` parses the binary format (GNU gettext
manual, "The Format of GNU MO Files": a magic number that fixes the byte order, a revision, the number of
strings and the offsets of two tables of (length, offset) descriptors) without executing or unpickling
anything. :func:`catalog_pairs` turns a catalog's entries into sentence pairs and says, per entry, why it was
left out (untranslated, identical, too short or long, mostly placeholders, ...).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

MO_MAGIC = 0x950412DE
#: gettext separates a message context from its msgid with EOT and the forms of a plural entry with NUL.
CONTEXT_SEPARATOR = "\x04"
PLURAL_SEPARATOR = "\x00"
# printf (%s, %1$d, %-10.3lf, %%), Python (%(name)s, {0}, {name!r:>4}) and shell-style ($VAR, ${VAR}) placeholders.
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-+ #0-9.$*]*(?:hh|h|ll|l|L|q|j|z|t)?[a-zA-Z%]|\{[^{}]*\}|\$\{?\w+\}?")
_CHARSET = re.compile(r"charset=([A-Za-z0-9_.:-]+)", re.IGNORECASE)


class CatalogFormatError(ValueError):
    """The bytes are not a readable GNU ``.mo`` catalog."""


@dataclass(frozen=True)
class CatalogEntry:
    """One message: ``context`` (or ""), the English ``msgid`` (and ``msgid_plural``), and its translations
    (one per plural form; a single one otherwise)."""

    context: str
    msgid: str
    msgid_plural: str
    translations: tuple[str, ...]


@dataclass(frozen=True)
class CatalogPairSettings:
    min_chars: int = 30
    max_chars: int = 300
    #: share of the English text's characters, placeholders removed, that are letters
    min_letter_share: float = 0.6

    def __post_init__(self) -> None:
        if not 1 <= self.min_chars <= self.max_chars:
            raise ValueError(f"need 1 <= min_chars <= max_chars, got {self.min_chars} and {self.max_chars}")
        if not 0.0 <= self.min_letter_share <= 1.0:
            raise ValueError(f"min_letter_share must be in [0, 1], got {self.min_letter_share}")


def read_mo(data: bytes) -> list[CatalogEntry]:
    """The entries of a ``.mo`` file in file order (the header entry, msgid "", included); strings are decoded
    with the charset the header declares (UTF-8 when it declares none)."""
    if len(data) < 20:
        raise CatalogFormatError(f"{len(data)} bytes is too short for a .mo header")
    for order in ("<", ">"):
        if struct.unpack(order + "I", data[:4])[0] == MO_MAGIC:
            break
    else:
        raise CatalogFormatError(f"bad magic number {data[:4].hex()} (not a GNU .mo file)")
    revision, count, originals, translations = struct.unpack(order + "4I", data[4:20])
    if revision >> 16 not in (0, 1):
        raise CatalogFormatError(f"unsupported .mo major revision {revision >> 16}")
    raw = [(_string(data, order, originals, i), _string(data, order, translations, i)) for i in range(count)]
    charset = "utf-8"
    for msgid, msgstr in raw:
        if msgid == b"":
            match = _CHARSET.search(msgstr.decode("ascii", "replace"))
            if match and match.group(1).upper() != "CHARSET":
                charset = match.group(1)
    try:
        b"".decode(charset)
    except LookupError:
        raise CatalogFormatError(f"the header declares an unknown charset {charset!r}") from None
    return [_entry(msgid.decode(charset, "replace"), msgstr.decode(charset, "replace")) for msgid, msgstr in raw]


def _string(data: bytes, order: str, table: int, index: int) -> bytes:
    at = table + 8 * index
    if at + 8 > len(data):
        raise CatalogFormatError(f"string descriptor {index} lies beyond the end of the file")
    length, offset = struct.unpack(order + "2I", data[at:at + 8])
    if offset + length > len(data):
        raise CatalogFormatError(f"string {index} ({length} bytes at {offset}) lies beyond the end of the file")
    return data[offset:offset + length]


def _entry(msgid: str, msgstr: str) -> CatalogEntry:
    context, _, msgid = msgid.rpartition(CONTEXT_SEPARATOR)
    singular, _, plural = msgid.partition(PLURAL_SEPARATOR)
    return CatalogEntry(context, singular, plural, tuple(msgstr.split(PLURAL_SEPARATOR)))


def normalize_message(text: str) -> str:
    """Whitespace collapsed to single spaces (help texts are often wrapped over several lines)."""
    return " ".join(text.split())


def catalog_pairs(entries: list[CatalogEntry], settings: CatalogPairSettings = CatalogPairSettings()
                  ) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """(kept (english, translation) pairs, rejected (english, translation, reason)) in entry order.

    A plural entry gives its singular msgid with the first form. Reasons: ``header``, ``untranslated``,
    ``identical`` (the translation is the English), ``too_short`` / ``too_long`` (English characters),
    ``placeholders`` (letters are less than ``min_letter_share`` of the English once placeholders are removed).
    """
    kept: list[tuple[str, str]] = []
    rejected: list[tuple[str, str, str]] = []
    for entry in entries:
        english = normalize_message(entry.msgid)
        translation = normalize_message(entry.translations[0]) if entry.translations else ""
        reason = _reason(english, translation, settings)
        if reason:
            rejected.append((english, translation, reason))
        else:
            kept.append((english, translation))
    return kept, rejected


def _reason(english: str, translation: str, settings: CatalogPairSettings) -> str | None:
    if not english:
        return "header"
    if not translation:
        return "untranslated"
    if translation == english:
        return "identical"
    if len(english) < settings.min_chars:
        return "too_short"
    if len(english) > settings.max_chars:
        return "too_long"
    plain = _PLACEHOLDER.sub("", english)
    if sum(c.isalpha() for c in plain) < settings.min_letter_share * len(english):
        return "placeholders"
    return None
