"""``interlingua run WORKFLOW [-c config.yaml] [--set key=value ...]``."""

from __future__ import annotations

import argparse
import json

HELP = "run a workflow (quickstart, bitext-corpus, amr-corpus, ease-corpus, ...)"
DESCRIPTION = (
    "Run a workflow on the embedded defaults or a given config. Config values come from the "
    "workflow's defaults, then the YAML file (-c), then --set overrides (dotted keys)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_workflow_arguments(parser)
    parser.add_argument("--address", help="Ray cluster address (default: $RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--show-config", action="store_true", help="print the resolved config and exit")
    parser.add_argument("--list-keys", action="store_true", help="list the workflow's config keys and exit")


def add_workflow_arguments(parser: argparse.ArgumentParser) -> None:
    """WORKFLOW, -c/--config and --set: how a workflow and its config are named (run, submit)."""
    from interlingua.workflows.registry import WORKFLOWS

    parser.add_argument("workflow", help=f"one of: {', '.join(sorted(WORKFLOWS))}")
    parser.add_argument("-c", "--config", help="YAML config file (local path or fsspec URL)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config value, e.g. --set train.max_steps=20 (repeatable)")


def leave_job_working_dir(state: str | None = None) -> None:
    """In a submitted Ray job, once its config is read: change to the state folder. The job runs in its unpacked
    working directory, which Ray may remove while the driver still runs (seen after Ray Train finished: every later
    cwd lookup failed)."""
    import os

    if os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR"):
        from interlingua.core.runtime import state_dir

        os.chdir(state_dir(state))


def log_state_dir(args: argparse.Namespace) -> str | None:
    """The state folder the workflow's config names (``--set state_dir=D``, else a top-level ``state_dir`` of a
    local ``-c`` file), read before the config is validated so that the command's log goes under ``D/logs``
    as its other state does; None when it names none (or the workflow has no such key: validation then says so)."""
    from pathlib import Path

    from interlingua.core.errors import UserError
    from interlingua.workflows.registry import load_workflow

    try:
        if "state_dir" not in load_workflow(args.workflow).CONFIG.model_fields:
            return None
    except UserError:
        return None
    for item in reversed(args.overrides):
        key, sep, value = item.partition("=")
        if sep and key.strip() == "state_dir":
            value = value.strip()
            return None if value.lower() in ("", "null", "none", "~") else value
    if args.config and "://" not in args.config and Path(args.config).is_file():
        import yaml

        try:
            data = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None  # the config's loading reports it
        value = data.get("state_dir") if isinstance(data, dict) else None
        return value if isinstance(value, str) and value.strip() else None
    return None


def run(args: argparse.Namespace) -> int:
    from interlingua.core.config import config_fields_help, load_config
    from interlingua.workflows.registry import load_workflow, preflight

    workflow = load_workflow(args.workflow)
    if args.list_keys:
        print("\n".join(config_fields_help(workflow.CONFIG)))
        return 0
    config = load_config(workflow.CONFIG, args.config, args.overrides)
    from interlingua.core.where_it_runs import runs_on_cluster

    # a cluster's machines are checked there; --show-config runs nothing, so it checks no machine
    preflight(workflow, config, machine=not (args.show_config or runs_on_cluster(args.address)))
    from interlingua.core.redact import redact

    if args.show_config:
        print(json.dumps(redact(config.model_dump(mode="json")), indent=2))
        return 0
    from interlingua.core.runtime import check_cluster_address

    leave_job_working_dir(getattr(config, "state_dir", None))
    check_cluster_address(args.address)  # before assets, models or Ray start (not the local Ray of an earlier command)
    summary = workflow.run(config, address=args.address)
    if summary:
        print(json.dumps(redact(summary), indent=2, default=str))
    return 0
