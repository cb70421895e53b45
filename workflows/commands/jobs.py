"""``interlingua jobs list | status ID | logs ID [--follow] | stop ID`` on a Ray cluster's job API.

The cluster is ``--address``, else ``$RAY_API_SERVER_ADDRESS``, else ``$RAY_ADDRESS`` (as ``interlingua
submit``). Exit status: 0; ``logs --follow`` exits as ``submit --wait`` does (0 succeeded, 1 failed,
3 stopped); 2 for an unknown job id, a malformed address or a rejected token; 69 (``EX_UNAVAILABLE``) for a
cluster that does not answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

HELP = "list, inspect, follow or stop Ray jobs on a cluster"
JOB_ID_HELP = "the job's submission id (the first column of `interlingua jobs list`)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from interlingua.workflows.commands.submit import add_address_argument

    actions = parser.add_subparsers(dest="jobs_action", required=True, metavar="{list,status,logs,stop}")
    list_parser = actions.add_parser("list", help="one line per job: id, status, workflow, start, duration")
    list_parser.add_argument("--json", action="store_true", help="print the jobs as JSON")
    add_address_argument(list_parser)
    status = actions.add_parser("status", help="a job's status, and why it failed")
    status.add_argument("job_id", metavar="ID", help=JOB_ID_HELP)
    status.add_argument("--json", action="store_true", help="print the job's state as JSON")
    add_address_argument(status)
    logs = actions.add_parser("logs", help="a job's log (--follow: stream it until the job ends)")
    logs.add_argument("job_id", metavar="ID", help=JOB_ID_HELP)
    logs.add_argument("--follow", "-f", action="store_true",
                      help="stream until the job ends; exit 0 if it succeeded, 1 failed, 3 stopped")
    add_address_argument(logs)
    stop = actions.add_parser("stop", help="stop a running job")
    stop.add_argument("job_id", metavar="ID", help=JOB_ID_HELP)
    stop.add_argument("--wait", action="store_true", help="wait until it has stopped")
    add_address_argument(stop)


def run(args: argparse.Namespace) -> int:
    from interlingua.cluster.jobs import JobsClient

    client = JobsClient.connect(args.address)
    action = args.jobs_action
    if action == "list":
        states = client.list()
        if args.json:
            print(json.dumps([_as_dict(s) for s in states], indent=2))
        else:
            print(format_job_table(states))
        return 0
    if action == "status":
        state = client.state(args.job_id)
        if args.json:
            print(json.dumps(_as_dict(state), indent=2))
        else:
            print(format_status(client, state))
        return 0
    if action == "logs":
        if args.follow:
            return follow_to_exit(client, args.job_id, "jobs logs")
        sys.stdout.write(client.logs(args.job_id))
        return 0
    stopped = client.stop(args.job_id)
    if not stopped:
        state = client.state(args.job_id)
        print(f"job {args.job_id} had already finished ({state.status})")
        return 0
    if args.wait:
        state = client.wait(args.job_id, poll_s=0.5)
        print(f"job {args.job_id}: {state.status}")
    else:
        print(f"stop requested for job {args.job_id}")
    return 0


def follow_to_exit(client, job_id: str, command: str) -> int:
    """Stream a job's log until it ends; print why it did not succeed; its exit code."""
    from interlingua.cluster.jobs import EXIT_CODES, failure_reason, write_stdout

    try:
        state = client.follow(job_id, write_stdout)
    except KeyboardInterrupt:
        print(f"stopped following; job {job_id} keeps running (interlingua jobs stop {job_id})", file=sys.stderr)
        return 130
    if not state.finished:
        print(f"interlingua {command}: job {job_id} is still {state.status} after its log ended; "
              f"check `interlingua jobs status {job_id}`", file=sys.stderr)
        return 1
    if state.status != "SUCCEEDED":
        reason = failure_reason(state, client.logs(job_id))
        print(f"interlingua {command}: job {job_id} {state.status.lower()}: {reason}", file=sys.stderr)
    else:
        print(f"job {job_id} succeeded in {state.seconds:.0f} s", file=sys.stderr)
    return EXIT_CODES.get(state.status, 1)


def format_job_table(states) -> str:
    if not states:
        return "no jobs"
    rows = [("JOB", "STATUS", "WORKFLOW", "STARTED", "SECONDS")]
    for s in states:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.start_time)) if s.start_time else "-"
        seconds = f"{s.seconds:.0f}" if s.seconds is not None else "-"
        rows.append((s.job_id, s.status, s.metadata.get("interlingua.workflow", "-"), started, seconds))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def format_status(client, state) -> str:
    from interlingua.cluster.jobs import failure_reason

    lines = [f"job {state.job_id}: {state.status}"]
    if state.metadata.get("interlingua.workflow"):
        lines.append(f"  workflow   {state.metadata['interlingua.workflow']} (interlingua "
                     f"{state.metadata.get('interlingua.version', '?')}, {state.metadata.get('interlingua.code', '?')})")
    lines.append(f"  entrypoint {state.entrypoint}")
    if state.seconds is not None:
        lines.append(f"  seconds    {state.seconds:.0f}")
    if state.status in ("FAILED", "STOPPED"):
        lines.append(f"  reason     {failure_reason(state, client.logs(state.job_id))}")
    return "\n".join(lines)


def _as_dict(state) -> dict:
    from dataclasses import asdict

    return asdict(state)
