"""``interlingua schedule refresh SPEC --cron "0 3 * * *"``: refresh a corpus on a schedule, locally.

A long-running process (APScheduler): each run is ``interlingua refresh SPEC`` in a child process, its
output appended to a log file under the state folder (path printed); a run due while the previous is
still going is skipped and logged. ``--max-runs N`` stops after N runs. On a cluster use the CronJob in
``cluster/`` instead.
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
    from interlingua.core.runtime import state_dir
    from interlingua.workflows.local_schedule import cron_trigger, run_schedule
    from interlingua.workflows.refresh import load_spec

    load_spec(args.spec)  # a bad spec fails now, not at 3 am
    cron_trigger(args.cron)
    if args.max_runs is not None and args.max_runs < 1:
        raise UserError(f"--max-runs must be >= 1, got {args.max_runs}")
    log_path = Path(args.log) if args.log else state_dir() / "logs" / f"schedule-refresh-{Path(args.spec).stem}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    print(f"[schedule] logging every run to {log_path}")
    command = [sys.executable, "-m", "interlingua.workflows.cli", "refresh", args.spec]
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
        last = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()][-1:] or ["(no output)"]
        print(f"[schedule]   {last[0]}", flush=True)
        return result.returncode

    history = run_schedule(args.cron, one_refresh, max_runs=args.max_runs, log=log)
    return 0 if all(item.get("exit", 0) == 0 for item in history) else 1
