"""Quickstart: Bible bitext -> corpus version -> DeepSpeed fine-tune on Ray Train in an MLflow run -> retrieval
accuracy, base vs tuned -> registry alias, under the model card ``train`` gives (the corpus version it trained on).

Runs on the embedded defaults (local Ray, local MLflow, CPU) in a few minutes on 2 cores.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import Field

from interlingua.trainers.engine.config import TrainConfig
from interlingua.core.config import Config
from interlingua.core.names import Location, RegisteredModelName, RegistryAlias, SafeName
from interlingua.core import tracking

DESCRIPTION = "fine-tune multilingual-e5-small on the en-es Bible with translation ranking; evaluate; register"


def _quickstart_train() -> TrainConfig:
    return TrainConfig(objective="translation_ranking", num_workers=2, batch_size=16, max_steps=24, lr=3e-5,
                       warmup_steps=2, max_length=64, freeze_embeddings=True)


class QuickstartConfig(Config):
    model: Location | None = Field(None, description="encoder URI; default: the e5-small asset")
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")
    bitext: Location | None = Field(None, description="parquet with columns id, en, es; default: the Bible asset")
    debian_reference_dir: str | None = Field(
        None, description="folder of debian-reference-en-XX.parquet files; default: the asset")
    corpus_name: SafeName = "bible-en-es"
    rows_per_shard: int = Field(4096, ge=1)
    max_length_ratio: float = Field(3.0, ge=1.0, description="hygiene: max token-length ratio of a pair")
    experiment: SafeName = "quickstart"
    registered_model: RegisteredModelName = "interlingua-e5-small-bible"
    alias: RegistryAlias = "quickstart"
    eval_bible_pairs: int = Field(500, ge=10, description="held-out Bible verses evaluated (those whose text is "
                                  "in no training verse)")
    eval_debian_pairs: int = Field(300, ge=10, description="debian-reference pairs per language evaluated")
    eval_batch_size: int = Field(32, ge=1)
    train: TrainConfig = Field(default_factory=_quickstart_train)


CONFIG = QuickstartConfig


def preflight(config: QuickstartConfig) -> None:
    """The settings' own mistakes: an objective that reads columns the Bible corpus lacks."""
    from interlingua.core.errors import UserError
    from interlingua.workflows.train import objective_columns

    needed = objective_columns(config.train)
    missing = [c for c in needed if c not in CORPUS_COLUMNS]
    if missing:
        raise UserError(f"objective {config.train.objective!r} reads columns {list(needed)}; the quickstart's Bible "
                        f"corpus has only {list(CORPUS_COLUMNS)} (lacks {missing}): choose a bitext objective such as "
                        f"translation_ranking, or use `interlingua run train` with a corpus that has them")


def environment_preflight(config: QuickstartConfig) -> None:
    """For a run on this machine: the resources its training asks of a local Ray."""
    from interlingua.workflows.train import check_local_resources

    check_local_resources(config.train)


def input_preflight(config: QuickstartConfig) -> None:
    """The given bitext (a Parquet with its columns) and debian-reference folder, not the assets a recipe's earlier
    stage may build: before a recipe starts."""
    from interlingua.core.inputs import require_input_files

    if _local_bitext(config):
        require_input_files([config.bitext], "bitext", local_only=True)
        _check_bitext(config.bitext)
    _debian_dir(config)


def _local_bitext(config: QuickstartConfig) -> bool:
    """Whether a bitext is given as a file on this machine (no URL): the one :func:`input_preflight` reads."""
    from interlingua.core.local_paths import is_url

    return bool(config.bitext) and not is_url(config.bitext)


def run(config: QuickstartConfig, *, address: str | None = None) -> dict:
    from interlingua.core.checked_once import check_in_run
    from interlingua.core.progress import Stages
    from interlingua.core.where_it_runs import runs_on_cluster

    preflight(config)  # the settings' and the given files' mistakes, before the assets are fetched
    # `interlingua run` checked this machine's resources and the given files just before (with input_preflight):
    # not again here, so a given bitext's schema is read once
    checked_by_command = not runs_on_cluster(address) and not check_in_run(environment_preflight, config)
    if not checked_by_command:
        input_preflight(config)
    stages = Stages("quickstart")
    from interlingua.core.inputs import require_input_files, require_writable
    from interlingua.core.runtime import (assets_dir, check_tracking_store, configure_mlflow, corpus_root, init_ray,
                                          state_dir)

    state = state_dir(config.state_dir)
    check_tracking_store(state)  # an MLflow server that does not answer: exit 69 before the assets, Ray or the corpus
    assets = assets_dir(state)

    with stages("assets"):
        model_uri, bible, debian = _ensure_assets(assets, config)
        require_input_files([str(bible)], "bitext")
        require_writable(corpus_root(state), "corpus store")
        model_folder = _check_before_ray(config, None if _local_bitext(config) else bible, state)
        test, left_out = _test_verses(bible, config.eval_bible_pairs)

    with stages("ray"):
        init_ray(address)

    with stages("corpus"):
        manifest, heldout = _publish_corpus(config, corpus_root(state), bible)
        print(f"  corpus {manifest.name} {manifest.version}: {manifest.total_rows} training pairs, "
              f"{manifest.total_rejects} rejected, {len(heldout)} held out{left_out}")

    import mlflow

    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.trainers.engine.fit import fit
    from interlingua.workflows.resume import resume_inputs, workflow_run
    from interlingua.workflows.train import register_trained

    experiment_id = configure_mlflow(config.experiment, state)
    # A rerun with the same config after a crash continues the same MLflow run, and with it the Ray Train
    # run named after it, which resumes from its last complete checkpoint (workflows/resume.py); keyed on the
    # corpus version published and the model folder resolved, so another bitext or a moved alias starts anew.
    resolved = resume_inputs(config, model_folder, corpus=f"{manifest.name}@{manifest.version}")
    with workflow_run("quickstart", resolved, experiment_id,
                      run_name=f"quickstart-{time.strftime('%Y%m%d-%H%M%S')}") as tracked:
        run_id = tracked.run_id
        with mlflow.start_run(run_id=run_id):
            tracking.log_params({"model": model_uri, "corpus": f"{manifest.name}@{manifest.version}",
                                 **config.train.model_dump()})
            tracking.set_tags({"interlingua.workflow": "quickstart", "corpus.version": manifest.version})
            tracking.log_dict(json.loads(manifest.to_json()), "corpus/manifest.json")

        with stages("train"):
            dataset = CorpusStore(corpus_root(state)).read_ray(manifest.name, manifest.version, columns=["src", "tgt"])
            dataset = dataset.random_shuffle(seed=config.train.seed).materialize()
            result = fit(model_uri, dataset, config.train, storage_path=state / "ray_results",
                         name=f"quickstart-{run_id[:8]}", run_id=run_id)

        with stages("evaluate"):
            table = _evaluate(config, model_uri, result.encoder_dir, test, debian)
            report = _format_table(table)
            print(report)
            with mlflow.start_run(run_id=run_id):
                for task, scores in table.items():
                    for which in ("base", "tuned"):
                        mlflow.log_metric(f"eval.{task}.{which}", scores[which])
                tracking.log_text(report, "eval/retrieval.txt")
                tracking.log_dict(table, "eval/retrieval.json")

        with stages("register"):  # as `train` registers: the card's corpus versions keep the corpus from `corpus prune`
            registered = register_trained(result.encoder_dir, config, config.train, run_id, workflow="quickstart",
                                          model_uri=model_uri, corpus=f"{manifest.name}@{manifest.version}",
                                          corpus_versions={manifest.name: manifest.version},
                                          rows=manifest.total_rows,
                                          languages=list(BITEXT_COLUMNS[1:]),  # en, es
                                          evaluation=_card_rows(table))

    summary = {"run_id": run_id, "model_uri": registered.uri, "corpus": f"{manifest.name}@{manifest.version}",
               "train_metrics": {k: v for k, v in result.metrics.items() if isinstance(v, (int, float))},
               "retrieval": table, "seconds": stages.seconds}
    out = state / "quickstart" / "summary.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"quickstart: done in {sum(stages.seconds.values()):.0f} s; summary in {out}")
    print(f"try: interlingua embed --model {registered.uri} 'The Lord is my shepherd.' "
          f"'Jehová es mi pastor.' 'The stock market fell.' --similarity")
    return {"run_id": run_id, "model_uri": registered.uri, "summary": str(out)}


#: Columns of the quickstart's bitext Parquet (the Bible asset's); en/es become the corpus's src/tgt.
BITEXT_COLUMNS = ("id", "en", "es")
#: Columns of the corpus the quickstart publishes and trains on.
CORPUS_COLUMNS = ("src", "tgt")


def _check_before_ray(config: QuickstartConfig, bible: str | None, state: Path) -> str:
    """Mistakes the driver can see, as one line before Ray starts: a model that names nothing and a bitext without
    its columns (``bible``: the asset's or a URL; None: a given local file, which :func:`input_preflight` checked;
    :func:`preflight`, the objective's columns, and :func:`environment_preflight`, the resources a local Ray can give,
    are checked first). Returns the model's local folder."""
    from interlingua.workflows.model_uri import model_and_folder

    _, model_folder = model_and_folder(config.model, state)  # the e5-small asset missing is one line here too
    if bible is not None:
        _check_bitext(bible)
    return model_folder


def _check_bitext(bible: str) -> None:
    """A bitext (a local path or any fsspec URL, read as it is) that is no readable Parquet with the quickstart's
    columns: one line."""
    from interlingua.core.errors import UserError
    from interlingua.core.parquet_read import parquet_schema_at
    from interlingua.core.redact import redact_text

    shown = redact_text(str(bible))
    try:
        names = parquet_schema_at(bible).names
    except Exception as err:  # noqa: BLE001 - not a Parquet file, unreadable, ...
        raise UserError(redact_text(f"bitext {shown} is not a readable Parquet file: {type(err).__name__}: "
                                    f"{str(err).splitlines()[0] if str(err) else ''}")) from None
    lacking = [c for c in BITEXT_COLUMNS if c not in names]
    if lacking:
        raise UserError(f"bitext {shown} lacks columns {lacking} (it has {names}); the quickstart reads a Parquet "
                        f"with columns {list(BITEXT_COLUMNS)} (English, Spanish)")


def _debian_dir(config: QuickstartConfig) -> Path | None:
    """The given debian-reference folder (None: the asset's); one that is no folder is one line."""
    from interlingua.core.errors import UserError

    debian_dir = Path(config.debian_reference_dir).expanduser() if config.debian_reference_dir else None
    if debian_dir is not None and not debian_dir.is_dir():
        raise UserError(f"debian_reference_dir {config.debian_reference_dir} is not a folder (hint: a folder of "
                        f"debian-reference-en-XX.parquet files, or leave it unset for the asset)")
    return debian_dir


def _ensure_assets(assets: Path, config: QuickstartConfig):
    from interlingua.workflows.assets.build import (bible_path, build_assets, debian_reference_paths,
                                                     e5_model_dir)
    from interlingua.core.errors import UserError
    from interlingua.core.local_paths import path_or_url

    needed = [name for name, given in (("e5-small", config.model), ("bible", config.bitext),
                                       ("debian-reference", config.debian_reference_dir)) if not given]
    report = build_assets(assets, only=tuple(needed))
    if "bible" in report.missing:
        raise UserError(f"the quickstart needs the Bible bitext (or set bitext=...): {report.missing['bible']}")
    if "debian-reference" in report.missing:
        print(f"  debian-reference pairs unavailable, evaluating on the Bible only: {report.missing['debian-reference']}")
    debian_dir = _debian_dir(config)
    debian = {lang: (debian_dir / p.name if debian_dir else p) for lang, p in debian_reference_paths(assets).items()}
    debian = {lang: p for lang, p in debian.items() if p.exists()}
    # a URL stays one (read through fsspec); ./x.parquet is recorded (inputs, version id) as x.parquet
    bible = path_or_url(config.bitext) if config.bitext else str(bible_path(assets))
    return config.model or str(e5_model_dir(assets)), bible, debian


def _publish_corpus(config: QuickstartConfig, root: str, bible: str):
    from interlingua.workflows.bible_bitext import publish_bible_corpus

    return publish_bible_corpus(root, bible, config.corpus_name, rows_per_shard=config.rows_per_shard,
                                max_length_ratio=config.max_length_ratio)


def _test_verses(bible: str, pairs: int) -> tuple[tuple[list[str], list[str]], str]:
    """((en, es) of the first ``pairs`` test verses, a note of the held-out verses that are none): the held-out
    verses less those whose text a training verse has (the benchmark pack's rule, ``bible_test_indices``).
    ``bible``: a local path or any fsspec URL."""
    from interlingua.core.errors import UserError
    from interlingua.core.parquet_read import read_parquet_at
    from interlingua.core.redact import redact_text
    from interlingua.evaluation.pack.bible_task import bible_test_indices

    rows = read_parquet_at(bible, BITEXT_COLUMNS).to_pydict()
    kept, heldout, rejected = bible_test_indices(rows["id"], rows["en"], rows["es"])
    if not kept:
        raise UserError(f"bitext {redact_text(str(bible))}: none of its {heldout} held-out verses can be a test verse"
                        f"{': ' + _why_dropped(rejected) if rejected else ' (none held out)'}; held-out verses need "
                        "texts of their own, in no training verse and not empty")
    kept = kept[:pairs]
    # its own count of held-out verses: the corpus's count leaves out those hygiene rejected (an empty side, say)
    note = (f"; of the bitext's {heldout} held-out verses, {sum(rejected.values())} dropped from the test verses: "
            f"{_why_dropped(rejected)}") if rejected else ""
    return ([rows["en"][i] for i in kept], [rows["es"][i] for i in kept]), note


#: Why a held-out verse is no test verse, by ``bible_test_indices``'s reason.
_DROPPED_BECAUSE = {"text_in_training": "their text is in training",
                    "duplicate_text": "their text repeats an earlier test verse's",
                    "too_short": "a side is empty"}


def _why_dropped(rejected: dict[str, int]) -> str:
    """Why held-out verses are no test verse, in words with each reason's name: one reason as it is (``their text is
    in training (text_in_training)``), several with their counts (``15 as their text is in training
    (text_in_training), 1 as a side is empty (too_short)``)."""
    said = {reason: f"{_DROPPED_BECAUSE.get(reason, reason)} ({reason})" for reason in sorted(rejected)}
    if len(said) == 1:
        return next(iter(said.values()))
    return ", ".join(f"{rejected[reason]} as {words}" for reason, words in said.items())


def _evaluate(config: QuickstartConfig, base_uri: str, tuned_uri: str, test: tuple[list[str], list[str]],
              debian: dict) -> dict:
    import pyarrow.parquet as pq

    from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy
    from interlingua.models.load import load_encoder

    sets = {"bible en-es": test}
    for lang, path in sorted(debian.items()):
        t = pq.read_table(path, columns=["en", "tgt"])
        sets[f"debian-reference en-{lang}"] = (t["en"].to_pylist()[:config.eval_debian_pairs],
                                               t["tgt"].to_pylist()[:config.eval_debian_pairs])
    table: dict[str, dict] = {name: {"pairs": len(src)} for name, (src, _) in sets.items()}
    for which, uri in (("base", base_uri), ("tuned", tuned_uri)):
        encoder = load_encoder(uri)
        for name, (src, tgt) in sets.items():
            acc = bitext_retrieval_accuracy(encoder.encode(src, batch_size=config.eval_batch_size),
                                            encoder.encode(tgt, batch_size=config.eval_batch_size))
            table[name][which] = round(acc["average"], 2)
            table[name][f"{which}_src2tgt"] = round(acc["src2tgt"], 2)
            table[name][f"{which}_tgt2src"] = round(acc["tgt2src"], 2)
        print(f"  evaluated {which}: {', '.join(f'{n} {table[n][which]:.2f}' for n in sets)}", flush=True)
    return table


def _card_rows(table: dict) -> list[dict]:
    """The evaluation table as model-card rows (task, metric, pairs, base, tuned, delta), as ``train``'s card has."""
    return [{"task": name, "metric": "retrieval accuracy", "pairs": s["pairs"], "base": s["base"], "tuned": s["tuned"],
             "delta": round(s["tuned"] - s["base"], 2)} for name, s in table.items()]


def _format_table(table: dict) -> str:
    lines = ["retrieval accuracy (%, mean of both directions; Tatoeba protocol)",
             f"{'task':28s} {'pairs':>6s} {'base':>7s} {'tuned':>7s} {'delta':>7s}"]
    for name, s in table.items():
        lines.append(f"{name:28s} {s['pairs']:6d} {s['base']:7.2f} {s['tuned']:7.2f} {s['tuned'] - s['base']:+7.2f}")
    return "\n".join(lines)
