"""Base-vs-tuned on the offline benchmark pack, for the workflows that train or build an encoder.

``ensure_pack`` finds (or builds, in about two seconds, from the assets) the pack; ``evaluate_pair`` runs
its tasks for a base and a tuned encoder over seeds, every text encoded once per encoder (a persistent
cache for encoders whose identity cannot change: the e5 asset, ``models:/NAME/VERSION``); ``log_pack_results`` writes the table, the JSON and
the chart and logs them, with one metric per task, to an MLflow run; ``card_rows`` is the model card's
evaluation table. ``pack_texts`` is every sentence of the pack, so training can leave them out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pydantic import Field, model_validator

from interlingua.core.config import Config
from interlingua.evaluation.tasks.records import Measurement
from interlingua.models.protocol import TextEncoder


class PackEvaluationConfig(Config):
    """The evaluation settings of a workflow that builds an encoder and compares it with its parts on the pack."""

    evaluate: bool = True
    pack: str | None = Field(None, description="benchmark pack folder; default: <state>/bench-pack (built if missing)")
    eval_tasks: list[str] = Field(default_factory=lambda: ["all"])
    eval_seeds: list[int] = Field(default_factory=lambda: [1, 2, 3], min_length=1)
    state_dir: str | None = Field(None, description="default: $INTERLINGUA_HOME or ./.interlingua")

    @model_validator(mode="after")
    def _some_tasks(self):
        require_eval_tasks(self.evaluate, self.eval_tasks)
        return self


def require_eval_tasks(evaluate: bool, tasks: list[str]) -> None:
    """ValueError when evaluation is on but ``tasks`` names none (an empty list evaluated nothing, silently)."""
    if evaluate and not tasks:
        raise ValueError("eval_tasks is empty: name at least one pack task or kind (default: all), or set evaluate: "
                         "false")


#: The sizes of the reference table in evaluation/README.md (``interlingua bench-pack --bible-pairs 500 ...``).
REFERENCE_SIZES = {"bible_pairs": 500, "debian_pairs": 200, "mining_gold_per_split": 60, "clustering_items": 400,
                   "title_lead_pairs": 200}


def ensure_pack(pack: str | None, state: Path, tasks: Sequence[str] | None = None) -> Path:
    """The pack folder: ``pack`` as given (must exist), else ``<state>/bench-pack``, built with
    :data:`REFERENCE_SIZES`, seed 0, from the assets (the Bible and debian-reference assets are built first when
    missing, so a fresh state gets every task). A default pack that was built while an asset was missing is
    rebuilt once that asset can be built: the pack is deterministic, so the tasks it had keep their bytes. One that
    another pack builder version made (its manifest's ``version``) is built again. Tasks a
    pack still lacks are named, one line each, once per process. With ``tasks`` (a workflow's ``eval_tasks``), a
    pattern that selects no task of the pack is refused too (:func:`check_tasks`), before Ray, training or an MLflow
    run start."""
    folder = _pack_folder(pack, state)
    if tasks is not None:
        check_tasks(folder, tasks)
    return folder


def _pack_folder(pack: str | None, state: Path) -> Path:
    """:func:`ensure_pack` without the task check."""
    from interlingua.core.errors import UserError

    if pack:
        if not (Path(pack) / "manifest.json").exists():
            raise UserError(f"benchmark pack {pack} has no manifest.json (build one: interlingua bench-pack --out {pack})")
        _report_skipped(Path(pack), _skipped_tasks(Path(pack)))
        return Path(pack)
    folder = state / "bench-pack"
    outdated = _outdated(folder)
    if outdated:
        print(f"benchmark pack: {folder} was built by another pack builder ({outdated}); building it again",
              flush=True)
    skipped = _skipped_tasks(folder) if (folder / "manifest.json").exists() and not outdated else None
    if skipped is None or skipped:
        from interlingua.core.runtime import assets_dir
        from interlingua.workflows.assets.build import build_assets

        assets = assets_dir(state)
        report = build_assets(assets, only=PACK_ASSETS)  # present ones are skipped; a missing one is reported
        available = {name for name in PACK_ASSETS if report.path(name)}
        if skipped is None or available & {_asset_of(task["name"]) for task in skipped}:
            skipped = _build_default_pack(assets, folder, rebuilt=skipped is not None)
    _report_skipped(folder, skipped)
    return folder


#: The assets the pack's tasks are built from (the Wikipedia tasks read an installed Python package).
PACK_ASSETS = ("bible", "debian-reference")


def _outdated(folder: Path) -> str | None:
    """"version OLD, now NEW" when the pack in ``folder`` was made by another pack builder version (its tasks may
    differ: version 2 leaves out the test verses whose text is in training), else None."""
    from interlingua.evaluation.pack.build import PACK_VERSION, read_manifest

    if not (folder / "manifest.json").exists():
        return None
    version = read_manifest(folder, note_version=False).get("version")  # rebuilt here, not noted
    return None if version == PACK_VERSION else f"version {version}, now {PACK_VERSION}"


def _skipped_tasks(folder: Path) -> list[dict]:
    from interlingua.evaluation.pack.build import read_manifest

    return list(read_manifest(folder).get("skipped") or [])


def _asset_of(task: str) -> str | None:
    """The asset a skipped task of :func:`~interlingua.evaluation.pack.build.build_pack` is built from."""
    return "bible" if task.startswith("bible") else "debian-reference" if task.startswith("debian") else None


def _build_default_pack(assets: Path, folder: Path, rebuilt: bool) -> list[dict]:
    """Build the reference-size pack next to ``folder`` and move it in place (a reader never sees half a pack);
    returns its skipped tasks."""
    import os
    import shutil

    from interlingua.core.errors import UserError
    from interlingua.evaluation.pack.build import PackSizes, build_pack

    fresh = folder.with_name(f"{folder.name}.building-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        manifest = build_pack(str(assets), str(fresh), PackSizes(**REFERENCE_SIZES), seed=0)
    except ValueError as err:
        shutil.rmtree(fresh, ignore_errors=True)
        raise UserError(f"cannot build the benchmark pack from {assets}: {err} "
                        f"(run `interlingua assets`, or set evaluate=false)") from err
    old = folder.with_name(f"{folder.name}.old-{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    fresh.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    if rebuilt:
        print(f"benchmark pack: rebuilt {folder} with the tasks whose assets are now built "
              f"({len(manifest['tasks'])} tasks)", flush=True)
    return list(manifest["skipped"])


#: (pack folder, skipped task) pairs already named by this process: a recipe reads its pack once per stage.
_NAMED: set[tuple[str, str]] = set()


def _report_skipped(folder: Path, skipped: list[dict]) -> None:
    for task in skipped:
        if (str(folder), task["name"]) in _NAMED:
            continue
        _NAMED.add((str(folder), task["name"]))
        print(f"benchmark pack: {task['name']} is not in {folder} ({task['reason']}); "
              f"results cover the other tasks only", flush=True)


def pack_texts(pack: Path) -> set[str]:
    """Every string cell of every table in the pack (whitespace-normalized)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts: set[str] = set()
    for path in sorted(pack.glob("*.parquet")):
        table = pq.read_table(path)
        for column in table.columns:
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                texts.update(normalize(t) for t in column.to_pylist() if t)
    return texts


def normalize(text: str) -> str:
    return " ".join(str(text).split())


def cacheable(uri: str, stable: Sequence[str] = ()) -> bool:
    """Whether embeddings of ``uri`` are worth keeping in the shared cache: a registered model (evaluated again as a
    base or a champion) or a known-stable path. The cache keys a model by its files' content, so a moved alias or a
    rewritten folder never gets stale vectors; a freshly trained model gets a cache that lives for one evaluation."""
    if uri.startswith("models:/"):
        return True
    return "://" not in uri and str(Path(uri).resolve()) in stable


def check_tasks(pack: Path, tasks: Sequence[str]) -> None:
    """:class:`UserError` when a pattern of ``tasks`` (``eval_tasks``) selects no task of the pack, or a selected task's
    table is missing or incomplete: checked before Ray, training or an MLflow run start, not at evaluation."""
    from interlingua.core.errors import UserError
    from interlingua.evaluation.runner import check_task_files, matching_tasks
    from interlingua.evaluation.tasks.pack_tasks import pack_task_specs

    try:
        specs = pack_task_specs(pack)
    except ValueError as err:  # a damaged manifest: its own hint (rebuild the pack), not eval_tasks'
        raise UserError(str(err)) from None
    try:
        chosen = matching_tasks(specs, list(tasks))
    except ValueError as err:
        raise UserError(f"eval_tasks: {err} (hint: --set eval_tasks=[all], or task names or kinds of the pack "
                        f"{pack})") from None
    try:
        check_task_files(chosen)
    except ValueError as err:  # its own hint: rebuild the pack
        raise UserError(str(err)) from None


def evaluate_encoders(encoders: dict[str, tuple[TextEncoder, bool]], pack: Path, tasks: Sequence[str],
                      seeds: Sequence[int], cache_dir: Path) -> list[Measurement]:
    """Measurements of every ``{label: (encoder, cache it)}`` on the pack's ``tasks`` over ``seeds``."""
    from interlingua.evaluation.runner import evaluate_models, select_tasks
    from interlingua.evaluation.tasks.pack_tasks import pack_task_specs
    from interlingua.models.cache import CachedEncoder

    import tempfile

    chosen = select_tasks(pack_task_specs(pack), list(tasks))
    # encoders not worth keeping get a cache of their own that lives for this call: each text is still
    # encoded once however many seeds and tasks use it
    with tempfile.TemporaryDirectory(prefix="interlingua-eval-") as private:
        wrapped = {label: CachedEncoder(encoder, cache_dir if cache else Path(private) / label)
                   for label, (encoder, cache) in encoders.items()}
        return evaluate_models(wrapped, chosen, list(seeds))


def log_pack_results(run_id: str | None, measurements: list[Measurement], seeds: Sequence[int], out: Path) -> str:
    """Write results.txt/.json/.png to ``out``, log them and the metrics to ``run_id``; returns the table."""
    import json

    from interlingua.evaluation.report.chart import write_chart
    from interlingua.evaluation.report.mlflow_log import log_to_mlflow
    from interlingua.evaluation.report.summary import format_table, results_document

    table = format_table(measurements)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.txt").write_text(table + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results_document(measurements, seeds), indent=2, ensure_ascii=False)
                                      + "\n", encoding="utf-8")
    chart = write_chart(measurements, out / "results.png")
    if run_id:
        log_to_mlflow(run_id, measurements, [out / "results.json", out / "results.txt", chart])
    return table


def card_rows(measurements: list[Measurement], base: str, tuned: str) -> list[dict]:
    """Primary metrics as model-card rows: task, language, metric, base, tuned (means over seeds), delta."""
    from interlingua.evaluation.report.summary import summarize

    summary = summarize(measurements)
    rows = []
    for task, lang, metric in dict.fromkeys((m.task, m.language, m.metric) for m in measurements if m.primary):
        b, t = summary.get((base, task, lang, metric)), summary.get((tuned, task, lang, metric))
        rows.append({"task": task, "language": lang, "metric": metric,
                     "base": round(b.mean, 2) if b else None, "tuned": round(t.mean, 2) if t else None,
                     "delta": round(t.mean - b.mean, 2) if b and t else None})
    return rows


def compare_on_pack(encoders: dict[str, tuple[TextEncoder, bool]], pack: Path, config, state: Path, run_id: str,
                    out_dir: Path, base: str, candidate: str) -> list[dict]:
    """Evaluate ``encoders`` on the pack (``config.eval_tasks`` over ``config.eval_seeds``), print and log the table to ``run_id`` and
    ``out_dir``, and return the model-card rows of ``candidate`` against ``base``."""
    measurements = evaluate_encoders(encoders, pack, config.eval_tasks, config.eval_seeds, state / "embedding-cache")
    print(log_pack_results(run_id, measurements, config.eval_seeds, out_dir))
    return card_rows(measurements, base, candidate)
