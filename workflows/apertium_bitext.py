"""Workflow ``apertium-bitext``: English text -> synthetic bitext in every English pair Debian's Apertium installs.

English sentences (by default the Bible's English training verses: the held-out verses the benchmark pack
evaluates on are left out) go through the translate operator (:class:`TranslateOperator`, Apertium backend,
``apertium -u``: no unknown-word marks) once per target language, on Ray actors. Each language gets its own
slice of the English sentences (``distinct_sentences``), so a multilingual corpus covers more English too.
Pairs go through the bitext hygiene filters; what the translator or the filters reject is kept in the
version's rejects table with its reason. The corpus has the bitext columns (``id, src, tgt, src_lang,
tgt_lang``), one shard per language, so ``train`` with ``translation_ranking`` reads it directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from interlingua.core.config import Config, require_order
from interlingua.core.names import Location, SafeName
from interlingua.operators.translate.apertium_backend import ENGLISH_TO

DESCRIPTION = "English text -> Apertium synthetic bitext (es, ca, gl, eo, hbs) as one versioned corpus"


class ApertiumBitextConfig(Config):
    source: Location | None = Field(
        None, description="English text: a .txt file (one sentence a line) or a .parquet file (column "
                          "`column`), any fsspec URL; default: the Bible asset's English training verses")
    column: str = Field("en", description="text column of a parquet source")
    languages: list[str] = Field(default_factory=lambda: sorted(ENGLISH_TO),
                                 description=f"target languages; English pairs Apertium packages: {sorted(ENGLISH_TO)}")
    sentences_per_language: int = Field(2000, ge=1, description="English sentences translated per language")
    distinct_sentences: bool = Field(True, description="each language translates a different slice of the English")
    min_chars: int = Field(20, ge=1, description="English sentences shorter than this are not used")
    max_chars: int = Field(300, ge=1, description="English sentences longer than this are not used")
    max_length_ratio: float = Field(3.0, ge=1.0, description="hygiene: max token-length ratio of a pair")
    seed: int = 0
    name: SafeName = Field("apertium-bitext", description="corpus name in the store")
    workers: int = Field(2, ge=1, description="Apertium actors per language")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")

    @model_validator(mode="after")
    def _char_bounds(self) -> "ApertiumBitextConfig":
        require_order(self, "min_chars", "max_chars")  # at load, not when the run starts
        return self

    @field_validator("languages")
    @classmethod
    def _known_pairs(cls, languages: list[str]) -> list[str]:
        unknown = [lang for lang in languages if lang not in ENGLISH_TO]
        if unknown or not languages:
            raise ValueError(f"Apertium has no English -> {unknown or 'nothing'} pair in Debian; choose from "
                             f"{sorted(ENGLISH_TO)} (eu, is and mk are packaged in the X -> English direction only)")
        return list(dict.fromkeys(languages))


CONFIG = ApertiumBitextConfig


def missing_packages(languages: list[str]) -> list[str]:
    """Debian packages still to install for ``languages`` (their Apertium mode is not installed)."""
    from interlingua.operators.translate.apertium_backend import installed_modes

    installed = installed_modes()
    return [ENGLISH_TO[lang][0] for lang in languages if ENGLISH_TO[lang][1] not in installed]


def environment_preflight(config: ApertiumBitextConfig) -> None:
    """The Apertium modes of ``languages`` installed on the machine that runs the work: run here before Ray for a
    local run, on the cluster for one there (:mod:`interlingua.core.where_it_runs`)."""
    from interlingua.core.errors import UserError

    missing = missing_packages(config.languages)
    if missing:
        raise UserError(f"Apertium modes missing for {config.languages}: apt-get install apertium {' '.join(missing)}")


def input_urls(config: ApertiumBitextConfig) -> list[str]:
    """The English file the build reads: its fingerprint enters the version id and a recipe stage's hash."""
    from interlingua.workflows.assets.build import state_bible

    return [config.source or str(state_bible(config.state_dir))]


def input_preflight(config: ApertiumBitextConfig) -> None:
    """The given English source (not the Bible asset, which a recipe's earlier stage may build): before a recipe
    starts."""
    from interlingua.core.inputs import require_input_files

    if config.source:
        require_input_files([config.source], "English source", local_only=True)


def run(config: ApertiumBitextConfig, *, address: str | None = None) -> dict[str, Any]:
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import corpus_root, init_ray, state_dir
    from interlingua.core.checked_once import check_in_run
    from interlingua.core.where_it_runs import check_on_cluster, runs_on_cluster

    on_cluster = runs_on_cluster(address)
    if not on_cluster:
        check_in_run(environment_preflight, config)  # unless the command checked it just before
    stages = Stages("apertium-bitext")
    state = state_dir(config.state_dir)
    with stages("english"):
        english, source, fingerprints = _english_sentences(config)
        slices = _slices(english, config)
        print(f"  {len(english)} English sentences from {source}; "
              f"{', '.join(f'{lang} {len(ids)}' for lang, ids in slices.items())}")
    with stages("ray"):
        init_ray(address)
        if on_cluster:
            check_on_cluster(environment_preflight, config)  # before any actor starts
    from interlingua.operators.corpus.store import CorpusStore

    store = CorpusStore(corpus_root(state))
    manifest_config = config.model_dump(mode="json", exclude={"state_dir", "workers"}) | {
        "modes": {lang: ENGLISH_TO[lang][1] for lang in config.languages}}
    from interlingua.core.redact import redact
    from interlingua.workflows.bitext_source import publish_shards, published_summary

    # no credentials in provenance; the source's fingerprint in the id: a source rewritten in place is built again
    writer = store.open_version(config.name, redact(manifest_config), redact([source]), input_fingerprints=fingerprints)

    def translate(shard_id: str) -> None:
        lang = shard_id.removeprefix("en-")
        with stages(f"translate {shard_id}"):
            kept = _translate_shard(writer, shard_id, lang, slices[lang], config)
            print(f"  {shard_id}: {kept} of {len(slices[lang])} pairs kept")

    manifest = publish_shards(writer, [f"en-{lang}" for lang in slices], translate)
    return published_summary("apertium-bitext", manifest, ["en", *config.languages], seconds=stages.seconds)


def _english_sentences(config: ApertiumBitextConfig) -> tuple[list[tuple[str, str]], str, dict]:
    """(id, sentence) pairs of the English source, length-filtered and deduplicated, in source order; the source;
    its fingerprints, taken before it is read (a file rewritten meanwhile is recorded as the bytes read)."""
    from interlingua.core.errors import UserError
    from interlingua.core.inputs import require_input_files
    from interlingua.operators.corpus.input_fingerprints import build_fingerprints

    if config.source is None:
        import pyarrow.parquet as pq

        from interlingua.evaluation.splits import bible_heldout_split

        path = Path(input_urls(config)[0])
        if not path.exists():
            raise UserError(f"no English source: the Bible asset {path} is missing (run `interlingua assets bible` "
                            "or set source=...)")
        fingerprints = build_fingerprints([str(path)])
        table = pq.read_table(path, columns=["id", "en"])
        ids = table["id"].to_pylist()
        heldout = bible_heldout_split(ids)
        rows = [(i, t) for i, t, h in zip(ids, table["en"].to_pylist(), heldout) if not h]
        source = str(path)
    else:
        require_input_files([config.source], "English source")
        fingerprints = build_fingerprints([config.source])
        rows, source = _read_source(config.source, config.column), config.source
    seen: set[str] = set()
    out = []
    for row_id, text in rows:
        text = " ".join(str(text or "").split())
        if config.min_chars <= len(text) <= config.max_chars and text not in seen:
            seen.add(text)
            out.append((str(row_id), text))
    if not out:
        raise UserError(f"no English sentence of {config.min_chars}-{config.max_chars} characters in {source}")
    return out, source, fingerprints


def _read_source(url: str, column: str) -> list[tuple[str, str]]:
    import fsspec

    from interlingua.core.errors import UserError

    if url.endswith(".parquet"):
        from interlingua.core.parquet_read import read_parquet

        with fsspec.open(url, "rb") as fh:
            table = read_parquet(fh)
        if column not in table.column_names:
            raise UserError(f"{url} has no column {column!r} (columns: {table.column_names}); set column=...")
        return [(f"line-{i}", t) for i, t in enumerate(table[column].to_pylist())]
    try:
        with fsspec.open(url, "r", encoding="utf-8") as fh:
            return [(f"line-{i}", line.rstrip("\n")) for i, line in enumerate(fh)]
    except FileNotFoundError:
        raise UserError(f"English source {url} does not exist") from None


def _slices(english: list[tuple[str, str]], config: ApertiumBitextConfig) -> dict[str, list[tuple[str, str]]]:
    """Per language, its English rows: a seeded permutation cut into consecutive slices (wrapping around
    when the source is smaller than languages x sentences_per_language), or the same first slice for all."""
    import numpy as np

    order = np.random.default_rng(config.seed).permutation(len(english))
    n = min(config.sentences_per_language, len(english))
    out = {}
    for k, lang in enumerate(config.languages):
        start = (k * n) % len(english) if config.distinct_sentences else 0
        picked = [order[(start + j) % len(english)] for j in range(n)]
        out[lang] = [english[i] for i in sorted(picked)]
    return out


def _translate_shard(writer, shard_id: str, lang: str, rows: list[tuple[str, str]], config: ApertiumBitextConfig) -> int:
    import ray.data

    from interlingua.operators.bitext.hygiene import HygieneSettings
    from interlingua.operators.runner import run_operator, split_rejects
    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.operator import TranslateOperator
    from interlingua.workflows.bitext_source import write_bitext_shard

    spec = TranslateOperator.spec_dict(BackendSpec(backend="apertium", model=ENGLISH_TO[lang][1], mark_unknown=False))
    ds = ray.data.from_items([{"id": i, "src": t} for i, t in rows])
    batch_size = max(1, -(-len(rows) // config.workers))
    out = run_operator(ds, TranslateOperator, {"pair": f"en-{lang}", "spec": spec, "text_column": "src"},
                       concurrency=min(config.workers, len(rows)), batch_size=batch_size,
                       warm_workers=True)  # one run per shard: later shards reuse the first one's worker processes
    batches = list(out.iter_batches(batch_size=None, batch_format="numpy"))
    kept: dict[str, list] = {"id": [], "src": [], "tgt": []}
    rejects: list[dict] = []
    for batch in batches:
        good, bad = split_rejects(batch, "translate")
        rejects += bad
        kept["id"] += [str(v) for v in good["id"]]
        kept["src"] += [str(v) for v in good["src"]]
        kept["tgt"] += [str(v) for v in good["translation"]]
    order = sorted(range(len(kept["id"])), key=lambda i: kept["id"][i])  # actor completion order varies
    rejects.sort(key=lambda r: r["row"])
    part = {k: [v[i] for i in order] for k, v in kept.items()}
    return write_bitext_shard(writer, shard_id, part, src_lang="en", tgt_lang=lang,
                              hygiene=HygieneSettings(max_length_ratio=config.max_length_ratio),
                              extra_rejects=rejects, counters={"english": len(rows), "translate.rejected": len(rejects)})
