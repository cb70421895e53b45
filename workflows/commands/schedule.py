"""``interlingua schedule refresh SPEC --cron "0 3 * * *"``: refresh a corpus on a schedule, locally.

A long-running process (APScheduler): each run is ``interlingua refresh SPEC`` in a child process, its
output appended to a log file under the state folder (path printed) and its result (the version published,
nothing new, or why it failed) logged on one line; a run due while the previous is still going is skipped
and logged. ``--max-runs N`` stops after N runs. The spec, the cron expression (crontab semantics, UTC) and
``--address`` are checked before the first wait. On a cluster use the CronJob in ``cluster/`` instead.
"""

from __future__ import annotations

import argparse

HELP = "run a corpus refresh on a cron schedule (long-running, local)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="schedule_action", required=True, metavar="{refresh}")
    refresh = actions.add_parser("refresh", help="interlingua refresh SPEC at every fire time of --cron")
    refresh.add_argument("spec", help="refresh spec YAML")
    refresh.add_argument("--cron", required=True, help='crontab expression, e.g. "0 3 * * *" (UTC); 6 fields = seconds first')
    refresh.add_argument("--max-runs", type=int, default=None, help="stop after N finished runs")
    refresh.add_argument("--log", default=None, help="log file (default: <state>/logs/schedule-refresh-<spec>.log)")
    refresh.add_argument("--address", help="Ray cluster address passed to each refresh")


def run(args: argparse.Namespace) -> int:
    import os
    import subprocess
    import sys
    from pathlib import Path

    from interlingua.core.errors import UserError
    from interlingua.core.runtime import check_cluster_address, state_dir
    from interlingua.workflows.local_schedule import cron_trigger, run_schedule
    from interlingua.workflows.refresh import load_spec

    load_spec(args.spec)  # a bad spec fails now, not at 3 am
    cron_trigger(args.cron)
    if args.max_runs is not None and args.max_runs < 1:
        raise UserError(f"--max-runs must be >= 1, got {args.max_runs}")
    check_cluster_address(args.address, command="schedule")  # a wrong --address / $RAY_ADDRESS fails now, as `run` does
    log_path = Path(args.log) if args.log else state_dir() / "logs" / f"schedule-refresh-{Path(args.spec).stem}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    print(f"[schedule] logging every run to {log_path}")
    command = [sys.executable, "-m", "interlingua.workflows.cli", "refresh", args.spec, "--json"]
    if args.address:
        command += ["--address", args.address]

    def log(line: str) -> None:
        print(line, flush=True)
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def one_refresh() -> int:
        result = subprocess.run(command, capture_output=True, text=True, check=False, env=os.environ.copy())
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write(result.stdout + result.stderr)
        log(f"[schedule]   {refresh_outcome(result.returncode, result.stdout, result.stderr)}")
        return result.returncode

    history = run_schedule(args.cron, one_refresh, max_runs=args.max_runs, log=log)
    return 0 if all(item.get("exit", 0) == 0 for item in history) else 1


def refresh_outcome(returncode: int, stdout: str, stderr: str) -> str:
    """One line saying what a child ``interlingua refresh --json`` did: the version it published, nothing
    new, or why it failed. Why: its last output line is the CLI's log-file footer, not the result."""
    if returncode == 0:
        summary = _json_summary(stdout)
        if summary is None:
            return "refresh finished (exit 0; no summary printed)"
        corpus, version = summary.get("corpus"), summary.get("version")
        if summary.get("published"):
            return (f"refresh published {corpus}/{version} ({summary.get('mode')}, {summary.get('rows')} rows, "
                    f"{summary.get('shards_reused')} shard(s) reused)")
        return f"refresh: nothing new; {corpus} stays at {version}"
    return f"refresh failed (exit {returncode}): {_failure_reason(stderr + stdout)}"


def _json_summary(stdout: str) -> dict | None:
    """The JSON object ``--json`` prints last on stdout (indented: its first line is a lone ``{``)."""
    import json

    lines = stdout.splitlines()
    starts = [k for k, line in enumerate(lines) if line == "{"]
    if not starts:
        return None
    try:
        summary = json.loads("\n".join(lines[starts[-1]:]))
    except json.JSONDecodeError:
        return None
    return summary if isinstance(summary, dict) else None


def _failure_reason(output: str) -> str:
    """The CLI's one-line error (``interlingua refresh: error: ...`` / ``failed: ...``), else the last line
    that is not the log-file footer."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        for marker in ("interlingua refresh: error: ", "interlingua refresh: failed: "):
            if line.startswith(marker):
                return line[len(marker):]
    others = [line for line in lines if not line.startswith("[interlingua] full log:")]
    return others[-1] if others else "(no output)"
