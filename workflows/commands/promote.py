"""``interlingua promote``: move a registry alias to a candidate version only if it measures better."""

from __future__ import annotations

import argparse
import sys

from interlingua.workflows.commands.eval import _available_tasks, _int_list, _name_list

HELP = "evaluate a registered version against the alias's holder and move the alias only if it is better"
DESCRIPTION = (HELP + ". The alias moves when the candidate is worse than the holder by at most --margin on every "
               "gating task and better on their mean; an alias with no holder is a first promotion. The decision "
               "(both score tables, data versions, commit) is recorded as tags on the candidate version and an MLflow "
               "run in the 'interlingua-promotion' experiment. Exit 0: promoted (or would be, with --dry-run); "
               "1: not promoted (or the alias moved to another version during the evaluation: rerun); 2: a "
               "mistake, caught before the alias moves (a malformed candidate URI, a version that does not exist, an "
               "invalid alias, an unknown task, a negative or non-finite --margin); 69: a registry that did not answer.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="models:/NAME/VERSION", help="the candidate version")
    parser.add_argument("--alias", required=True, help="the alias to move, e.g. champion")
    parser.add_argument("--tasks", required=True, type=_name_list,
                        help="gating tasks: names, kinds or wildcards of the pack / --data tasks (as in `interlingua eval`)")
    parser.add_argument("--margin", type=float, default=0.0,
                        help="how much worse (in the metric's points) the candidate may be on any one task (default 0)")
    parser.add_argument("--seeds", type=_int_list, default=[1], help="comma-separated seeds (default 1)")
    parser.add_argument("--pack", default="bench-pack",
                        help="benchmark pack directory, as in `interlingua eval` (default ./bench-pack)")
    parser.add_argument("--data", action="append", default=[], metavar="NAME=DIR",
                        help="official benchmark files, as in `interlingua eval` (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="evaluate and show the decision; change and record nothing")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from interlingua.cluster.promotion import data_fingerprint, parse_version_uri, promote
    from interlingua.core.errors import UserError
    from interlingua.core.runtime import use_tracking_store
    from interlingua.evaluation.runner import select_tasks

    import math

    from interlingua.core.names import alias_problem

    if not math.isfinite(args.margin) or args.margin < 0:  # nan: no task counted as worse, every gate passed
        raise UserError(f"--margin must be a finite number >= 0; got {args.margin}")
    problem = alias_problem(args.alias)
    if problem:  # before the evaluation: MLflow refused it only when setting it, after recording "promoted"
        raise UserError(f"--alias: {problem}")
    parse_version_uri(args.model)  # a malformed URI fails before anything loads
    try:
        tasks = select_tasks(_available_tasks(args), args.tasks)
    except ValueError as err:
        raise UserError(str(err)) from err
    data_versions = {}
    if Path(args.pack).is_dir():
        data_versions[f"pack:{args.pack}"] = data_fingerprint(args.pack)
    for item in args.data:
        name, _, directory = item.partition("=")
        data_versions[f"{name.strip()}:{directory.strip()}"] = data_fingerprint(directory.strip())
    use_tracking_store()
    result = promote(args.model, args.alias, tasks, seeds=args.seeds, margin=args.margin, dry_run=args.dry_run,
                     data_versions=data_versions)
    print(result.table)
    print(outcome_line(result, args.alias, dry_run=args.dry_run))
    if result.run_id:
        print(f"decision recorded: tags interlingua.promotion.{args.alias}.* on {result.candidate.uri}, "
              f"MLflow run {result.run_id}", file=sys.stderr)
    return 0 if (result.decision.promote if args.dry_run else result.moved) else 1


def outcome_line(result, alias: str, *, dry_run: bool) -> str:
    """What ``promote`` did with ``alias`` (a :class:`~interlingua.cluster.promotion.PromotionResult`), and why. An
    alias with no holder gets no "(was ...)": the first promotion's reason says so."""
    holder = result.holder.uri if result.holder else None
    reason = result.decision.reason
    if dry_run:
        verdict = "would move" if result.decision.promote else "would not move"
        now = f" ({holder} now)" if holder else ""
        return f"dry run: @{alias} {verdict} to {result.candidate.uri}{now}: {reason}"
    if result.moved:
        was = f" (was {holder})" if holder else ""
        return f"promoted: {result.candidate.uri} now holds @{alias}{was}: {reason}"
    if result.record.get("decision") == "holder changed":
        return f"not promoted: @{alias} {reason}"
    return f"not promoted: @{alias} {f'stays on {holder}' if holder else 'stays without a holder'}: {reason}"
