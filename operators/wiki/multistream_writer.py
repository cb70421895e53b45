"""Re-pack a UTF-8 ``pages-articles`` XML (plain or bz2) as a multistream bz2 dump plus its index.

The output has Wikimedia's multistream layout: stream 1 is the header (everything before the first ``<page>``),
then one bz2 stream per ``pages_per_stream`` pages, then a stream with the footer (``</mediawiki>``). The index
has one line ``offset:page_id:title`` per page, ``offset`` being the byte offset of the page's stream. A plain
dump re-packed once can then be read by many workers in parallel (:func:`dump_shards.plan_shards`). An index
name ending in a compression suffix (``.bz2``, like Wikimedia's ``…-multistream-index.txt.bz2``, ``.gz``, ``.xz``,
``.zst`` …) is written so compressed, as its reader (:func:`dump_shards.read_multistream_offsets`, by the name)
decompresses it; a name whose compressor is not installed (``.zst`` without zstandard) is refused before anything is
written, not written uncompressed under that name.
"""

from __future__ import annotations

import bz2
import html
import re
from collections.abc import Iterator

import fsspec
from interlingua.core.archives import require_compressor
from interlingua.operators.wiki.dump_shards import DumpShard, StreamBreak, iter_shard_bytes

_PAGE_OPEN = b"<page>"
_PAGE_CLOSE = b"</page>"
_TITLE = re.compile(rb"<title>(.*?)</title>", re.DOTALL)
_ID = re.compile(rb"<id>(\d+)</id>")


def write_multistream(source_url: str, dump_url: str, index_url: str, pages_per_stream: int = 100) -> int:
    """Write ``dump_url`` (multistream bz2) and ``index_url`` (text) from ``source_url``; returns the page count."""
    if pages_per_stream < 1:
        raise ValueError(f"pages_per_stream must be a positive integer, got {pages_per_stream!r}")
    require_compressor(index_url, "multistream index")
    source = DumpShard(url=source_url, lang="xx", index=0, start=0, end=None, multistream=False)
    header, pages, footer = _split_pages(iter_shard_bytes(source))
    count = 0
    with (
        fsspec.open(dump_url, "wb") as dump,
        fsspec.open(index_url, "wt", encoding="utf-8", compression="infer") as index,
    ):
        offset = dump.write(bz2.compress(next(header)))
        group: list[bytes] = []

        def flush() -> int:
            nonlocal count
            for page in group:
                title_match, id_match = _TITLE.search(page), _ID.search(page)
                title = html.unescape(title_match.group(1).decode("utf-8")) if title_match else ""
                index.write(f"{offset}:{id_match.group(1).decode() if id_match else 0}:{title}\n")
                count += 1
            written = dump.write(bz2.compress(b"".join(group)))
            group.clear()
            return written

        for page in pages:
            group.append(page)
            if len(group) == pages_per_stream:
                offset += flush()
        if group:
            offset += flush()
        dump.write(bz2.compress(footer()))
    return count


def _split_pages(chunks: Iterator[bytes | StreamBreak]):
    """``(header iterator, pages iterator, footer callable)`` over decompressed XML bytes."""
    state = {"buffer": b"", "footer": b""}

    def fill() -> bool:
        for chunk in chunks:
            if isinstance(chunk, StreamBreak):
                raise ValueError(f"cannot re-pack a broken archive: {chunk.reason} at byte {chunk.offset}")
            state["buffer"] += chunk
            return True
        return False

    def header() -> Iterator[bytes]:
        while _PAGE_OPEN not in state["buffer"] and fill():
            pass
        cut = state["buffer"].find(_PAGE_OPEN)
        cut = len(state["buffer"]) if cut < 0 else state["buffer"].rfind(b"\n", 0, cut) + 1
        head, state["buffer"] = state["buffer"][:cut], state["buffer"][cut:]
        yield head

    def pages() -> Iterator[bytes]:
        start = search_from = 0  # the buffer is compacted once per chunk, not once per page (linear time)
        while True:
            buffer = state["buffer"]
            end = buffer.find(_PAGE_CLOSE, search_from)
            if end < 0:
                state["buffer"] = buffer[start:]
                search_from = max(0, len(state["buffer"]) - len(_PAGE_CLOSE))
                start = 0
                if not fill():
                    state["footer"] = state["buffer"]
                    return
                continue
            cut = end + len(_PAGE_CLOSE)
            newline = buffer.find(b"\n", cut, cut + 4096)
            cut = newline + 1 if newline >= 0 else cut
            yield buffer[start:cut]
            start = search_from = cut

    return header(), pages(), lambda: state["footer"]
