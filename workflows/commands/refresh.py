"""``interlingua refresh CORPUS_SPEC.yaml``: a new corpus version from new or changed inputs only.

Exit status 0 when a version was published or nothing was new (it says which), 2 on a bad spec or
missing input (one line), 1 when the build failed (``latest`` still names the previous version; the
next run resumes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

HELP = "refresh a corpus from its spec: only new or changed inputs are processed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", help="refresh spec YAML (workflow, inputs, config, keep_versions, relearn_share)")
    parser.add_argument("--address", help="Ray cluster address (default: $RAY_ADDRESS, else a local Ray)")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as JSON, alone on stdout (the progress lines go to stderr)")


def run(args: argparse.Namespace) -> int:
    from interlingua.core.runtime import check_cluster_address
    from interlingua.workflows.commands.run_workflow import leave_job_working_dir
    from interlingua.workflows.refresh import load_spec, refresh

    spec = load_spec(args.spec)
    leave_job_working_dir()  # `submit refresh`: the spec came in the job's package
    # before the inputs are listed and fingerprinted (minutes over a bucket), as `run` does
    check_cluster_address(args.address, command="refresh")
    if not args.json:
        refresh(spec, address=args.address)
        return 0
    # stdout holds the JSON document alone: the summary lines and the stages' lines go to stderr
    with contextlib.redirect_stdout(sys.stderr):
        summary = refresh(spec, address=args.address)
    print(json.dumps(summary, indent=2, default=str))
    return 0
