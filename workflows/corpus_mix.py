"""Workflow ``corpus-mix``: several published corpus versions -> one corpus version to train on.

Each source is ``{corpus: NAME or NAME@VERSION, rows: N}``: its rows (all, or a seeded sample of ``rows``, kept in
source order) become one shard of the mix (``s<k>-<name>``). Every source must have the same columns (a bitext mix:
``id, src, tgt, src_lang, tgt_lang``); ``train`` shuffles the whole mix, so a batch draws from every source in
proportion to its rows. Ids stay unique: when an ``id`` occurs in two sources, every row's id becomes
``s<k>:<id>`` (:data:`ID_FORMAT`, k the source's index; the version's config says so with ``ids``), since ``train``
holds rows out by id. The sources are resolved to pinned versions first and recorded as the version's
inputs, so the mix of the same sources is the same version and a new source version gives a new mix.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, model_validator

from interlingua.core.config import Config
from interlingua.core.names import SafeName, split_corpus_ref

#: A list type's item field (``list<item: …>``, ``large_list<element: …>``): its name is not part of the type.
_LIST_ITEM = re.compile(r"\b((?:large_|fixed_size_)?list)<(?:item|element): ")
#: A row's id in a mix whose sources' ids repeat: the source's index and its id in the source (``s1:42``).
ID_FORMAT = "s{k}:{id}"
DESCRIPTION = "mix published corpus versions (with per-source row caps) into one corpus version"


class MixSource(Config):
    corpus: str = Field(min_length=1, description="NAME (its latest version) or NAME@VERSION")
    rows: int | None = Field(None, ge=1, description="a seeded sample of this many rows; None: all rows")


class CorpusMixConfig(Config):
    sources: list[MixSource] = Field(min_length=1, description="the corpora to mix, each {corpus, rows}")
    seed: int = 0
    name: SafeName = Field("corpus-mix", description="corpus name in the store")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")

    @model_validator(mode="after")
    def _each_source_once(self) -> "CorpusMixConfig":
        refusal = repeated_source([source.corpus.strip() for source in self.sources])
        if refusal:
            raise ValueError(refusal)
        return self


def repeated_source(refs: list[str]) -> str:
    """One line refusing the first source listed twice in ``refs`` (NAME or NAME@VERSION), ``""`` if none is."""
    for k, ref in enumerate(refs):
        if ref in refs[:k]:
            return (f"sources[{k}] {ref} is also sources[{refs.index(ref)}]: its rows would be in the mix twice (hint: "
                    "list each corpus version once; rows sets how many of its rows the mix takes)")
    return ""


CONFIG = CorpusMixConfig


def run(config: CorpusMixConfig, *, address: str | None = None) -> dict[str, Any]:
    """``address`` is accepted like every workflow's; mixing reads the store directly, without Ray."""
    import pyarrow as pa

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
    for k, manifest in enumerate(manifests[1:], start=1):
        difference = column_differences(manifest.columns, manifests[0].columns)
        if difference:
            raise UserError(f"sources[{k}] {manifest.name}@{manifest.version} differs from sources[0] "
                            f"{manifests[0].name}@{manifests[0].version}: {difference} (hint: a mix needs the same "
                            "columns and types in every source: mix corpora of one kind, e.g. bitext with bitext)")
    pinned = [f"{m.name}@{m.version}" for m in manifests]
    refusal = repeated_source(pinned)  # e.g. NAME and NAME@ITS-LATEST-VERSION
    if refusal:
        raise UserError(refusal)
    manifest_config = {"sources": [{"corpus": ref, "rows": s.rows} for ref, s in zip(pinned, config.sources)],
                       "seed": config.seed}
    prefixed = ids_repeat(store, manifests)
    if prefixed:  # a mix whose sources' ids are distinct keeps them (and its version id and bytes)
        manifest_config["ids"] = ID_FORMAT
    writer = store.open_version(config.name, manifest_config, [f"corpus:{ref}" for ref in pinned])
    shard_ids = [f"s{k}-{m.name}" for k, m in enumerate(manifests)]

    def write(shard_id: str) -> None:
        k = shard_ids.index(shard_id)
        manifest, source = manifests[k], config.sources[k]
        with stages(f"{shard_id} ({manifest.name}@{manifest.version})"):
            table, counters = sample_rows(store.read_table(manifest.name, manifest.version), source.rows, config.seed + k)
            if prefixed:
                ids = table.column("id")
                kind = ids.type if pa.types.is_large_string(ids.type) else pa.string()  # an int id becomes text
                table = table.set_column(table.schema.get_field_index("id"), pa.field("id", kind), pa.array(
                    [None if v is None else ID_FORMAT.format(k=k, id=v) for v in ids.to_pylist()], kind))
            writer.write_shard(shard_id, table, counters=counters)
            print(f"  {table.num_rows} of {manifest.total_rows} rows")

    published = publish_shards(writer, shard_ids, write)
    print(f"corpus-mix: {published.name}@{published.version}: {published.total_rows} rows from {len(pinned)} sources")
    languages = store.languages(published.name, published.version)
    return {"corpus": f"{published.name}@{published.version}", "rows": published.total_rows, "sources": pinned,
            "languages": languages, "seconds": stages.seconds}


def ids_repeat(store, manifests) -> bool:
    """Whether an ``id`` occurs in two of the sources (``train`` holds out by id: a held-out id would take the other
    source's rows with it)."""
    if any("id" not in manifest.columns for manifest in manifests):
        return False
    seen: set = set()
    for manifest in manifests:
        ids = set(store.read_table(manifest.name, manifest.version, columns=["id"]).column("id").to_pylist()) - {None}
        if ids & seen:
            return True
        seen |= ids
    return False


def column_differences(columns: dict[str, str], reference: dict[str, str]) -> str:
    """What ``columns`` (a manifest's ``{name: Arrow type}``) lacks, adds and types otherwise than ``reference``, in
    one phrase; ``""`` when they agree. Types are compared without their list item's field name: a version written
    from Arrow arrays records ``list<item: string>``, one re-published from a read table (corpus-mix, hard-negatives)
    ``list<element: string>``, which are the same column (and read back as the same type)."""
    missing = [name for name in reference if name not in columns]
    extra = [name for name in columns if name not in reference]
    retyped = [f"{name} ({columns[name]}, not {reference[name]})" for name in columns
               if name in reference and _LIST_ITEM.sub(r"\1<", columns[name]) != _LIST_ITEM.sub(r"\1<", reference[name])]
    return "; ".join(f"{label} {', '.join(names)}" for label, names in
                     (("lacks", missing), ("has extra", extra), ("types otherwise", retyped)) if names)


def sample_rows(table, rows: int | None, seed: int):
    """``table`` itself, or a seeded sample of ``rows`` of its rows in their original order; with counters."""
    from interlingua.evaluation.pack.pairs import sample_indices

    if rows is None or rows >= table.num_rows:
        return table, {"source_rows": table.num_rows}
    return (table.take(sample_indices(list(range(table.num_rows)), rows, seed)),
            {"source_rows": table.num_rows, "sampled_out": table.num_rows - rows})
