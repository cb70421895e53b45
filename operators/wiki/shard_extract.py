"""Extract one dump shard into Parquet files under a work folder (the resumable unit of the EASE pipeline).

Input: a :class:`DumpShard`, :class:`ExtractionSettings` and a work folder URL. Output, under
``<work>/extract/<shard_id>/``:

- ``sentences.parquet``: ``page_id, sentence_index, sentence, starts, ends, targets`` (targets normalized,
  redirects not yet resolved), written in row groups as pages stream by (memory flat in the shard size);
- ``redirects.parquet``: ``source, target`` (normalized titles);
- ``pages.parquet``: ``page_id, title, linked_titles`` of main-namespace articles (every article link target
  on the page, normalized, redirects not yet resolved);
- ``report.json``: counters, dump-level issues (with where a truncated archive broke), rejected pages;
- ``_SUCCESS``: written last; a shard with it is skipped on rerun.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, replace

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from interlingua.operators.wiki.dump_pages import PageStreamResult, SiteInfo, iter_pages
from interlingua.operators.wiki.dump_shards import DumpShard, iter_shard_bytes, read_header_bytes
from interlingua.operators.wiki.page_extract import ExtractionSettings, extract_page
from interlingua.operators.wiki.wikitext_markup import NamespacePrefixes

SENTENCES_SCHEMA = pa.schema(
    [
        ("page_id", pa.int64()),
        ("sentence_index", pa.int32()),
        ("sentence", pa.string()),
        ("starts", pa.list_(pa.int32())),
        ("ends", pa.list_(pa.int32())),
        ("targets", pa.list_(pa.string())),
    ]
)
REDIRECTS_SCHEMA = pa.schema([("source", pa.string()), ("target", pa.string())])
PAGES_SCHEMA = pa.schema([("page_id", pa.int64()), ("title", pa.string()), ("linked_titles", pa.list_(pa.string()))])
ROWS_PER_WRITE = 5_000
MAX_REJECTED_PAGES_LISTED = 1_000


def shard_dir(work_url: str, shard: DumpShard) -> str:
    return f"{work_url.rstrip('/')}/extract/{shard.shard_id}"


def is_extracted(work_url: str, shard: DumpShard) -> bool:
    fs, path = fsspec.core.url_to_fs(f"{shard_dir(work_url, shard)}/_SUCCESS")
    return fs.exists(path)


def extract_shard(shard: DumpShard, settings: ExtractionSettings, work_url: str) -> dict:
    """Extract ``shard`` into its work folder (see module doc); returns the report written to ``report.json``."""
    out = shard_dir(work_url, shard)
    fs, out_path = fsspec.core.url_to_fs(out)
    fs.makedirs(out_path, exist_ok=True)
    stream = PageStreamResult()
    if shard.multistream and shard.header_end > 0:
        header = PageStreamResult()
        for _ in iter_pages(iter([read_header_bytes(shard.url, shard.header_end)]), header):
            pass
        stream.siteinfo = header.siteinfo
    counters: Counter = Counter()
    issues: Counter = Counter()
    rejected_pages: list[dict] = []
    redirects: list[tuple[str, str]] = []
    pages: list[tuple[int, str, list[str]]] = []
    buffer: list[dict] = []
    configured = None if stream.siteinfo is None else _with_site(settings, stream.siteinfo, shard.lang)
    with fs.open(f"{out_path}/sentences.parquet", "wb") as handle, pq.ParquetWriter(handle, SENTENCES_SCHEMA) as writer:
        for page in iter_pages(iter_shard_bytes(shard), stream):
            if configured is None:
                configured = _with_site(settings, stream.siteinfo or SiteInfo(), shard.lang)
            counters["pages"] += 1
            extraction = extract_page(page, shard.lang, configured)
            issues.update(extraction.issues)
            if extraction.rejected is not None:
                counters[f"rejected_{extraction.rejected}"] += 1
                if extraction.rejected != "non_article_namespace" and len(rejected_pages) < MAX_REJECTED_PAGES_LISTED:
                    rejected_pages.append({"page_id": page.page_id, "title": page.title, "reason": extraction.rejected})
                continue
            if extraction.redirect_target is not None:
                counters["redirects"] += 1
                redirects.append((extraction.title, extraction.redirect_target))
                continue
            counters["articles"] += 1
            counters["sentences"] += extraction.sentence_count
            counters["linked_sentences"] += len(extraction.sentences)
            pages.append((page.page_id, extraction.title, list(extraction.linked_titles)))
            for sentence in extraction.sentences:
                counters["links"] += len(sentence.targets)
                buffer.append(
                    {
                        "page_id": sentence.page_id,
                        "sentence_index": sentence.sentence_index,
                        "sentence": sentence.sentence,
                        "starts": sentence.starts,
                        "ends": sentence.ends,
                        "targets": sentence.targets,
                    }
                )
            if len(buffer) >= ROWS_PER_WRITE:
                writer.write_table(pa.Table.from_pylist(buffer, SENTENCES_SCHEMA))
                buffer = []
        if buffer:
            writer.write_table(pa.Table.from_pylist(buffer, SENTENCES_SCHEMA))
    counters["invalid_utf8_bytes"] = stream.invalid_utf8_bytes
    counters["invalid_xml_chars"] = stream.invalid_xml_chars
    counters["malformed_pages"] = stream.malformed_pages
    counters["dump_issues_not_listed"] = stream.issues_not_listed
    _write_table(
        fs,
        f"{out_path}/redirects.parquet",
        pa.table(list(zip(*redirects, strict=True)) or [[], []], schema=REDIRECTS_SCHEMA),
    )
    _write_table(
        fs, f"{out_path}/pages.parquet", pa.table(list(zip(*pages, strict=True)) or [[], [], []], schema=PAGES_SCHEMA)
    )
    report = {
        "shard_id": shard.shard_id,
        "lang": shard.lang,
        "counters": dict(counters),
        "markup_issues": dict(issues),
        "dump_issues": [asdict(issue) for issue in stream.issues],
        "rejected_pages": rejected_pages,
    }
    fs.pipe_file(f"{out_path}/report.json", json.dumps(report, ensure_ascii=False).encode("utf-8"))
    fs.pipe_file(f"{out_path}/_SUCCESS", b"")
    return report


def read_report(work_url: str, shard: DumpShard) -> dict:
    with fsspec.open(f"{shard_dir(work_url, shard)}/report.json", "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _with_site(settings: ExtractionSettings, site: SiteInfo, lang: str) -> ExtractionSettings:
    return replace(
        settings,
        prefixes=NamespacePrefixes.from_siteinfo(site.namespaces, own_language=lang),
        first_letter_case=site.case == "first-letter",
    )


def _write_table(fs, path: str, table: pa.Table) -> None:
    with fs.open(path, "wb") as handle:
        pq.write_table(table, handle)
