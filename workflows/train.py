"""Workflow ``train``: any engine objective on any corpus version -> registered, evaluated encoder.

1. Read the corpus version's manifest (``corpus``, ``version``: default the latest) and check, before Ray or a
   model starts, that it has the columns the objective reads (``columns`` maps an objective column to another
   corpus column, e.g. ``columns.text=src`` for unsupervised SimCSE on a bitext corpus). EASE's entity vectors
   default to the corpus's own ``<corpus>-entities`` version (the latest one); a user's Wikipedia2Vec file
   (word2vec text) or ``.npy`` + ids works too (``train.entity_vectors``).
2. Rows whose text occurs anywhere in the benchmark pack are dropped and counted (``exclude_pack``), so no
   evaluation sentence is trained on; ``max_rows`` samples the corpus (seeded).
3. Train on the engine (DeepSpeed on Ray Train) in an MLflow run.
4. Evaluate base vs tuned on the offline benchmark pack (``evaluate``; the pack is built under the state
   directory when missing), log the table, JSON and chart to the run. Word retrieval of aligned word pairs
   (Wu & Dredze's own check, ``word_retrieval_rows``; on by default for ``explicit_alignment``) on rows held out
   of training, base vs tuned, beside it (:mod:`interlingua.workflows.word_retrieval_check`).
5. Register the encoder with a :class:`~interlingua.models.model_card.ModelCard`: base model, objective,
   corpus versions, the languages it saw, the resolved config and the evaluation table.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from interlingua.core.config import Config
from interlingua.core import tracking
from interlingua.trainers.engine.config import TrainConfig
from interlingua.core.names import ExperimentName, Location, RegisteredModelName, RegistryAlias, SafeName, split_corpus_ref
from interlingua.workflows.word_retrieval_check import (BUILD_WORD_PAIRS, check_corpus, select_heldout, wanted_rows,
                                                        word_columns)

DESCRIPTION = "train any objective on any corpus version; evaluate base vs tuned on the pack; register"
#: ``train.entity_vectors`` value meaning "the corpus's own ``<corpus>-entities`` version" (the default for EASE).
CORPUS_ENTITIES = "corpus"
#: Sentence columns of a bitext corpus, compared with the benchmark pack even when the objective reads other columns.
SENTENCE_COLUMNS = ("src", "tgt")


def _train_defaults() -> TrainConfig:
    return TrainConfig(objective="translation_ranking", num_workers=2, batch_size=16, max_steps=24, lr=3e-5,
                       warmup_steps=2, max_length=64, freeze_embeddings=True)


class TrainWorkflowConfig(Config):
    corpus: SafeName = Field(description="corpus name in the store (e.g. bible-en-es, apertium-bitext, ease)")
    version: str | None = Field(None, description="corpus version; None: the latest")
    columns: dict[str, str] = Field(default_factory=dict,
                                    description="objective column -> corpus column, e.g. {text: src}")
    entities: str | None = Field(None, description="EASE: the entity-vectors corpus as NAME, NAME@VERSION or NAME/VERSION "
                                                   "(used when train.entity_vectors is not set); default: <corpus>-entities, latest")
    model: Location | None = Field(None, description="encoder URI to start from; default: the e5-small asset")
    max_rows: int | None = Field(None, ge=1, description="train on a seeded sample of this many rows")
    exclude_pack: bool = Field(True, description="drop rows with any text that occurs in the benchmark pack")
    registered_model: RegisteredModelName = "interlingua-encoder"
    alias: RegistryAlias = "train"
    experiment: ExperimentName = "train"
    evaluate: bool = Field(True, description="evaluate base vs tuned on the benchmark pack")
    pack: str | None = Field(None, description="benchmark pack folder; default: <state>/bench-pack (built if missing)")
    eval_tasks: list[str] = Field(default_factory=lambda: ["all"], description="pack task names or kinds")
    eval_seeds: list[int] = Field(default_factory=lambda: [1, 2, 3], min_length=1)
    word_retrieval_rows: int | None = Field(None, ge=0, description="hold out this many rows of a bitext-corpus "
                                            "version (subword_pairs) from training and report word-retrieval accuracy "
                                            "on them, base vs tuned; null: 500 for explicit_alignment, else 0 (off)")
    word_retrieval_seed: int = Field(0, description="seed of the held-out draw (not the training seed, so every "
                                                    "stage on the same corpus holds out the same rows)")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")
    train: TrainConfig = Field(default_factory=_train_defaults)

    @model_validator(mode="after")
    def _some_tasks(self) -> "TrainWorkflowConfig":
        from interlingua.workflows.pack_eval import require_eval_tasks

        require_eval_tasks(self.evaluate, self.eval_tasks)
        return self

    @model_validator(mode="before")
    @classmethod
    def _ease_vectors_from_corpus(cls, data: Any) -> Any:
        """EASE without ``train.entity_vectors``: the corpus's own entity vectors."""
        if isinstance(data, dict) and isinstance(data.get("train"), dict):
            train = data["train"]
            options = train.get("options") if isinstance(train.get("options"), dict) else {}  # else: TrainConfig says why
            ease = options.get("ease") if isinstance(options.get("ease"), dict) else {}
            given = train.get("entity_vectors") or ease.get("entity_vectors")
            if train.get("objective") == "ease" and not given:
                data = {**data, "train": {**train, "entity_vectors": CORPUS_ENTITIES}}
        return data


CONFIG = TrainWorkflowConfig


def objective_columns(train: TrainConfig) -> tuple[str, ...]:
    """The corpus columns the objective of ``train`` reads (each once, in view order)."""
    return tuple(dict.fromkeys(train.objective_class.columns(train.objective_options)))


def check_columns(config: TrainWorkflowConfig, manifest) -> dict[str, str]:
    """{objective column: corpus column}; a UserError names the missing ones."""
    from interlingua.core.errors import UserError

    unknown = sorted(set(config.columns) - set(objective_columns(config.train)))
    if unknown:
        raise UserError(f"columns {unknown} are not read by objective {config.train.objective!r} "
                        f"(it reads {list(objective_columns(config.train))})")
    mapping = {c: config.columns.get(c, c) for c in objective_columns(config.train)}
    lacking = [src for src in mapping.values() if src not in manifest.columns]
    missing = [f"{c}" if c == src else f"{c} (from {src})" for c, src in mapping.items() if src in lacking]
    if missing:
        word_pairs = set(lacking) & set(word_columns(config.train, config.columns).values())
        build = f"build one with word pairs: {BUILD_WORD_PAIRS}, " if word_pairs else ""
        raise UserError(f"corpus {manifest.name}@{manifest.version} lacks columns {missing} that objective "
                        f"{config.train.objective!r} needs (it has {sorted(manifest.columns)}); {build}choose another "
                        f"corpus or objective, or map a column: --set columns.NAME=CORPUS_COLUMN")
    return mapping


def run(config: TrainWorkflowConfig, *, address: str | None = None) -> dict[str, Any]:
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import (assets_dir, check_tracking_store, configure_mlflow, corpus_root, init_ray,
                                          state_dir)
    from interlingua.operators.corpus.store import CorpusStore

    stages = Stages("train")
    state = state_dir(config.state_dir)
    check_local_resources(config.train, address)  # workers this machine cannot hold: exit 2 before the server's 69
    check_tracking_store(state)  # an MLflow server that does not answer: exit 69 before the pack is built or Ray starts
    store = CorpusStore(corpus_root(state))
    with stages("corpus"):
        manifest = _manifest(store, config.corpus, config.version)
        mapping = check_columns(config, manifest)
        train = config.train
        corpus_versions = {manifest.name: manifest.version, **mixed_sources(manifest)}
        if train.objective == "ease" and train.objective_options.entity_vectors == CORPUS_ENTITIES:
            name, version = split_corpus_ref(config.entities or f"{manifest.name}-entities")
            entities = _manifest(store, name, version)
            vectors = f"{store.root.rstrip('/')}/{entities.name}/{entities.version}"
            train = train.model_copy(update={"options": {**train.options,
                                                         "ease": {**train.options["ease"], "entity_vectors": vectors}}})
            corpus_versions[entities.name] = entities.version
        check_entity_vectors(train)
        languages = store.languages(manifest.name, manifest.version)
        heldout_rows = wanted_rows(config.word_retrieval_rows, train.objective)
        word_cols = word_columns(train, mapping)
        if heldout_rows:
            check_corpus(heldout_rows, word_cols, manifest)
        _check_enough(train, manifest.total_rows)  # at most this many will train: too few fails before Ray starts
        print(f"  corpus {manifest.name}@{manifest.version}: {manifest.total_rows} rows, columns "
              f"{', '.join(f'{k}<-{v}' if k != v else k for k, v in mapping.items())}; languages {', '.join(languages) or '-'}")
    with stages("model"):
        from interlingua.workflows.assets.build import e5_model_dir
        from interlingua.workflows.model_uri import model_and_folder

        # a URI that names nothing fails here, as one line, before Ray and an MLflow run start
        model_uri, model_folder = model_and_folder(config.model, state)
        check_model_config(train, model_uri, model_folder)  # e.g. align_layer vs num_hidden_layers: config.json only
        stable = [str(e5_model_dir(assets_dir(state)).resolve())]
        pack = None
        if config.evaluate or config.exclude_pack:
            from interlingua.workflows.pack_eval import ensure_pack

            pack = ensure_pack(config.pack, state, tasks=config.eval_tasks if config.evaluate else None)
    with stages("ray"):
        init_ray(address)

    import mlflow

    from interlingua.workflows.resume import resume_inputs, workflow_run

    experiment_id = configure_mlflow(config.experiment, state)
    # a rerun with the same config after a crash continues this MLflow run and its Ray Train run (workflows/resume.py),
    # keyed on what the config resolved to: a corpus's latest version or a model alias that moved since starts anew
    resolved = resume_inputs(config, model_folder, corpus_versions=corpus_versions)
    with workflow_run("train", resolved, experiment_id,
                      run_name=f"train-{train.objective}-{time.strftime('%Y%m%d-%H%M%S')}") as tracked:
        run_id = tracked.run_id
        with mlflow.start_run(run_id=run_id):
            tracking.log_params({"model": model_uri, "corpus": f"{manifest.name}@{manifest.version}",
                                 "columns": mapping, "max_rows": config.max_rows, "train": train.model_dump()})
            tracking.set_tags({"interlingua.workflow": "train", "interlingua.objective": train.objective,
                               "corpus.version": manifest.version})
            tracking.log_dict(json.loads(manifest.to_json()), "corpus/manifest.json")

        with stages("data"):
            heldout = select_heldout(store, manifest, heldout_rows, config.word_retrieval_seed, word_cols) if heldout_rows else None
            dataset, counts = _dataset(store, manifest, mapping, train, config, pack, heldout["id"] if heldout else ())
            tracking.log_dict(counts, "corpus/training_rows.json", run_id)
            print(f"  {counts['rows']} training rows ({counts['excluded_pack']} dropped: text in the benchmark pack"
                  + (f"; {counts['heldout_word_retrieval']} held out for word retrieval)" if heldout else ")"))
            _check_enough(train, counts["rows"])
        with stages("train"):
            from interlingua.trainers.engine.fit import fit

            result = fit(model_uri, dataset, train, storage_path=state / "ray_results", name=f"train-{run_id[:8]}",
                         run_id=run_id)

        out_dir = state / "train" / run_id
        rows: list[dict] = []
        word_retrieval = None
        if config.evaluate or heldout:
            with stages("evaluate"):
                rows, word_retrieval = _evaluate(config, model_uri, result, pack, run_id, out_dir, stable, heldout, train,
                                                 "-".join(languages[:2]) if len(languages) == 2 else ",".join(languages))
        with stages("register"):
            registered = register_trained(result.encoder_dir, config, train, run_id, workflow="train",
                                          model_uri=model_uri, corpus=f"{manifest.name}@{manifest.version}",
                                          corpus_versions=corpus_versions, rows=counts["rows"], languages=languages,
                                          evaluation=rows)
    summary = {"run_id": run_id, "model_uri": registered.uri, "model": registered.version_uri,
               "model_version": registered.version, "base_model": model_uri,
               "corpus": f"{manifest.name}@{manifest.version}", "corpus_versions": corpus_versions,
               "languages": languages, "objective": train.objective, "rows": counts,
               "evaluation": rows, "word_retrieval": word_retrieval, "encoder_dir": result.encoder_dir,
               "train_metrics": {k: v for k, v in result.metrics.items() if isinstance(v, (int, float))},
               "seconds": stages.seconds}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    print(f"train: done in {sum(stages.seconds.values()):.0f} s; summary in {out_dir / 'summary.json'}")
    return summary


def register_trained(encoder_dir: str, config, train: TrainConfig, run_id: str, *, workflow: str, model_uri: str,
                     corpus: str, corpus_versions: dict[str, str], rows: int, languages: list[str],
                     evaluation: list[dict]):
    """Register a trained encoder as ``config.registered_model`` with alias ``config.alias``, under the
    :class:`~interlingua.models.model_card.ModelCard` every trained encoder gets (``train``, ``quickstart``): base
    model, objective, the corpus versions it saw (the ``interlingua.corpus_versions`` tag that keeps them from
    ``corpus prune``), languages, the resolved config with ``train``, the evaluation rows; ``corpus`` and ``rows``
    (``NAME@VERSION`` and how many rows trained) go into its description. Prints and returns the new version."""
    from interlingua.models.model_card import ModelCard
    from interlingua.models.registry import log_and_register_encoder

    card = ModelCard(base_model=model_uri, objective=train.objective, workflow=workflow,
                     corpus_versions=corpus_versions, languages=languages,
                     config=config.model_dump(mode="json") | {"train": train.model_dump(mode="json")},
                     evaluation=evaluation, description=f"{train.objective} on {corpus}, {rows} rows, "
                                                        f"{train.max_steps} steps")
    registered = log_and_register_encoder(encoder_dir, config.registered_model, config.alias, run_id, card=card)
    print(f"  registered {registered.uri} (version {registered.version})")
    return registered


def check_model_config(train: TrainConfig, model_uri: str, folder: str | None) -> None:
    """The objective's model check (``check_model``: e.g. explicit_alignment's ``align_layer`` against the encoder's
    ``num_hidden_layers``) on the driver, reading only the model folder's ``config.json`` (no weights), so a mistake
    fails before Ray starts. A folder whose config cannot be read this way (a composed encoder) is left to the
    check in ``fit``."""
    from interlingua.core.errors import UserError

    class _Unreadable(Exception):
        pass

    def model_config():
        try:
            from transformers import AutoConfig

            from interlingua.models.load import find_model_root

            return AutoConfig.from_pretrained(find_model_root(folder))
        except Exception as err:  # noqa: BLE001 - any failure to read the config: leave the check to fit
            raise _Unreadable(str(err)) from err

    if not folder or not Path(folder).is_dir():
        return
    try:
        train.objective_class.check_model(train.objective_options, model_config)
    except _Unreadable:
        return
    except ValueError as err:
        raise UserError(f"model {model_uri!r} cannot be trained with objective {train.objective!r}: {err} (hint: "
                        f"change the objective's options, e.g. --set train.align_layer=N, or the model)") from None


def check_entity_vectors(train: TrainConfig) -> None:
    """EASE: a local ``entity_vectors`` (or ``entity_vector_ids``) path that does not exist, or one named ``.zst``
    with no zstd decompressor installed (local or remote), fails here, before Ray, not as a worker error after the
    workers started. Remote URLs are otherwise left to the workers."""
    from interlingua.core.archives import require_decompressor
    from interlingua.core.errors import UserError
    from interlingua.core.local_paths import exists_here, is_url

    if train.objective != "ease":
        return
    options = train.objective_options
    for key in ("entity_vectors", "entity_vector_ids"):
        value = getattr(options, key, None)
        if not value or value == CORPUS_ENTITIES:
            continue
        require_decompressor(value, f"train.{key}")
        if not is_url(value) and not exists_here(value):
            raise UserError(f"train.{key} {value} does not exist (hint: a word2vec text file, a .npy matrix with "
                            f"train.entity_vector_ids, or leave it unset for the corpus's <corpus>-entities version)")


def check_local_resources(train: TrainConfig, address: str | None = None) -> None:
    """For a local Ray (no ``address`` / ``$RAY_ADDRESS``), the resources the training workers ask for must exist,
    or Ray waits forever ("No available node types can fulfill resource request"): GPUs for ``train.use_gpu``
    (one per worker) and CPUs for ``train.num_workers`` x ``train.cpus_per_worker`` (a local Ray gets
    :func:`interlingua.core.runtime.local_ray_cpus`, as :func:`interlingua.core.runtime.init_ray` starts it). A
    cluster is left to Ray."""
    import sys

    from interlingua.core.errors import UserError
    from interlingua.core.runtime import chosen_ray_address, local_ray_cpus

    if chosen_ray_address(address):
        return
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", lambda: False)():
        return  # a Ray this process already runs: its resources are what they are
    if train.use_gpu is not False:
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if train.use_gpu and not gpus:
            raise UserError("train.use_gpu=true, but this machine has no GPU visible to torch (hint: leave "
                            "train.use_gpu unset or false to train on CPUs, or give --address of a cluster with GPUs)")
        if gpus and gpus < train.num_workers:
            raise UserError(f"train.num_workers {train.num_workers} > the {gpus} GPU(s) of this machine (each worker "
                            f"takes one); use --set train.num_workers={gpus}, train.use_gpu=false, or a cluster "
                            f"(--address)")
    cpus = local_ray_cpus()
    needed = train.num_workers * train.cpus_per_worker
    if needed > cpus:
        raise UserError(f"train.num_workers {train.num_workers} x train.cpus_per_worker {train.cpus_per_worker} = "
                        f"{needed} CPUs, more than the {cpus} a local Ray gets on this machine (hint: fewer workers "
                        f"or CPUs per worker, or a cluster: --address)")


def mixed_sources(manifest) -> dict[str, str]:
    """{name: version} of the corpora a ``corpus-mix`` version was made from (its ``corpus:NAME@VERSION`` inputs), so
    a model trained on a mix records the versions it saw; {} for any other corpus."""
    out = {}
    for source in manifest.inputs:
        name, at, version = str(source).removeprefix("corpus:").partition("@")
        if str(source).startswith("corpus:") and at:
            out[name] = version
    return out


def _manifest(store, name: str, version: str | None):
    from interlingua.core.errors import UserError
    from interlingua.operators.corpus.store import LATEST, CorpusLookupError

    try:
        return store.manifest(name, version or LATEST)
    except CorpusLookupError as err:
        from interlingua.workflows.recipe_corpora import corpus_workflow

        workflow = corpus_workflow(name) or "<corpus workflow>"
        raise UserError(f"{err} (build it first with its corpus workflow: interlingua run {workflow})") from None


def _dataset(store, manifest, mapping: dict[str, str], train: TrainConfig, config: TrainWorkflowConfig, pack,
             heldout_ids=()):
    """The shuffled, materialized training dataset (objective column names) and its row counts; rows whose ``id``
    is in ``heldout_ids`` (word retrieval) are left out first, then rows with benchmark-pack text in a column the
    objective reads or in the corpus's sentence columns (``src``, ``tgt``: a word-aligned row is left out when its
    sentence is in the pack, though the objective reads only its tokens)."""
    from interlingua.workflows.word_retrieval_check import ID_COLUMN

    heldout_ids = sorted(heldout_ids)
    text_columns = list(dict.fromkeys([*mapping.values(), *(c for c in SENTENCE_COLUMNS if c in manifest.columns)]))
    corpus_columns = list(dict.fromkeys([*text_columns, *([ID_COLUMN] if heldout_ids else [])]))
    ds = store.read_ray(manifest.name, manifest.version, columns=corpus_columns)
    counts = {"corpus": manifest.total_rows, "excluded_pack": 0}
    texts: list[str] = []
    if config.exclude_pack and pack is not None:
        from interlingua.workflows.pack_eval import pack_texts

        texts = sorted(pack_texts(pack))
    ds = ds.map_batches(partial(_rename_and_drop, mapping, texts, text_columns, exclude_ids=heldout_ids),
                        batch_format="pyarrow").materialize()
    if heldout_ids:
        counts["heldout_word_retrieval"] = len(heldout_ids)
    counts["excluded_pack"] = manifest.total_rows - len(heldout_ids) - ds.count()
    if config.max_rows is not None:
        ds = ds.random_shuffle(seed=train.seed).limit(config.max_rows)
    ds = ds.random_shuffle(seed=train.seed).materialize()
    counts["rows"] = ds.count()
    return ds, counts


def _rename_and_drop(mapping: dict[str, str], texts: list[str], text_columns: list[str], table, exclude_ids=()):
    """Corpus columns -> the objective's column names (a corpus column may feed several); rows whose ``id`` is in
    ``exclude_ids`` are dropped, then rows with a corpus column of ``text_columns`` whose whitespace-normalized
    value is in ``texts`` (vectorized; non-string columns such as lists of tokens or entity ids are not compared)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(exclude_ids):
        from interlingua.workflows.word_retrieval_check import ID_COLUMN

        ids = table.column(ID_COLUMN).cast(pa.string())
        table = table.filter(pc.invert(pc.fill_null(pc.is_in(ids, value_set=pa.array(list(exclude_ids), pa.string())), False)))
    if texts and table.num_rows:
        banned = pa.array(texts, type=pa.string())
        drop = None
        for column in text_columns:
            if not (pa.types.is_string(table.column(column).type) or pa.types.is_large_string(table.column(column).type)):
                continue
            values = pc.utf8_trim_whitespace(pc.replace_substring_regex(table.column(column).cast(pa.string()), r"\s+", " "))
            hit = pc.fill_null(pc.is_in(values, value_set=banned), False)
            drop = hit if drop is None else pc.or_(drop, hit)
        if drop is not None:
            table = table.filter(pc.invert(drop))
    return pa.table({name: table.column(source) for name, source in mapping.items()})


def _check_enough(train: TrainConfig, rows: int) -> None:
    from interlingua.core.errors import UserError

    needed = train.batch_size * train.num_workers
    if rows < needed:
        raise UserError(f"{rows} training rows, fewer than one global batch (train.batch_size {train.batch_size} x "
                        f"train.num_workers {train.num_workers} = {needed}); use a larger corpus or a smaller batch")


def _evaluate(config: TrainWorkflowConfig, base_uri: str, result, pack: Path, run_id: str, out_dir: Path,
              stable: list[str], heldout: dict | None, train: TrainConfig, language: str) -> tuple[list[dict], dict | None]:
    """Base vs tuned: the pack table (``config.evaluate``) and word retrieval on the held-out rows (``heldout``);
    returns the card rows (word retrieval last) and the word-retrieval document (None without held-out rows)."""
    from interlingua.core.runtime import state_dir
    from interlingua.models.load import load_encoder
    from interlingua.workflows import word_retrieval_check as words
    from interlingua.workflows.pack_eval import cacheable, compare_on_pack

    base, tuned = load_encoder(base_uri), load_encoder(result.encoder_dir)
    base.name = base_uri  # the embedding cache is keyed by the encoder's name
    rows: list[dict] = []
    if config.evaluate:
        rows = compare_on_pack({"base": (base, cacheable(base_uri, stable)), "tuned": (tuned, False)}, pack, config,
                               state_dir(config.state_dir), run_id, out_dir / "evaluation", "base", "tuned")
    if not heldout:
        return rows, None
    target_map, mapped_layer = words.linear_target_map(result.extras)
    layer = mapped_layer if target_map is not None else words.word_layer(train)
    results = words.measure({"base": base, "tuned": tuned}, heldout, layer, {"tuned": target_map})
    document = words.report(results, heldout["id"], layer, config.word_retrieval_seed, language, run_id,
                            out_dir / "evaluation")
    return [*rows, words.card_row(document)], document
