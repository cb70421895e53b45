"""Cut a Wikipedia ``pages-articles`` dump into shards and decompress one shard as a stream of bytes.

A *multistream* dump (``…-multistream.xml.bz2``) is a concatenation of independent bz2 streams, each holding
~100 pages; its index file (``…-multistream-index.txt[.bz2]``) has one line ``offset:page_id:title`` per page,
where ``offset`` is the byte offset of the bz2 stream holding the page. Consecutive streams are grouped into
shards of about ``shard_bytes`` compressed bytes; each shard is a byte range ``[start, end)`` that a worker can
seek to and decompress on its own. The first stream (the ``<siteinfo>`` header) and the last one
(``</mediawiki>``) hold no page and sit outside every shard's page content.

A plain dump is one shard: the whole file, bz2, gzip or xz (told by its magic bytes, :data:`DUMP_CODECS`; each
may be a concatenation of streams or members) or uncompressed XML.

Decompression is chunked (memory flat in the dump size) and reports truncation: a stream that ends without
its end-of-stream marker, or corrupt compressed data, yields a :class:`StreamBreak` with the compressed byte
offset where it broke instead of raising. The file is read in 1 MiB chunks and fed to the decompressor in 64 KiB
slices (:data:`FEED_BYTES`), so the offset of corrupt data is that of the slice the decompressor refused (bz2
checks a block's CRC at its end: within a block's compressed size of the damage), and the pages of the slices
before it are kept. A read that fails (any ``OSError`` of the raw read: EIO, ECONNRESET, a timeout …) is no break:
it raises, naming the file and the byte (:func:`~interlingua.core.archives.read_failure`), and the shard fails.
"""

from __future__ import annotations

import bz2
import io
import lzma
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import fsspec

from interlingua.core.archives import DECOMPRESSION_ERRORS, open_compressed, read_failure

BZ2_MAGIC = b"BZh"
#: The compressions a dump may use: name -> (its magic bytes, a new streaming decompressor of one stream / member).
DUMP_CODECS = {
    "bz2": (BZ2_MAGIC, bz2.BZ2Decompressor),
    "gzip": (b"\x1f\x8b", lambda: zlib.decompressobj(wbits=31)),
    "xz": (b"\xfd7zXZ\x00", lzma.LZMADecompressor),
}
READ_CHUNK_BYTES = 1 << 20
#: The decompressor is fed slices of the chunks read: on corrupt data it raises and its output for the whole slice is
#: lost, so a break is reported at most this far before the damage and costs at most this slice's pages.
FEED_BYTES = 64 << 10


@dataclass(frozen=True)
class DumpShard:
    """A byte range of one dump file that decompresses on its own.

    ``end`` is ``None`` for "to the end of the file". ``multistream`` shards hold bare ``<page>`` elements
    (no ``<mediawiki>`` root); their ``<siteinfo>`` header is the bytes ``[0, header_end)`` of the file (the
    first stream). A whole-file shard holds the complete document.
    """

    url: str
    lang: str
    index: int
    start: int
    end: int | None
    multistream: bool
    header_end: int = 0

    @property
    def shard_id(self) -> str:
        return f"{self.lang}-{self.index:05d}"


@dataclass(frozen=True)
class StreamBreak:
    """Where decompression stopped early: compressed byte offset in the file and why."""

    offset: int
    reason: str


def read_multistream_offsets(index_url: str) -> list[int]:
    """Distinct, sorted stream offsets from a multistream index (``offset:page_id:title`` lines).

    Compression is inferred from the file name (``.bz2``), so both index flavours work.
    """
    offsets: set[int] = set()
    with open_compressed(index_url, "rt", encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            line = line.strip()
            if not line:
                continue
            head, _, _ = line.partition(":")
            if not head.isdigit():
                raise ValueError(
                    f"multistream index {index_url!r} line {line_number}: expected 'offset:id:title', got {line[:80]!r}"
                )
            offsets.add(int(head))
    return sorted(offsets)


def plan_shards(url: str, lang: str, index_url: str | None = None, shard_bytes: int = 64 << 20) -> list[DumpShard]:
    """Shards of one dump.

    Inputs: the dump URL (any fsspec URL), its language code, the multistream index URL if any, and the target
    compressed size of a shard. Output: shards in file order. Without an index the whole file is one shard.
    """
    if shard_bytes <= 0:
        raise ValueError(f"shard_bytes must be a positive number of bytes, got {shard_bytes!r}")
    if index_url is None:
        return [DumpShard(url=url, lang=lang, index=0, start=0, end=None, multistream=False)]
    offsets = read_multistream_offsets(index_url)
    if not offsets:
        raise ValueError(f"multistream index {index_url!r} lists no stream offsets")
    shards: list[DumpShard] = []
    group_start = offsets[0]
    for offset in offsets[1:]:
        if offset - group_start >= shard_bytes:
            shards.append(DumpShard(url, lang, len(shards), group_start, offset, True, offsets[0]))
            group_start = offset
    shards.append(DumpShard(url, lang, len(shards), group_start, None, True, offsets[0]))
    return shards


def read_header_bytes(url: str, first_page_offset: int) -> bytes:
    """Decompressed bytes before the first page stream of a multistream dump (the ``<siteinfo>`` header)."""
    with fsspec.open(url, "rb") as handle:
        compressed = handle.read(first_page_offset)
    out = io.BytesIO()
    for piece in _decompress_streams(iter([compressed]), base_offset=0):
        if isinstance(piece, bytes):
            out.write(piece)
    return out.getvalue()


def iter_shard_bytes(shard: DumpShard) -> Iterator[bytes | StreamBreak]:
    """Decompressed bytes of a shard, chunk by chunk; a :class:`StreamBreak` last if the data ended early.

    Files that start with none of :data:`DUMP_CODECS`' magic bytes are passed through (uncompressed XML).
    """
    with fsspec.open(shard.url, "rb") as handle:
        handle.seek(shard.start)
        remaining = None if shard.end is None else shard.end - shard.start

        def compressed_chunks() -> Iterator[bytes]:
            nonlocal remaining
            position = shard.start
            while remaining is None or remaining > 0:
                size = READ_CHUNK_BYTES if remaining is None else min(READ_CHUNK_BYTES, remaining)
                try:
                    chunk = handle.read(size)
                except OSError as error:  # the raw read failed (EIO, a timeout …): no StreamBreak, the shard fails
                    raise read_failure(shard.url, error, position) from error
                if not chunk:
                    return
                position += len(chunk)
                if remaining is not None:
                    remaining -= len(chunk)
                yield chunk

        chunks = compressed_chunks()
        first = next(chunks, b"")
        codec = dump_codec(first)
        if codec is None:
            yield first
            yield from chunks
            return
        yield from _decompress_streams(_prepend(first, chunks), base_offset=shard.start, codec=codec)


def dump_codec(head: bytes) -> str | None:
    """The :data:`DUMP_CODECS` compression whose magic bytes ``head`` starts with, else None."""
    return next((name for name, (magic, _) in DUMP_CODECS.items() if head.startswith(magic)), None)


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _slices(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks cut into pieces of at most :data:`FEED_BYTES`."""
    for chunk in chunks:
        for start in range(0, len(chunk), FEED_BYTES):
            yield chunk[start : start + FEED_BYTES]


def _decompress_streams(
    chunks: Iterator[bytes], base_offset: int, codec: str = "bz2"
) -> Iterator[bytes | StreamBreak]:
    """Decompress concatenated ``codec`` (:data:`DUMP_CODECS`) streams; report (not raise) corrupt or truncated data.

    ``base_offset`` is the file offset of the first compressed byte, so a break reports a file offset.
    """
    new_decompressor = DUMP_CODECS[codec][1]
    decompressor = new_decompressor()
    stream_open = False  # bytes were fed to the current stream and its end marker was not seen yet
    consumed = base_offset
    for chunk in _slices(chunks):
        data = chunk
        while data:
            try:
                out = decompressor.decompress(data)
            except DECOMPRESSION_ERRORS as error:
                yield StreamBreak(offset=consumed, reason=f"corrupt {codec} data: {error}")
                return
            stream_open = True
            if out:
                yield out
            if decompressor.eof:
                consumed += len(data) - len(decompressor.unused_data)
                data = decompressor.unused_data
                decompressor = new_decompressor()
                stream_open = False
            else:
                consumed += len(data)
                data = b""
    if stream_open:
        yield StreamBreak(offset=consumed, reason=f"truncated {codec} stream: data ended before the end-of-stream marker")
