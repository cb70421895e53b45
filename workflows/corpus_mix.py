"""Workflow ``corpus-mix``: several published corpus versions -> one corpus version to train on.

Each source is ``{corpus: NAME or NAME@VERSION, rows: N}``: its rows (all, or a seeded sample of ``rows``, kept in
source order) become one shard of the mix (``s<k>-<name>``). Every source must have the same columns (a bitext mix:
``id, src, tgt, src_lang, tgt_lang``); ``train`` shuffles the whole mix, so a batch draws from every source in
proportion to its rows. The sources are resolved to pinned versions first and recorded as the version's
inputs, so the mix of the same sources is the same version and a new source version gives a new mix.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from interlingua.core.config import Config
from interlingua.core.names import SafeName, split_corpus_ref

DESCRIPTION = "mix published corpus versions (with per-source row caps) into one corpus version"


class MixSource(Config):
    corpus: str = Field(min_length=1, description="NAME (its latest version) or NAME@VERSION")
    rows: int | None = Field(None, ge=1, description="a seeded sample of this many rows; None: all rows")


class CorpusMixConfig(Config):
    sources: list[MixSource] = Field(min_length=1, description="the corpora to mix, each {corpus, rows}")
    seed: int = 0
    name: SafeName = Field("corpus-mix", description="corpus name in the store")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")


CONFIG = CorpusMixConfig


def run(config: CorpusMixConfig, *, address: str | None = None) -> dict[str, Any]:
    """``address`` is accepted like every workflow's; mixing reads the store directly, without Ray."""
    from interlingua.core.errors import UserError
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import corpus_root, state_dir
    from interlingua.operators.corpus.store import CorpusLookupError, CorpusStore
    from interlingua.workflows.bitext_source import publish_shards

    stages = Stages("corpus-mix")
    store = CorpusStore(corpus_root(state_dir(config.state_dir)))
    manifests = []
    for k, source in enumerate(config.sources):
        name, version = split_corpus_ref(source.corpus)
        try:
            manifests.append(store.manifest(name, version or "latest"))
        except (CorpusLookupError, ValueError) as err:
            raise UserError(f"sources[{k}].corpus: {err}") from None
    columns = dict(manifests[0].columns)
    for k, manifest in enumerate(manifests[1:], start=1):
        if dict(manifest.columns) != columns:
            raise UserError(f"sources[{k}] {manifest.name}@{manifest.version} has columns {dict(manifest.columns)}; "
                            f"sources[0] {manifests[0].name}@{manifests[0].version} has {columns} (a mix needs the same "
                            "columns and types in every source)")
    pinned = [f"{m.name}@{m.version}" for m in manifests]
    manifest_config = {"sources": [{"corpus": ref, "rows": s.rows} for ref, s in zip(pinned, config.sources)],
                       "seed": config.seed}
    writer = store.open_version(config.name, manifest_config, [f"corpus:{ref}" for ref in pinned])
    shard_ids = [f"s{k}-{m.name}" for k, m in enumerate(manifests)]

    def write(shard_id: str) -> None:
        k = shard_ids.index(shard_id)
        manifest, source = manifests[k], config.sources[k]
        with stages(f"{shard_id} ({manifest.name}@{manifest.version})"):
            table, counters = sample_rows(store.read_table(manifest.name, manifest.version), source.rows, config.seed + k)
            writer.write_shard(shard_id, table, counters=counters)
            print(f"  {table.num_rows} of {manifest.total_rows} rows")

    published = publish_shards(writer, shard_ids, write)
    print(f"corpus-mix: {published.name}@{published.version}: {published.total_rows} rows from {len(pinned)} sources")
    languages = store.languages(published.name, published.version)
    return {"corpus": f"{published.name}@{published.version}", "rows": published.total_rows, "sources": pinned,
            "languages": languages, "seconds": stages.seconds}


def sample_rows(table, rows: int | None, seed: int):
    """``table`` itself, or a seeded sample of ``rows`` of its rows in their original order; with counters."""
    from interlingua.evaluation.pack.pairs import sample_indices

    if rows is None or rows >= table.num_rows:
        return table, {"source_rows": table.num_rows}
    return (table.take(sample_indices(list(range(table.num_rows)), rows, seed)),
            {"source_rows": table.num_rows, "sampled_out": table.num_rows - rows})
