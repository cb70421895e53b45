"""Ray Data operator: extract dump shards (one row = one shard) into the work folder, in parallel.

Input batch columns (see :func:`shards_to_rows`): ``url, lang, index, start, end, multistream, header_end``; ``end`` is
−1 for "to the end of the file". Output batch: ``shard_id`` and ``report`` (the shard's ``report.json`` as a
string); a shard that already has ``_SUCCESS`` in the work folder is not redone (resume).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
from interlingua.operators.base import Batch, Operator
from interlingua.operators.wiki.dump_shards import DumpShard
from interlingua.operators.wiki.page_extract import ExtractionSettings
from interlingua.operators.wiki.shard_extract import extract_shard, is_extracted, read_report


def shards_to_rows(shards: list[DumpShard]) -> list[dict[str, Any]]:
    """Rows for ``ray.data.from_items``: one per shard."""
    return [
        {
            "url": s.url,
            "lang": s.lang,
            "index": s.index,
            "start": s.start,
            "end": -1 if s.end is None else s.end,
            "multistream": s.multistream,
            "header_end": s.header_end,
        }
        for s in shards
    ]


def shard_from_row(row: dict[str, Any]) -> DumpShard:
    end = int(row["end"])
    return DumpShard(
        url=str(row["url"]),
        lang=str(row["lang"]),
        index=int(row["index"]),
        start=int(row["start"]),
        end=None if end < 0 else end,
        multistream=bool(row["multistream"]),
        header_end=int(row["header_end"]),
    )


class ExtractShards(Operator):
    """Wikitext → sentences with links for each shard of a batch (pure CPU, one core per actor)."""

    num_cpus: ClassVar[float] = 1.0
    concurrency: ClassVar[int | tuple[int, int]] = (1, 2)
    batch_size: ClassVar[int | None] = 1
    name: ClassVar[str] = "wiki_extract"

    def __init__(self, work_url: str, settings: dict[str, Any] | None = None) -> None:
        self.work_url = work_url
        self.settings = ExtractionSettings(**(settings or {}))

    def __call__(self, batch: Batch) -> Batch:
        columns = list(batch)
        count = len(batch[columns[0]]) if columns else 0
        shard_ids: list[str] = []
        reports: list[str] = []
        for i in range(count):
            shard = shard_from_row({c: batch[c][i] for c in columns})
            if is_extracted(self.work_url, shard):
                report = read_report(self.work_url, shard)
                report["resumed"] = True
            else:
                report = extract_shard(shard, self.settings, self.work_url)
            shard_ids.append(shard.shard_id)
            reports.append(json.dumps(report, ensure_ascii=False))
        return {"shard_id": np.array(shard_ids, dtype=object), "report": np.array(reports, dtype=object)}
