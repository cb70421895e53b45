"""Workflow ``bible-bitext``: the en-es Bible asset minus its held-out verses -> a versioned bitext corpus.

The held-out verses (:func:`~interlingua.evaluation.splits.bible_heldout_split`, ~984 of 31,084) are the ones the
quickstart and the benchmark pack evaluate on; they never enter the corpus. Hygiene filters (empty sides,
length ratio, duplicates) run per shard; removed pairs are kept as rejects with their reason. The quickstart
builds its corpus with the same function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from interlingua.core.config import Config
from interlingua.core.names import Location, SafeName

DESCRIPTION = "the en-es Bible (KJV / Reina-Valera) minus the held-out verses, as a bitext corpus"


class BibleBitextConfig(Config):
    bitext: Location | None = Field(None, description="parquet with columns id, en, es; default: the Bible asset")
    name: SafeName = Field("bible-en-es", description="corpus name in the store")
    rows_per_shard: int = Field(4096, ge=1)
    max_length_ratio: float = Field(3.0, ge=1.0, description="hygiene: max token-length ratio of a pair")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")


CONFIG = BibleBitextConfig


def input_urls(config: BibleBitextConfig) -> list[str]:
    """The Bible parquet the build reads: its fingerprint enters the version id and a recipe stage's hash."""
    from interlingua.workflows.assets.build import state_bible

    return [config.bitext or str(state_bible(config.state_dir))]


def input_preflight(config: BibleBitextConfig) -> None:
    """The given bitext file (not the asset, which a recipe's earlier stage may build): before a recipe starts."""
    from interlingua.core.inputs import require_input_files

    if config.bitext:
        require_input_files([config.bitext], "Bible bitext", local_only=True)


def run(config: BibleBitextConfig, *, address: str | None = None) -> dict[str, Any]:
    from interlingua.core.errors import UserError
    from interlingua.core.runtime import corpus_root, state_dir
    from interlingua.workflows.bitext_source import published_summary

    from interlingua.core.inputs import require_input_files
    from interlingua.core.local_paths import path_or_url

    state = state_dir(config.state_dir)
    source = path_or_url(input_urls(config)[0])  # ./x.parquet is recorded (inputs, version id) as x.parquet
    if config.bitext:  # a path or any fsspec URL
        require_input_files([config.bitext], "Bible bitext")
    elif not Path(source).exists():
        raise UserError(f"Bible bitext {source} is missing (run `interlingua assets bible`, or set bitext=...)")
    manifest, heldout = publish_bible_corpus(corpus_root(state), source, config.name, rows_per_shard=config.rows_per_shard,
                                             max_length_ratio=config.max_length_ratio)
    return published_summary("bible-bitext", manifest, ["en", "es"], note=f", {len(heldout)} held out",
                             heldout=len(heldout))


def publish_bible_corpus(root: str, bible: str | Path, name: str, *, rows_per_shard: int, max_length_ratio: float):
    """Publish the non-held-out verses as corpus ``name``; returns (manifest, held-out table with both sides non-empty)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from interlingua.core.parquet_read import read_parquet_at

    from interlingua.evaluation.splits import bible_heldout_split
    from interlingua.operators.bitext.hygiene import HygieneSettings
    from interlingua.operators.corpus.input_fingerprints import build_fingerprints
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.bitext_source import publish_bitext_corpus

    fingerprints = build_fingerprints([str(bible)])  # before reading: a file rewritten meanwhile is recorded as read
    table = read_parquet_at(str(bible)).rename_columns({"en": "src", "es": "tgt"})  # a path or any fsspec URL
    mask = pa.array(bible_heldout_split(table.column("id").to_pylist()))
    heldout, training = table.filter(mask), table.filter(pc.invert(mask))
    manifest = publish_bitext_corpus(
        CorpusStore(root), name, training.select(["id", "src", "tgt"]), src_lang="en", tgt_lang="es",
        inputs=[str(bible)], hygiene=HygieneSettings(max_length_ratio=max_length_ratio), rows_per_shard=rows_per_shard,
        input_fingerprints=fingerprints)
    heldout = heldout.filter(pc.and_(pc.greater(pc.utf8_length(heldout["src"]), 0),
                                     pc.greater(pc.utf8_length(heldout["tgt"]), 0)))
    return manifest, heldout
