"""``interlingua eval``: evaluate one or more encoders on the benchmark pack over seeds."""

from __future__ import annotations

import argparse
import sys

HELP = "evaluate encoders on the benchmark pack (table, JSON, PNG; MLflow when --mlflow-run is given)"
DESCRIPTION = (HELP + ". Model specs: use, minilm, st:PATH, wordvec:PATH, spacy:MODEL, models:/NAME@ALIAS, "
               "a model folder/URI, MODE(A|B) with MODE in concat, sum, norm_concat, norm_sum, py:module:factory.")


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds must be comma-separated integers; got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("--seeds must name at least one seed")
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:  # a seed counted twice would weigh its run double in the mean and the spread
        raise argparse.ArgumentTypeError(f"--seeds names {', '.join(map(str, repeated))} more than once; give each "
                                         "seed once")
    if any(v < 0 or v >= 2**31 for v in values):
        raise argparse.ArgumentTypeError(f"--seeds must be integers from 0 to {2**31 - 1}; got {text!r}")
    return values


def _name_list(text: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError("expected a comma-separated list with at least one name")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, type=_name_list, help="comma-separated model specs (several -> one comparison table)")
    parser.add_argument("--tasks", type=_name_list, default=["all"], help="task names, kinds or wildcards from the pack manifest (default: all)")
    parser.add_argument("--seeds", type=_int_list, default=[1, 2, 3], help="comma-separated seeds (default 1,2,3)")
    parser.add_argument("--pack", default="bench-pack", help="benchmark pack directory, built by `interlingua bench-pack` "
                        "(default ./bench-pack, that command's default --out; the one workflows build is "
                        "<state>/bench-pack, e.g. .interlingua/bench-pack); ignored when missing and --data is given")
    parser.add_argument("--data", action="append", default=[], metavar="NAME=DIR",
                        help="official benchmark files: NAME in sts17, tatoeba, bucc, mewsc16, wmt20qe, mldoc, xnli, pawsx, marc, qam "
                             "(files under their distributed names; DIR a local folder or an fsspec URL: file://, s3://, "
                             "gs://, hf://, ...; repeatable)")
    parser.add_argument("--out", default="eval-results", help="output directory for results.json, results.png, results.txt (default %(default)s)")
    parser.add_argument("--cache-dir", default=None, help="embedding cache directory (default: <out>/embedding-cache)")
    parser.add_argument("--no-cache", action="store_true", help="do not cache embeddings on disk")
    parser.add_argument("--mlflow-run", default=None, help="MLflow run id to log metrics and artifacts into")


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from interlingua.evaluation.report.chart import write_chart
    from interlingua.evaluation.report.mlflow_log import log_to_mlflow
    from interlingua.evaluation.report.summary import format_table, results_document
    from interlingua.evaluation.runner import evaluate_models, select_tasks
    from interlingua.core.errors import UserError
    from interlingua.core.runtime import use_tracking_store
    from interlingua.models.resolve import check_registered_uris

    for spec in args.model:  # a models:/ URI of neither form: one line before the server is probed
        check_registered_uris(spec)
    use_tracking_store()  # models:/ specs and --mlflow-run resolve against the workflows' store
    out = Path(args.out)
    cache_dir = Path(args.cache_dir) if args.cache_dir else out / "embedding-cache"
    from interlingua.core.inputs import require_writable
    from interlingua.core.made_folders import folders_made_for

    try:
        tasks = select_tasks(_available_tasks(args), args.tasks)  # a bad task name fails before any model loads
    except ValueError as err:  # and before --out is made: a refused command leaves no folder behind
        raise UserError(str(err)) from err
    with folders_made_for([str(out), *([] if args.no_cache else [str(cache_dir)])]):  # removed if it fails, when empty
        require_writable(str(out), "--out folder")  # before the evaluation, not after it
        if not args.no_cache:
            require_writable(str(cache_dir), "embedding cache folder")
        if args.mlflow_run:
            _require_run(args.mlflow_run)
        try:
            encoders = model_encoders(args.model, None if args.no_cache else cache_dir)
            measurements = evaluate_models(encoders, tasks, args.seeds)
        except ValueError as err:
            raise UserError(str(err)) from err
    table = format_table(measurements)
    print(table)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.txt").write_text(table + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results_document(measurements, args.seeds), indent=2, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    chart = write_chart(measurements, out / "results.png")
    print(f"wrote {out / 'results.json'}, {chart}", file=sys.stderr)
    if args.mlflow_run:
        log_to_mlflow(args.mlflow_run, measurements, [out / "results.json", out / "results.txt", chart])
    return 0


def model_encoders(specs, cache_dir) -> dict:
    """``{label: encoder}`` of the ``--model`` specs, each single encoder (a combination's parts too) in the embedding
    cache at ``cache_dir`` (None: no cache), one cache per encoder name, shared by combinations. Labels name the
    columns, metrics and files: a spec's credentials are masked there."""
    from interlingua.core.redact import redact_text
    from interlingua.models.cache import CachedEncoder
    from interlingua.models.resolve import resolve_encoder

    caches: dict[str, CachedEncoder] = {}
    wrap = None if cache_dir is None else (lambda encoder: caches.setdefault(encoder.name,
                                                                             CachedEncoder(encoder, cache_dir)))
    return {redact_text(spec): resolve_encoder(spec, wrap_leaf=wrap) for spec in specs}


def _require_run(run_id: str) -> None:
    """:class:`UserError` when ``--mlflow-run`` names no run of the tracking store (checked before evaluating)."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    from interlingua.core.errors import UserError

    try:
        MlflowClient().get_run(run_id)
    except MlflowException:
        raise UserError(f"--mlflow-run {run_id}: no such run in the tracking store (hint: the run id from `mlflow ui` "
                        "or a workflow's summary, with MLFLOW_TRACKING_URI set as it was)") from None


def _available_tasks(args: argparse.Namespace) -> list:
    """Pack tasks (when the pack exists or no --data is given) followed by the --data benchmarks."""
    from pathlib import Path

    from interlingua.evaluation.tasks.official_suite import discover_official_tasks
    from interlingua.evaluation.tasks.pack_tasks import pack_task_specs

    tasks = pack_task_specs(args.pack) if Path(args.pack).is_dir() or not args.data else []
    for item in args.data:
        name, sep, directory = item.partition("=")
        if not sep:
            raise ValueError(f"--data must be NAME=DIR; got {item!r}")
        tasks += discover_official_tasks(name.strip(), directory.strip())
    seen: set[tuple[str, str]] = set()
    for task in tasks:  # the same benchmark given twice would be pooled as if its two runs were seeds
        if (task.name, task.language) in seen:
            raise ValueError(f"{task.name} {task.language} is given twice (a repeated --data, or --data naming a "
                             "benchmark the pack holds too); give each once")
        seen.add((task.name, task.language))
    return tasks
