"""Workflow ``amr-corpus``: NLI triples → translations → AMR parses → linearized graphs, as a corpus version.

The corpus of the AMR-retrofit method (Cai et al. 2022). Steps, per shard of ``triples_per_shard``
triples (a shard is the unit of resume: the corpus store skips shards already complete):

1. NLI ingest (:mod:`interlingua.operators.nli`): pairs → (premise, entailment, contradiction);
   dropped premises, unused pairs and malformed rows are counted into the manifest, the malformed rows also
   written aside with their reason (rejects of the first shard). A source giving no triple fails in one line
   saying why (its counts), before Ray starts and publishing nothing, as ``ease-corpus`` keeping no pair
   (:func:`~interlingua.core.empty_result.require_kept`). A run on a cluster connects first:
   the version id counts the model folders (``parser_model``, ``translate.X.model``) as the cluster has them, checked
   and hashed there by one task (:func:`model_folder_digests`), not the driver's copies.
2. Every sentence in English (``lang = en``) plus its translation into each configured language
   (:class:`~interlingua.operators.translate.operator.TranslateOperator` on a Ray actor pool; the
   backend per language comes from ``translate``).
3. Parse every language, English too (:class:`~interlingua.operators.amr.operator.ParseOperator`),
   then linearize. Without ``parser_model`` (no AMR parser weights offline) steps 3 is skipped:
   rows keep empty ``penman`` / ``linearized`` and the manifest counts them as ``rows_unparsed``.
4. Rows (``source_id, role, lang, text, penman, linearized``) and rejects (with operator and
   reason) are written as one shard of the version; the version is published when all shards are.
   An English sentence whose graph is rejected stays as a text-only row (counted as
   ``rows_english_text_only``), its graph's reject written aside too; a translated sentence whose translation
   or graph is rejected is only a reject (see :func:`partition_rows`).

Actors ask for fractional GPUs (``translate_gpus``, ``parse_gpus``, 0.5 each by default) so the
translator and the parser share a device; on a cluster without GPUs the request is dropped.
What runs offline here: ingest, Apertium en→es, linearization, the store. Marian/CTranslate2 and
the parser need model weights (an HF id or a local folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from interlingua.core.config import Config
from interlingua.core.names import LanguageCode, Location, SafeName
from interlingua.core.redact import redact, redact_text

DESCRIPTION = "NLI triples -> translations -> AMR graphs -> linearized corpus (Cai et al. 2022)"
SAMPLE_NLI = str(Path(__file__).parent / "data" / "nli_sample.jsonl")
ROLES = ("premise", "entailment", "contradiction")
COLUMNS = ("source_id", "role", "lang", "text", "penman", "linearized")


#: Keys that say where and on what a build runs, not what it builds: left out of the version's config (and so its
#: id), so a rerun with more actors or another store reopens the version built before.
OPERATIONAL_KEYS = ("store_root", "translate_actors", "parse_actors", "translate_gpus", "parse_gpus")


class AmrCorpusConfig(Config):
    """Options of the ``amr-corpus`` workflow."""

    source: Location = SAMPLE_NLI
    split: str = "train"
    languages: list[LanguageCode] = Field(default_factory=lambda: ["es"])
    translate: dict[str, dict[str, Any]] = Field(default_factory=lambda: {"es": {"backend": "apertium", "mark_unknown": False}})
    parser_model: Location | None = None
    parser: dict[str, Any] = Field(default_factory=dict)
    drop_parentheses: bool = False
    corpus_name: SafeName = "amr-corpus"
    store_root: str | None = None
    triples_per_shard: int = Field(default=100, ge=1)
    max_triples: int | None = Field(default=None, ge=1)
    translate_gpus: float = Field(default=0.5, ge=0)
    parse_gpus: float = Field(default=0.5, ge=0)
    translate_actors: int = Field(default=1, ge=1)
    parse_actors: int = Field(default=1, ge=1)

    @field_validator("translate")
    @classmethod
    def _backend_specs(cls, translate: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each language's translation settings as BackendSpec reads them, at load (before: after Ray started)."""
        from interlingua.operators.translate.backend import BackendSpec

        for lang, spec in translate.items():
            try:
                BackendSpec(**spec)
            except TypeError as err:
                raise ValueError(f"{lang}: {err}; keys are BackendSpec's (backend, model, beam_size, ...)") from None
            except ValueError as err:
                raise ValueError(f"{lang}: {err}") from None
        return translate

    @field_validator("languages")
    @classmethod
    def _no_english_target(cls, languages: list[str]) -> list[str]:
        if "en" in languages:
            raise ValueError("languages lists translation targets; English is always included, remove 'en'")
        return languages

    @field_validator("translate_gpus", "parse_gpus")
    @classmethod
    def _ray_gpu_amount(cls, gpus: float, info: ValidationInfo) -> float:
        """Ray takes a fraction of one GPU or a whole number of GPUs (1.5 is refused when the actors start)."""
        if gpus > 1 and gpus != int(gpus):
            raise ValueError(f"{info.field_name} {gpus}: Ray takes a fraction of one GPU (up to 1) or whole GPUs "
                             f"({int(gpus)} or {int(gpus) + 1})")
        return gpus

    @model_validator(mode="after")
    def _translate_only_listed_languages(self) -> "AmrCorpusConfig":
        default = type(self).model_fields["translate"].default_factory()
        # the default's entry (es) is not the user's mistake, also when a dumped config (a submitted job's) repeats it
        unused = sorted(lang for lang, spec in self.translate.items()
                        if lang not in self.languages and default.get(lang) != spec)
        if unused:
            raise ValueError(f"translate has settings for {', '.join(map(repr, unused))}, which languages "
                             f"({', '.join(self.languages)}) does not list: add it to languages, or remove its settings "
                             "(each listed language without settings uses the default Marian model)")
        return self


CONFIG = AmrCorpusConfig


def preflight(config: AmrCorpusConfig) -> None:
    """The settings' own mistakes, wherever the run goes (a target language without an OPUS-MT model): a
    :class:`UserError` naming the key, before Ray starts."""
    from interlingua.core.errors import UserError
    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.preflight import spec_problem

    for lang in config.languages:
        problem = spec_problem(BackendSpec(**config.translate.get(lang, {})), f"en-{lang}")
        if problem:
            raise UserError(f"translate.{lang}: {problem}")


def environment_preflight(config: AmrCorpusConfig) -> None:
    """Per language, its translation settings usable on the machine that runs the work (an installed Apertium mode,
    a model folder with its config and tokenizer, or a hub id's shape) and the parser a seq2seq model: a
    :class:`UserError` naming the key, before a model loads (inside an actor each was a traceback of hundreds of
    lines). Run here before Ray for a local run, on the cluster for one there
    (:mod:`interlingua.core.where_it_runs`)."""
    from interlingua.core.errors import UserError
    from interlingua.operators.amr.parser import parser_model_problem
    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.preflight import translation_problem

    for lang in config.languages:
        problem = translation_problem(BackendSpec(**config.translate.get(lang, {})), f"en-{lang}")
        if problem:
            raise UserError(f"translate.{lang}: {problem}")
    if config.parser_model is not None and (problem := parser_model_problem(config.parser_model)):
        raise UserError(problem)


def input_preflight(config: AmrCorpusConfig) -> None:
    """The NLI file on this machine (:func:`input_urls`, no URL): found and not empty, before a recipe starts."""
    from interlingua.core.inputs import require_input_files

    require_input_files(input_urls(config), local_only=True)


def _english_rows(triples) -> list[dict[str, Any]]:
    return [
        {"source_id": t.triple_id, "role": role, "lang": "en", "text": getattr(t, role)}
        for t in triples
        for role in ROLES
    ]


def _translated(ds, lang: str, config: AmrCorpusConfig):
    from interlingua.operators.runner import run_operator
    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.operator import TranslateOperator

    spec = BackendSpec(**config.translate.get(lang, {}))
    gpus = 0.0 if spec.backend == "apertium" else config.translate_gpus
    out = run_operator(ds, TranslateOperator, {"pair": f"en-{lang}", "spec": TranslateOperator.spec_dict(spec)},
                       concurrency=config.translate_actors, num_gpus=gpus)

    def as_target_rows(batch):
        batch = dict(batch)
        batch["text"] = batch.pop("translation")
        return batch

    return out.map_batches(as_target_rows, batch_format="numpy")


def _parsed(ds, config: AmrCorpusConfig):
    from interlingua.operators.amr.operator import ParseOperator, linearize_batch
    from interlingua.operators.runner import run_operator

    if config.parser_model is None:
        return ds
    parsed = run_operator(ds, ParseOperator, {"model": config.parser_model, "parser_kwargs": config.parser},
                          concurrency=config.parse_actors, num_gpus=config.parse_gpus)
    return parsed.map_batches(linearize_batch, fn_kwargs={"drop_parentheses": config.drop_parentheses},
                              batch_format="numpy")


def _shard_table(rows: list[dict[str, Any]]):
    import pyarrow as pa

    return pa.table({c: pa.array([str(r.get(c, "") or "") for r in rows], type=pa.string()) for c in COLUMNS})


def _build_shard(shard_triples, config: AmrCorpusConfig) -> tuple[list[dict], list[dict]]:
    import ray.data

    english = ray.data.from_items(_english_rows(shard_triples))
    datasets = [english] + [_translated(english, lang, config) for lang in config.languages]
    combined = datasets[0].union(*datasets[1:]) if len(datasets) > 1 else datasets[0]
    return partition_rows(_parsed(combined, config).take_all())


def partition_rows(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(kept rows, rejects) of a shard's translated and parsed rows.

    A row with a reject reason is written aside with it. An English row whose graph was rejected is kept too,
    as a text-only row (``penman`` / ``linearized`` empty, ``graph_rejected`` true): Algorithm 1 gives English
    its text or its graph, so the text stays a training input. A non-English row's only input is the graph
    parsed from its translation, so a failed translation or parse leaves nothing to train on: only its reject.
    """
    from interlingua.operators.base import REJECT_REASON

    kept: list[dict] = []
    rejects: list[dict] = []
    for row in rows:
        reason = str(row.get(REJECT_REASON, "") or "")
        if not reason:
            kept.append(row)
            continue
        original = {c: str(row.get(c, "") or "") for c in COLUMNS + ("parse_raw",) if c in row}
        rejects.append({"operator": reason.split(":", 1)[0], "reason": reason, "row": original})
        if row.get("lang") == "en" and reason.startswith("parse:") and str(row.get("text") or "").strip():
            kept.append({**row, "penman": "", "linearized": "", "graph_rejected": True})
    return kept, rejects


def _why_no_triple(build, source: str) -> str:
    """Why the NLI rows of ``source`` gave no triple: the counts of :meth:`TripleBuild.summary`, with a hint."""
    counts = build.summary()
    dropped = ", ".join(f"{reason} {n}" for reason, n in sorted(counts["premises_dropped"].items())) or "none"
    unused = ", ".join(f"{'no gold label' if label == '-' else label} {n}"
                       for label, n in sorted(counts["pairs_unused"].items())) or "none"
    return (f"{redact_text(source)} gives no (premise, entailment, contradiction) triple (premises dropped: {dropped}; "
            f"pairs unused: {unused}; malformed rows: {counts['rows_malformed']}) (hint: a premise needs an "
            "entailment and a contradiction hypothesis; check source and split)")


def input_urls(config: AmrCorpusConfig) -> list[str]:
    """The NLI file the build reads (none for a dataset on the hub): its fingerprint enters the version id and a
    recipe stage's hash."""
    from interlingua.operators.nli.sources import is_jsonl_source

    return [config.source] if is_jsonl_source(config.source) else []


def _versioned(config: AmrCorpusConfig) -> dict[str, Any]:
    """What the version's config holds (and its id hashes) before the model folders' digests."""
    return config.model_dump(exclude=set(OPERATIONAL_KEYS))


#: Raised when the parser generates otherwise from the same config, so such a build gets another version id (a refresh
#: a new line, a recipe stage another hash) and never reopens or resumes a version the code before wrote. 2: no n-gram
#: blocking (the folder's no_repeat_ngram_size / repetition_penalty overridden); an amrlib folder with early stopping
#: and its max_out_len. Counted only where a parser runs (:func:`stage_marks`).
PARSER_GENERATION = 2
#: Backends whose unset ``beam_size`` / ``max_length`` became the model folder's generation config (were 4 / 256).
FOLDER_GENERATION_BACKENDS = ("marian", "ctranslate2")


def stage_marks(data: dict[str, Any]) -> dict[str, Any]:
    """What the code now builds otherwise from ``data`` (an amr-corpus config, dumped, or a recipe stage's, which may
    leave the defaults out): ``translate_generation: {lang: "folder"}`` for each listed language translated by
    Marian or CTranslate2 with ``beam_size`` or ``max_length`` unset (now the folder's, were 4 / 256), and
    ``parser_generation`` (:data:`PARSER_GENERATION`) when ``parser_model`` is set; ``{}`` otherwise (Apertium without
    a parser: ids kept). In the version's identity (:func:`identity_config`) and a recipe stage's hash."""
    from interlingua.operators.translate.backend import BackendSpec

    fields = AmrCorpusConfig.model_fields
    languages = data.get("languages", fields["languages"].default_factory())
    translate = data.get("translate", fields["translate"].default_factory())
    specs = {lang: spec if isinstance(spec := (translate or {}).get(lang), dict) else {} for lang in languages or []}
    folder = {lang: "folder" for lang, spec in specs.items()
              if spec.get("backend", BackendSpec.backend) in FOLDER_GENERATION_BACKENDS
              and (spec.get("beam_size") is None or spec.get("max_length") is None)}
    marks: dict[str, Any] = {"translate_generation": folder} if folder else {}
    if data.get("parser_model") is not None:
        marks["parser_generation"] = PARSER_GENERATION
    return marks


def identity_config(data: dict[str, Any], digests: dict[str, str] | None = None) -> dict[str, Any]:
    """What a version's (or a refresh line's) id is computed from: ``data`` (an amr-corpus config, dumped) with its
    model folders' digests (``digests``: as a cluster computed them) and :func:`stage_marks`."""
    from interlingua.models.identity import with_model_files

    return {**with_model_files(data, digests=digests), **stage_marks(data)}


def model_folder_digests(config: AmrCorpusConfig) -> dict[str, str]:
    """``{spec: files_digest}`` of the model folders (``parser_model``, ``translate.X.model``) the config names, as
    the machine running this finds them: run on the cluster for a run there, whose folders the work reads."""
    from interlingua.models.identity import model_files

    return model_files(_versioned(config))


def model_folders(config: AmrCorpusConfig) -> list[str]:
    """The specs of the model folders :func:`model_folder_digests` hashes, as the machine running this finds them,
    unhashed: what a cluster is asked for which hub-shaped values are folders there
    (:mod:`~interlingua.workflows.cluster_models`)."""
    from interlingua.models.identity import local_model_folders

    return local_model_folders(_versioned(config))


#: The config keys naming model folders (``languages`` picks the ``translate`` entries read): a recipe checks a stage
#: whose values of these keys are literal when it loads (:mod:`~interlingua.workflows.cluster_models`).
MODEL_KEYS = ("parser_model", "translate", "languages")


def _model_specs(config: AmrCorpusConfig) -> list[str]:
    """``parser_model`` and ``translate.X.model`` of each listed language, those set."""
    models = [config.parser_model, *(config.translate.get(lang, {}).get("model") for lang in config.languages)]
    return [model for model in models if isinstance(model, str)]


def models_missing_here(config: AmrCorpusConfig) -> list[str]:
    """The model paths the config names that this machine lacks: a path (``./x``, ``~/x``, ``/x``, a name that is no
    hub id) or a ``file://`` URL, as :func:`~interlingua.models.identity.model_files` reads both as folders. Hub ids,
    other URLs and registry URIs are none; a hub-shaped ``org/name`` is :func:`hub_shaped_models`'."""
    return [model for model, hub_shaped in _models_not_here(config) if not hub_shaped]


def hub_shaped_models(config: AmrCorpusConfig) -> list[str]:
    """The model values that name nothing on this machine but have a hub id's shape (``org/name``): a hub id, unless
    the machine running the work has a folder at that relative path (then it reads, and hashes, that folder)."""
    return [model for model, hub_shaped in _models_not_here(config) if hub_shaped]


def _models_not_here(config: AmrCorpusConfig) -> list[tuple[str, bool]]:
    """(spec, whether it has a hub id's shape) of each model value naming nothing on this machine that is no URL but
    ``file://`` and no registry URI: a ``file://`` URL or a value that can be no hub id is a path."""
    from interlingua.core.local_paths import FILE_SCHEME, exists_here, is_url, local_path
    from interlingua.operators.translate.preflight import local_folder_problem

    return [(model, not model.startswith(FILE_SCHEME) and local_path(model) is not None
             and local_folder_problem(model, "model") is None)
            for model in _model_specs(config)
            if not is_url(model) and not model.startswith("models:/") and not exists_here(model)]


def run(config: AmrCorpusConfig, *, address: str | None = None) -> dict[str, Any]:
    """Build (or resume) the corpus version; returns a summary with the manifest's counts."""
    from interlingua.operators.corpus.shards import plan_shards
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.operators.nli.sources import read_nli_rows
    from interlingua.operators.nli.triples import build_triples
    from interlingua.core.inputs import require_input_files, require_writable
    from interlingua.core.runtime import corpus_root, init_ray
    from interlingua.operators.corpus.input_fingerprints import build_fingerprints
    from interlingua.operators.translate.operator import AT_MAX_LENGTH
    from interlingua.core.checked_once import check_in_run
    from interlingua.core.empty_result import require_kept
    from interlingua.core.where_it_runs import check_on_cluster, runs_on_cluster

    preflight(config)  # the user's mistakes, before Ray starts
    on_cluster = runs_on_cluster(address)
    if not on_cluster:
        check_in_run(environment_preflight, config)  # this machine runs the work: checked before Ray starts (once)
    require_input_files(input_urls(config))
    require_writable(config.store_root or corpus_root(), "corpus store")
    fingerprints = build_fingerprints(input_urls(config))  # before reading: a file rewritten meanwhile is recorded as read
    build = build_triples(read_nli_rows(config.source, config.split))
    triples = build.triples[: config.max_triples] if config.max_triples else build.triples
    require_kept(len(triples), "amr-corpus", "NLI triple", lambda: _why_no_triple(build, config.source))
    store = CorpusStore(config.store_root or corpus_root())
    digests = None  # the model folders are read here (a local run)
    if on_cluster:  # connected first: the cluster's model folders key the version, the driver may lack or differ
        init_ray(address)
        digests = check_on_cluster(environment_preflight, config, model_folder_digests)  # before any actor or model
    # a parser or translation model rewritten in place: another version
    writer = store.open_version(config.corpus_name, redact(identity_config(_versioned(config), digests)),
                                redact([config.source]), input_fingerprints=fingerprints)
    shards = plan_shards(len(triples), config.triples_per_shard)
    # the malformed NLI rows are written aside with the first shard, with their reason
    malformed = [{"operator": "nli_triples", "reason": m["reason"], "row": m["row"]} for m in build.malformed_rows]
    summary: dict[str, Any] = {"nli": build.summary(), "shards_total": len(shards), "shards_resumed": 0}
    if not writer.published:
        if not on_cluster:
            init_ray(address)
        for shard in shards:
            if writer.is_complete(shard.id):
                summary["shards_resumed"] += 1
                continue
            part = triples[shard.start : shard.stop]
            kept, rejects = _build_shard(part, config)
            rejects = (malformed if shard is shards[0] else []) + rejects
            unparsed = len(kept) if config.parser_model is None else 0
            text_only = sum(1 for row in kept if row.get("graph_rejected"))
            at_max_length = sum(1 for row in kept if row.get(AT_MAX_LENGTH))  # kept, and counted
            writer.write_shard(shard.id, _shard_table(kept), redact(rejects),
                               counters={"rows": len(kept), "rows_unparsed": unparsed, "triples": len(part),
                                         "rows_english_text_only": text_only,
                                         "rows_translation_at_max_length": at_max_length})
        writer.add_counters({
            f"premises_dropped_{k.replace(' ', '_')}": v for k, v in build.dropped_premises.items()
        } | {f"pairs_unused_{'no_gold' if k == '-' else k}": v for k, v in build.unused_pairs.items()}
          | {"rows_malformed": len(build.malformed_rows),
             "triples_beyond_max_triples": len(build.triples) - len(triples)})  # cut off by max_triples: counted
    manifest = writer.publish(expected_shards=[s.id for s in shards])
    summary.update({"corpus": config.corpus_name, "version": writer.version, "rows": manifest.total_rows,
                    "rejects": manifest.total_rejects})
    return summary
