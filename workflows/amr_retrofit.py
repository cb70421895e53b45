"""Workflow ``amr-retrofit``: train the AMR encoder of Cai et al. 2022 on an ``amr-corpus`` version.

Steps:

1. Read the corpus version (``corpus``, ``version``; default the latest ``amr-corpus``).
2. Count the AMR relations and PropBank frames of its linearized graphs; those occurring at least
   ``min_symbol_count`` times (5 in the paper) become new tokens of the encoder, each initialised as the
   mean of its old sub-token embeddings. The extended encoder is saved under
   ``<state>/amr_retrofit/<mlflow run id>/extended-encoder``.
3. Group the rows into NLI triples and choose every slot's input per Algorithm 1 (mixed training:
   a uniformly drawn language; English gives its text or graph with ``english_graph_probability``,
   another language its graph). Rows without a graph (``amr-corpus`` ran without ``parser_model``)
   are simply not graph candidates: English text is always available, so the offline demo trains on
   English text only.
4. Train with the ``amr_retrofit`` objective (supervised contrastive, τ = 0.05) on the DeepSpeed-on-
   Ray-Train engine, tracked in an MLflow run; register the trained AMR encoder and point ``alias`` at it.

The summary (triples, symbols added, final loss, registered URI) is returned (the CLI prints it as JSON)
and written to ``<state>/amr_retrofit/summary.json``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import Field, field_validator

from interlingua.trainers.engine.config import TrainConfig
from interlingua.core.config import Config
from interlingua.core.names import LanguageCode, Location, RegisteredModelName, RegistryAlias, SafeName
from interlingua.core import tracking

DESCRIPTION = "retrofit a multilingual encoder with AMR graphs of an amr-corpus version (Cai et al. 2022)"
ENGLISH = "en"
CORPUS_COLUMNS = ("source_id", "role", "lang", "text", "linearized")
TRIPLE_COLUMNS = ("premise", "entailment", "contradiction")


#: This workflow's training defaults. A partial ``train`` section (YAML or ``--set train.KEY=...``) is
#: layered over them, not over ``TrainConfig``'s own defaults (whose objective is translation ranking).
TRAIN_DEFAULTS: dict[str, Any] = {
    "objective": "amr_retrofit", "temperature": 0.05, "num_workers": 2, "batch_size": 16, "max_steps": 20,
    "lr": 3e-5, "warmup_steps": 2, "max_length": 128, "freeze_embeddings": False,
}


def _amr_train() -> TrainConfig:
    return TrainConfig(**TRAIN_DEFAULTS)


class AmrRetrofitConfig(Config):
    corpus: SafeName = Field("amr-corpus", description="name of the amr-corpus corpus in the store")
    version: str | None = Field(None, description="corpus version; None: the latest")
    model: Location | None = Field(None, description="encoder URI to retrofit; default: the e5-small asset")
    languages: list[LanguageCode] | None = Field(
        None, description="languages the mixing draws from (English always included); None: all in the corpus")
    min_symbol_count: int = Field(5, ge=1, description="occurrences for a relation/frame to become a token")
    english_graph_probability: float = Field(0.5, ge=0, le=1,
                                             description="chance an English slot uses its graph, not its text")
    registered_model: RegisteredModelName = "interlingua-amr-encoder"
    alias: RegistryAlias = "amr-retrofit"
    experiment: SafeName = "amr-retrofit"
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")
    train: TrainConfig = Field(default_factory=_amr_train)

    @field_validator("languages")
    @classmethod
    def _some_languages(cls, languages: list[str] | None) -> list[str] | None:
        if languages is not None and not languages:
            raise ValueError("give at least one language, or null for every language in the corpus")
        return languages

    @field_validator("train")
    @classmethod
    def _triple_objective(cls, train: TrainConfig) -> TrainConfig:
        if train.objective != "amr_retrofit":
            raise ValueError(f"train.objective must be 'amr_retrofit' for this workflow, got {train.objective!r}")
        return train


CONFIG = AmrRetrofitConfig


def run(config: AmrRetrofitConfig, *, address: str | None = None) -> dict[str, Any]:
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import check_tracking_store, configure_mlflow, corpus_root, init_ray, state_dir

    stages = Stages("amr-retrofit")
    state = state_dir(config.state_dir)
    check_tracking_store(state)  # an MLflow server that does not answer: exit 69 before the corpus or Ray

    with stages("corpus"):
        manifest, rows = _read_corpus(config, corpus_root(state))
        languages = _languages(config, rows)
        print(f"  corpus {manifest.name} {manifest.version}: {len(rows)} rows, languages {', '.join(languages)}")

    with stages("symbols"):
        from interlingua.trainers.objectives.amr_vocabulary import frequent_amr_symbols

        graphs = [r["linearized"] for r in rows if r["lang"] in languages and r["linearized"]]
        symbols = frequent_amr_symbols(graphs, min_count=config.min_symbol_count)
        print(f"  {len(graphs)} graphs, {len(symbols)} relations/frames occur >= {config.min_symbol_count} times")

    with stages("mixing"):
        from interlingua.trainers.objectives.amr_mixing import mixed_triples

        def draw(index: int) -> tuple[list[dict], Any]:
            return mixed_triples(rows, languages, english=ENGLISH,
                                 english_graph_probability=config.english_graph_probability,
                                 seed=config.train.seed + index)

        triples, counts = draw(0)
        print(f"  {len(triples)} triples ({counts['skipped_missing_english']} skipped without English), "
              f"{counts['inputs_graph']} graph / {counts['inputs_text']} text inputs")
        _check_enough(config.train, len(triples))
        passes, needed = mixing_passes(config.train, len(triples),
                                       sum(len(t[c]) for t in triples for c in TRIPLE_COLUMNS))
        # Algorithm 1 draws each sentence's input at every visit: one draw per pass over the triples the run makes
        draws = [triples] + [draw(index)[0] for index in range(1, passes)]
        if passes > 1:
            print(f"  {passes} passes over the triples, each with its own draw"
                  + (f" (of {needed} needed; later passes repeat these draws)" if passes < needed else ""))

    with stages("model"):
        from interlingua.workflows.model_uri import model_and_folder

        # a URI that names nothing fails here, as one line, before Ray and an MLflow run start
        model_uri, model_folder = model_and_folder(config.model, state)

    with stages("ray"):
        init_ray(address)

    import mlflow

    from interlingua.trainers.engine.fit import fit
    from interlingua.workflows.resume import resume_inputs, workflow_run
    from interlingua.workflows.train import register_trained

    experiment_id = configure_mlflow(config.experiment, state)
    # a rerun with the same config after a crash continues this MLflow run and its Ray Train run (workflows/resume.py);
    # keyed on the latest corpus version and the model folder: either moving starts anew
    resolved = resume_inputs(config, model_folder, corpus=f"{manifest.name}@{manifest.version}")
    with workflow_run("amr-retrofit", resolved, experiment_id,
                      run_name=f"amr-retrofit-{time.strftime('%Y%m%d-%H%M%S')}") as tracked:
        run_id = tracked.run_id
        with mlflow.start_run(run_id=run_id):
            out_dir = state / "amr_retrofit" / run_id
            with stages("vocabulary"):
                extended_dir, extension = _extend_encoder(model_folder, symbols, out_dir / "extended-encoder")
                print(f"  added {len(extension.added)} tokens ({len(extension.skipped)} kept aside: {extension.skipped}); "
                      f"extended encoder in {extended_dir}")
            tracking.log_params({
                "model": model_uri, "corpus": f"{manifest.name}@{manifest.version}", "languages": ",".join(languages),
                "min_symbol_count": config.min_symbol_count,
                "english_graph_probability": config.english_graph_probability,
                "symbols_frequent": len(symbols), "symbols_added": len(extension.added),
                "triples": len(triples), "triples_skipped": counts["skipped_missing_english"],
                "mixing_passes": passes, "train": config.train.model_dump(),
            })
            tracking.set_tags({"interlingua.workflow": "amr-retrofit", "corpus.version": manifest.version})
            tracking.log_dict({"added": extension.added, "skipped": extension.skipped}, "amr/vocabulary.json")
            tracking.log_dict(dict(sorted(counts.items())), "amr/mixing.json")

        with stages("train"):
            import ray.data

            dataset = ray.data.from_items(shuffled_passes(draws, config.train.seed)).materialize()
            result = fit(str(extended_dir), dataset, config.train, storage_path=state / "ray_results",
                         name=f"amr-retrofit-{run_id[:8]}", run_id=run_id)

        with stages("register"):
            # as `train` registers: the card's corpus versions keep the corpus from `corpus prune`
            registered = register_trained(result.encoder_dir, config, config.train, run_id, workflow="amr-retrofit",
                                          model_uri=model_uri, corpus=f"{manifest.name}@{manifest.version}",
                                          corpus_versions={manifest.name: manifest.version}, rows=len(triples),
                                          languages=languages, evaluation=[])

    summary = {
        "run_id": run_id,
        "model_uri": registered.uri,
        "model_version": registered.version,
        "base_model": model_uri,
        "corpus": f"{manifest.name}@{manifest.version}",
        "languages": languages,
        "triples": len(triples),
        "triples_skipped": counts["skipped_missing_english"],
        "mixing_passes": passes,
        "inputs": {"graph": counts["inputs_graph"], "text": counts["inputs_text"]},
        "symbols_added": len(extension.added),
        "symbols": extension.added,
        "extended_encoder": str(extended_dir),
        "final_loss": result.metrics.get("loss"),
        "train_metrics": {k: v for k, v in result.metrics.items() if isinstance(v, (int, float))},
        "seconds": stages.seconds,
    }
    text = json.dumps(summary, indent=2, default=str) + "\n"
    (out_dir / "summary.json").write_text(text)
    (state / "amr_retrofit" / "summary.json").write_text(text)
    print(f"amr-retrofit: done in {sum(stages.seconds.values()):.0f} s; summary in {out_dir / 'summary.json'}")
    return summary


def _read_corpus(config: AmrRetrofitConfig, root: str):
    from interlingua.operators.corpus.store import LATEST, CorpusLookupError, CorpusStore
    from interlingua.core.errors import UserError

    store = CorpusStore(root)
    try:
        manifest = store.manifest(config.corpus, config.version or LATEST)
    except CorpusLookupError as err:
        raise UserError(f"{err}\nbuild the corpus first: interlingua run amr-corpus") from None
    missing = [c for c in CORPUS_COLUMNS if c not in manifest.columns]
    if missing:
        raise UserError(f"{manifest.name}@{manifest.version} is not an amr-corpus version: it lacks columns {missing} "
                        f"(has {list(manifest.columns)})")
    table = store.read_table(manifest.name, manifest.version, columns=list(CORPUS_COLUMNS))
    rows = [{c: str(v or "") for c, v in row.items()} for row in table.to_pylist()]
    return manifest, rows


def _languages(config: AmrRetrofitConfig, rows: list[dict]) -> list[str]:
    from interlingua.core.errors import UserError

    present = {r["lang"] for r in rows}
    if ENGLISH not in present:
        raise UserError(f"the corpus has no English ({ENGLISH!r}) rows; mixed training needs them "
                        f"(languages present: {sorted(present)})")
    chosen = config.languages if config.languages is not None else sorted(present)
    unknown = sorted(set(chosen) - present)
    if unknown:
        raise UserError(f"languages {unknown} are not in the corpus (present: {sorted(present)})")
    return [ENGLISH] + [lang for lang in dict.fromkeys(chosen) if lang != ENGLISH]


MAX_MIXED_TEXT = 256 * 2**20  # characters of all draws held at once on the driver; beyond, later passes repeat


def mixing_passes(train: TrainConfig, triples: int, text_chars: int) -> tuple[int, int]:
    """(passes to draw, passes the run makes over ``triples`` rows of ``text_chars`` characters): ``train.max_steps``
    steps of ``batch_size`` rows on each of ``num_workers`` workers, each worker dropping its last partial batch;
    the passes drawn stop at :data:`MAX_MIXED_TEXT` characters (the driver holds every draw)."""
    steps_per_pass = max(1, triples // (train.batch_size * train.num_workers))
    needed = -(-train.max_steps // steps_per_pass)
    return max(1, min(needed, MAX_MIXED_TEXT // max(1, text_chars))), needed


def shuffled_passes(draws: list[list[dict]], seed: int) -> list[dict]:
    """The draws' triples (their three text columns) pass after pass, each pass in its own seeded order."""
    import random

    rows = []
    for index, triples in enumerate(draws):
        order = list(range(len(triples)))
        random.Random(seed + index).shuffle(order)
        rows.extend({c: triples[i][c] for c in TRIPLE_COLUMNS} for i in order)
    return rows


def _check_enough(train: TrainConfig, triples: int) -> None:
    from interlingua.core.errors import UserError

    needed = train.batch_size * train.num_workers
    if triples < needed:
        raise UserError(f"{triples} training triples, fewer than one global batch (train.batch_size "
                        f"{train.batch_size} x train.num_workers {train.num_workers} = {needed}); use a larger "
                        f"corpus or a smaller batch")


def _extend_encoder(model_folder: str, symbols: list[str], target):
    """Load the encoder, add ``symbols`` to its vocabulary (mean sub-token init), save it to ``target``."""
    from interlingua.models.load import load_encoder
    from interlingua.trainers.objectives.amr_vocabulary import VocabularyExtension, extend_vocabulary

    encoder = load_encoder(model_folder)
    # no symbols (a corpus without graphs): keep the encoder as it is, embedding matrix included
    extension = extend_vocabulary(encoder.tokenizer, encoder.transformer, symbols) if symbols else VocabularyExtension()
    encoder.save(target)
    return target, extension
