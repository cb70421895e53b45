"""``interlingua submit WORKFLOW [-c cfg.yaml] [--set k=v ...] [--address http://HEAD:8265] [--wait]``.

The config is resolved and validated here (a bad key fails before anything is sent), checked for a
remote cluster (paths on shared storage, an MLflow server the cluster reaches) and shipped with the job,
which runs ``interlingua run WORKFLOW -c <that config>`` on the cluster through Ray's job API.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HELP = "submit a workflow as a Ray job to a cluster (Ray's job API; --wait streams its log)"
DESCRIPTION = (
    "Resolve and validate a workflow's config here, then run it on a Ray cluster as a job "
    "(`interlingua run WORKFLOW` on the cluster; `submit refresh -c SPEC.yaml` runs `interlingua refresh` on "
    "that refresh spec there). The cluster is --address, else $RAY_API_SERVER_ADDRESS, "
    "else $RAY_ADDRESS; Ray's token (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) is sent when "
    "present. Paths in the config must be shared storage (s3://, gs://, or under a --shared-path mount). "
    "Exit status with --wait: 0 succeeded, 1 failed, 3 stopped; 2 for a mistake caught before submitting."
)


#: ``interlingua submit refresh -c SPEC.yaml``: the job runs ``interlingua refresh`` on the spec (shipped in its package).
REFRESH = "refresh"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from interlingua.workflows.commands.run_workflow import add_workflow_arguments

    add_workflow_arguments(parser)
    add_address_argument(parser)
    parser.add_argument("--wait", action="store_true",
                        help="stream the job's log until it ends; exit 0 if it succeeded, 1 failed, 3 stopped")
    parser.add_argument("--ship-code", action="store_true",
                        help="ship this source checkout with the job (development) instead of using the "
                             "interlingua installed in the cluster's image")
    parser.add_argument("--shared-path", action="append", default=[], metavar="DIR",
                        help="a folder mounted at the same path on this machine and every node (repeatable); "
                             "paths under it may appear in the config")
    parser.add_argument("--state-dir", metavar="DIR",
                        help="the job's state directory (INTERLINGUA_HOME: corpora, checkpoints) on shared "
                             "storage; default: the cluster image's INTERLINGUA_HOME")
    parser.add_argument("--tracking-uri", metavar="URI",
                        help="MLflow server for the job (default: $MLFLOW_TRACKING_URI)")
    parser.add_argument("--env", dest="env", action="append", default=[], metavar="NAME=VALUE",
                        help="an extra environment variable for the job (repeatable; no secrets)")
    parser.add_argument("--num-cpus", type=float, default=None, help="CPUs reserved for the job's driver")
    parser.add_argument("--num-gpus", type=float, default=None, help="GPUs reserved for the job's driver")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate and print the job (entrypoint, environment, config) without submitting")


def add_address_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--address", metavar="URL",
                        help="the cluster's dashboard, e.g. http://HEAD:8265 (default: $RAY_API_SERVER_ADDRESS, "
                             "else $RAY_ADDRESS, else http://127.0.0.1:8265)")


def run(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from interlingua.cluster.job_package import WorkflowJob, build_package, check_config, check_env, refuse_credentials
    from interlingua.cluster.shared_storage import SharedStorage, require_shared_paths, require_tracking_uri
    from interlingua.core.config import load_config
    from interlingua.workflows.cli import _version as cli_version
    from interlingua.workflows.registry import load_workflow, preflight

    _check_resources(args)
    if not args.dry_run:  # its form, before the config, the notes and the package (a dry run contacts nothing)
        from interlingua.cluster.connection import resolve_address

        resolve_address(args.address)
    command = "refresh" if args.workflow == REFRESH else "run"
    if command == "refresh":  # -c is a refresh spec: the job runs `interlingua refresh SPEC` on the cluster
        from interlingua.workflows.refresh import RefreshSpec, load_spec

        config = load_spec(args.config, args.overrides, check=check_config)
        name = config.workflow
        workflow = load_workflow(name)
        config_class = RefreshSpec
    else:
        name = args.workflow
        workflow = load_workflow(name)
        # -c FILE and --set merged, before validation (whose errors show values): the config travels with the job
        config = load_config(workflow.CONFIG, args.config, args.overrides, check=check_config)
        from interlingua.core.where_it_runs import checking_for_a_job

        with checking_for_a_job():  # not this machine's store either
            preflight(workflow, config, machine=False)  # what the cluster's machines have: the job checks it there
        config_class = workflow.CONFIG
    # A dry run may check a command meant for another machine (a CronJob pod that mounts the share): a missing
    # --shared-path is a note there, and refused when submitting.
    storage = SharedStorage.declare(args.shared_path, must_exist=not args.dry_run)
    for mount in storage.mounts:
        if not Path(mount).is_dir():
            print(f"note: --shared-path {mount} is not a folder on this machine; submitting from here would refuse it",
                  file=sys.stderr)
    defaults = _defaults(config_class)
    resolved = require_shared_paths(config.model_dump(mode="json"), defaults, storage)
    env = check_env(dict(_pair(item, "--env") for item in args.env))
    uses_mlflow = bool({"experiment", "registered_model"} & set(workflow.CONFIG.model_fields))
    setting = "--tracking-uri" if args.tracking_uri else "MLFLOW_TRACKING_URI"
    uri = require_tracking_uri(args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI"), storage, needed=uses_mlflow,
                               setting=setting)
    if uri:
        env["MLFLOW_TRACKING_URI"] = uri
    if args.state_dir:
        refuse_credentials("--state-dir ...", args.state_dir)
        env["INTERLINGUA_HOME"] = storage.shared_path("--state-dir", args.state_dir)
    elif not args.dry_run:
        print("note: the job keeps its state (corpora, checkpoints) in the cluster's INTERLINGUA_HOME "
              "(the image's /mnt/interlingua/state); choose it with --state-dir", file=sys.stderr)
    job = WorkflowJob(name, resolved, cli_version(), env, ship_code=args.ship_code, command=command)

    with tempfile.TemporaryDirectory(prefix="interlingua-job-") as tmp:
        package = build_package(job, Path(tmp) / "job")
        if package.shipped is not None:
            print(package.shipped.line(), file=sys.stderr)
        if args.dry_run:
            shown = {k: v for k, v in package.runtime_env.items() if k != "working_dir"}
            print(json.dumps({"entrypoint": package.entrypoint, "runtime_env": shown, "metadata": package.metadata,
                              "config": resolved}, indent=2))
            return 0
        from interlingua.cluster.jobs import JobsClient

        client = JobsClient.connect(args.address)
        job_id = client.submit(entrypoint=package.entrypoint, runtime_env=package.runtime_env,
                               metadata=package.metadata, submission_id=package.submission_id,
                               entrypoint_num_cpus=args.num_cpus, entrypoint_num_gpus=args.num_gpus)
    what = name if command == "run" else f"refresh of a {name} corpus"
    print(f"submitted job {job_id} ({what}) to {client.address.shown}", file=sys.stderr, flush=True)
    if not args.wait:
        print(job_id)
        print(f"follow it: interlingua jobs logs {job_id} --follow", file=sys.stderr)
        return 0
    from interlingua.workflows.commands.jobs import follow_to_exit

    return follow_to_exit(client, job_id, "submit")


def _check_resources(args: argparse.Namespace) -> None:
    """``--num-cpus`` a positive number, ``--num-gpus`` a non-negative one (0: none), before anything is sent."""
    import math

    from interlingua.core.errors import UserError

    for flag, value, unit, least in (("--num-cpus", args.num_cpus, "CPUs", "a positive number"),
                                     ("--num-gpus", args.num_gpus, "GPUs", "0 or a positive number")):
        if value is None:
            continue
        if not math.isfinite(value) or value < 0 or (flag == "--num-cpus" and value == 0):
            raise UserError(f"{flag} {value:g}: the {unit} reserved for the job's driver must be {least} "
                            f"(e.g. {flag} 1 or 0.5); leave {flag} out for Ray's default")


def _pair(item: str, flag: str) -> tuple[str, str]:
    from interlingua.core.errors import UserError

    name, sep, value = item.partition("=")
    if not sep or not name:
        raise UserError(f"{flag} expects NAME=VALUE, got {item!r}")
    return name, value


def _defaults(config_class) -> dict:
    """The workflow's default config as plain data ({} when a key has no default: every value is checked)."""
    try:
        return config_class().model_dump(mode="json")
    except ValueError:  # a key without a default: ConfigError (a config built from Python)
        return {}
