"""What a dump file holds, checked before the extraction starts (``ease-corpus`` runs it before Ray).

:func:`check_dump` reads the file's magic bytes and the start of its decompressed text and refuses, in one line
(:class:`UserError`): a compression the dump reader does not decompress (zstd, 7z, zip, lz4: the reader takes the
bz2, gzip and xz of :data:`dump_shards.DUMP_CODECS`, or uncompressed XML), a file whose name says another
compression than its bytes (the Wikipedia2Vec trainer opens the dump by its name), a multistream index given with a
dump that is not bz2, and a file that is not MediaWiki export XML (a Wikidata JSON or SQL dump given as the dump,
an HTML error page). Damage (a file cut short) is left to the extraction, which reports where it broke.

It also refuses a dump of another wiki than its configured language names: the ``<dbname>`` of its
``<siteinfo>`` (``enwiki``; dumps without one are taken on trust) must be the language's database name, which
Wikidata's sitelinks use (:func:`wikidata.wikidata_site_id`: ``de`` -> ``dewiki``, ``be-tarask`` -> ``be_x_oldwiki``),
so ``lang: de`` on an English dump fails in one line instead of publishing a corpus without pairs.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

import fsspec

from interlingua.core.errors import UserError
from interlingua.core.redact import redact_text
from interlingua.operators.wiki.dump_shards import DumpShard, StreamBreak, dump_codec, iter_shard_bytes
from interlingua.operators.wiki.wikidata import wikidata_site_id
from interlingua.operators.wiki.wikitext_markup import WIKIPEDIA_LANGUAGE_CODES

#: Decompressed bytes read at most: a dump's ``<siteinfo>`` header is a few kB.
HEAD_BYTES = 1 << 20
#: Magic bytes of compressions the dump reader does not decompress.
FOREIGN_CODECS = {b"\x28\xb5\x2f\xfd": "zstd", b"7z\xbc\xaf\x27\x1c": "7z", b"PK\x03\x04": "zip",
                  b"\x04\x22\x4d\x18": "lz4"}
_DBNAME = re.compile(r"<dbname>\s*([^<\s]+)\s*</dbname>")
_NAMED = {"bz2": "bz2", "gzip": "gzip", "xz": "xz", "lzma": "xz", "zstd": "zstd", "zip": "zip", "lz4": "lz4"}


@dataclass(frozen=True)
class DumpHead:
    """The start of a dump: its compression (``None``: uncompressed) and its first decompressed text."""

    codec: str | None
    text: str
    damaged: bool  # decompression broke inside the head

    @property
    def dbname(self) -> str | None:
        """The ``<dbname>`` of the ``<siteinfo>`` header (before the first page), if the head holds one."""
        first_page = self.text.find("<page")
        match = _DBNAME.search(self.text, 0, first_page if first_page >= 0 else len(self.text))
        return match.group(1) if match else None


def check_dump(url: str, lang: str, index_url: str | None = None) -> DumpHead:
    """The head of the dump at ``url``, after the checks of the module doc (:class:`UserError` on the first)."""
    from fsspec.utils import infer_compression

    shown = redact_text(str(url))
    with fsspec.open(url, "rb") as handle:
        magic = handle.read(8)
    foreign = next((name for prefix, name in FOREIGN_CODECS.items() if magic.startswith(prefix)), None)
    if foreign:
        raise UserError(f"dump {shown} is {foreign}-compressed; the dump reader takes bz2 (Wikimedia's "
                        f"pages-articles .xml.bz2), gzip, xz or uncompressed XML (hint: decompress it, or recompress "
                        f"it as bz2)")
    codec = dump_codec(magic)
    named = _NAMED.get(infer_compression(str(url)) or "")
    if named and named != codec:
        raise UserError(f"dump {shown} is named {named}-compressed but holds {codec or 'uncompressed'} data (hint: "
                        f"rename it to what it holds)")
    if index_url and codec != "bz2":
        raise UserError(f"dump {shown} is {codec or 'uncompressed'}, but index_url makes it a multistream dump, which "
                        f"is bz2 (hint: drop index_url, or give the pages-articles-multistream .xml.bz2)")
    text, damaged = read_head(url, lang)
    start = text.lstrip()[:40]
    if not start and not damaged:
        raise UserError(f"dump {shown} holds no text{' once decompressed' if codec else ''}: no page to read (hint: "
                        f"check the file, or that the download finished)")
    if start and not start.startswith("<"):
        raise UserError(f"dump {shown} is not MediaWiki export XML: it starts with {start!r}{_what_it_is(start)}")
    if start and not damaged and "<mediawiki" not in text and "<page" not in text:
        raise UserError(f"dump {shown} is not MediaWiki export XML: no <mediawiki> or <page> element in its first "
                        f"{len(text)} characters (hint: give a pages-articles .xml.bz2 dump)")
    head = DumpHead(codec=codec, text=text, damaged=damaged)
    site = wikidata_site_id(lang)
    if head.dbname is not None and head.dbname != site:
        langs = sorted(code for code in WIKIPEDIA_LANGUAGE_CODES if wikidata_site_id(code) == head.dbname)
        hint = f"lang: {langs[0]}" if langs else "give the pages-articles dump of a Wikipedia"
        raise UserError(f"dump {shown} is a dump of {head.dbname} (its <siteinfo> <dbname>), but its lang {lang!r} "
                        f"names {site} (hint: {hint})")
    return head


def read_head(url: str, lang: str) -> tuple[str, bool]:
    """``(text, damaged)``: the first :data:`HEAD_BYTES` decompressed bytes of the dump, decoded as the page reader
    decodes them, and whether decompression broke before."""
    from interlingua.operators.wiki.dump_pages import decoder_for

    shard = DumpShard(url=url, lang=lang, index=0, start=0, end=None, multistream=False)
    data, damaged = bytearray(), False
    with contextlib.closing(iter_shard_bytes(shard)) as pieces:
        for piece in pieces:
            if isinstance(piece, StreamBreak):
                damaged = True
                break
            data += piece
            if len(data) >= HEAD_BYTES:
                break
    head = bytes(data[:HEAD_BYTES])
    return (decoder_for(head).decode(head) if head else ""), damaged


def _what_it_is(start: str) -> str:
    if start[0] in "[{":
        return " (a Wikidata JSON dump? it goes in wikidata_json; the dump is a pages-articles .xml.bz2)"
    if start.startswith(("--", "/*", "INSERT", "CREATE", "DROP")):
        return " (an SQL dump? page_props go in the dump's page_props_url; the dump is a pages-articles .xml.bz2)"
    return " (hint: give a pages-articles .xml.bz2 dump)"
