"""Publish a bitext table as a versioned corpus: hygiene filters per shard, rejects kept, counts in the manifest."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa

from interlingua.core.redact import redact
from interlingua.operators.bitext.hygiene import BitextHygiene, HygieneSettings
from interlingua.operators.corpus.shards import plan_shards
from interlingua.operators.corpus.store import CorpusStore

BITEXT_COLUMNS = ("id", "src", "tgt", "src_lang", "tgt_lang")


def publish_bitext_corpus(store: CorpusStore, name: str, table: pa.Table, *, src_lang: str, tgt_lang: str,
                          inputs: list[str], hygiene: HygieneSettings, rows_per_shard: int = 4096,
                          input_fingerprints: dict | None = None):
    """Write ``table`` (columns id, src, tgt) as corpus ``name``; returns the published manifest.
    ``input_fingerprints``: those of the files ``table`` was read from (they enter the version id).

    Shards are planned over the input rows, so a rerun after a crash skips completed shards. Each
    shard runs the hygiene filters; removed pairs go to the rejects table with their reason (a table whose every pair
    is removed publishes its shards empty, the pairs as rejects). Duplicates are detected within a shard. An empty
    ``table`` is refused (``UserError``): there is nothing to build.
    """
    missing = {"id", "src", "tgt"} - set(table.column_names)
    if missing:
        raise ValueError(f"bitext table lacks columns {sorted(missing)} (has {table.column_names})")
    if table.num_rows == 0:  # as bitext-corpus refuses an input with no rows (a store version holds >= 1 shard)
        from interlingua.core.errors import UserError

        raise UserError(f"no bitext rows to publish as corpus {name} from {', '.join(redact(list(inputs)))}: nothing "
                        "to build (hint: check the file)")
    config = {"src_lang": src_lang, "tgt_lang": tgt_lang, "rows_per_shard": rows_per_shard,
              "hygiene": hygiene.__dict__}
    writer = store.open_version(name, redact(config), redact(list(inputs)),  # provenance without credentials
                                input_fingerprints=input_fingerprints)
    shards = {shard.id: shard for shard in plan_shards(table.num_rows, rows_per_shard)}
    return publish_shards(writer, list(shards), lambda shard_id: write_bitext_shard(
        writer, shard_id, table.slice(shards[shard_id].start, shards[shard_id].num_rows).to_pydict(),
        src_lang=src_lang, tgt_lang=tgt_lang, hygiene=hygiene))


def publish_shards(writer, shard_ids: list[str], write_shard):
    """Call ``write_shard(shard_id)`` for each shard the version does not have complete yet (a rerun after a crash
    resumes), then publish; a version published before is returned as it is."""
    if writer.published:
        return writer.manifest
    for shard_id in shard_ids:
        if not writer.is_complete(shard_id):
            write_shard(shard_id)
    return writer.publish(expected_shards=list(shard_ids))


def published_summary(workflow: str, manifest, languages: list[str], *, rejects_as: str = "rejected",
                      note: str = "", **extra) -> dict:
    """Print a bitext source's one line (``workflow: name@version: N pairs, M rejected`` and ``note``) and return
    the stage outputs a recipe reads: ``corpus``, ``rows``, ``rejects``, ``languages`` and ``extra``."""
    print(f"{workflow}: {manifest.name}@{manifest.version}: {manifest.total_rows} pairs, "
          f"{manifest.total_rejects} {rejects_as}{note}")
    return {"corpus": f"{manifest.name}@{manifest.version}", "rows": manifest.total_rows,
            "rejects": manifest.total_rejects, "languages": languages, **extra}


def write_bitext_shard(writer, shard_id: str, part: dict, *, src_lang: str, tgt_lang: str,
                       hygiene: HygieneSettings, extra_rejects: list[dict] | None = None,
                       counters: dict[str, int] | None = None) -> int:
    """Run the hygiene filters over ``part`` (columns id, src, tgt) and write the kept pairs as shard
    ``shard_id`` (columns :data:`BITEXT_COLUMNS`), the removed ones as its rejects; returns the rows kept."""
    filt = BitextHygiene(hygiene, f"{src_lang}-{tgt_lang}")
    rows = _kept(filt, part)
    data = pa.table({  # typed: a shard whose every pair is rejected has the other shards' columns
        "id": pa.array([str(part["id"][i]) for i in rows], pa.string()),
        "src": pa.array([part["src"][i] for i in rows], pa.string()),
        "tgt": pa.array([part["tgt"][i] for i in rows], pa.string()),
        "src_lang": pa.array([src_lang] * len(rows), pa.string()),
        "tgt_lang": pa.array([tgt_lang] * len(rows), pa.string()),
    })
    rejects = list(extra_rejects or []) + [
        {"operator": "bitext_hygiene", "reason": r["reason"],
         "row": {"id": str(part["id"][r["index"]]), "src": r["src"], "tgt": r["tgt"]}} for r in filt.rejects]
    writer.write_shard(shard_id, data, rejects=redact(rejects) or None,
                       counters={**(counters or {}), **{f"hygiene.{k}": v for k, v in Counter(filt.counts).items()}})
    return len(rows)


def _kept(filt: BitextHygiene, part: dict) -> list[int]:
    """Row numbers of the pairs the filter keeps (it yields each kept pair as soon as it reads it)."""
    current = [-1]

    def pairs():
        for i, (src, tgt) in enumerate(zip(part["src"], part["tgt"])):
            current[0] = i
            yield src or "", tgt or ""

    return [current[0] for _ in filt.filter(pairs())]
