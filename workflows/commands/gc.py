"""``interlingua gc``: show, and prune, what in the state folder no corpus version, alias or run refers to."""

from __future__ import annotations

import argparse

HELP = "show and prune state nothing refers to (Ray results of registered runs, stale caches, orphaned artifacts)"
DESCRIPTION = (HELP + ". Corpus versions are left to the corpus store's retention. The tracking store is "
               "$MLFLOW_TRACKING_URI or the state's local SQLite store; orphaned artifacts are looked for in "
               "the local artifact folder only.")
#: ``--state-dir`` names this machine's state folder: the command's log goes under it.
LOCAL_STATE_DIR = True
#: ... and it must exist, wherever it is named (--state-dir, INTERLINGUA_HOME, ./.interlingua): gc of a mistyped folder
#: would create it and report nothing to free.
STATE_DIR_MUST_EXIST = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="list what would be pruned; delete nothing")
    parser.add_argument("--state-dir", default=None, help="state folder (default $INTERLINGUA_HOME or ./.interlingua)")
    parser.add_argument("--all", action="store_true", help="also list what is kept")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from interlingua.cluster.state_gc import NOTES, folder_size, human_size, plan_gc, prune, registry_view
    from interlingua.core.runtime import state_dir, use_tracking_store

    state = state_dir(args.state_dir)
    target = use_tracking_store(state)
    from mlflow.tracking import MlflowClient

    local_artifacts = None  # another tracking store keeps (and collects) its own artifacts
    if target.tracking_uri == f"sqlite:///{state / 'mlflow.db'}":
        local_artifacts = state / "mlartifacts"
    from interlingua.operators.translate.ctranslate2_backend import DEFAULT_CT2_CACHE

    items = plan_gc(state, registry_view(MlflowClient()), local_artifacts=local_artifacts,
                    ct2_cache=DEFAULT_CT2_CACHE)
    # links and unreadable folders are listed always ("skip"): gc left them alone, the user may not know why
    shown = [i for i in items if i.prune or args.all or i.kind in NOTES]
    width = max([len(human_size(i.size)) for i in shown] + [4])
    for item in shown:
        action = "prune" if item.prune else "skip " if item.kind in NOTES else "keep "
        print(f"{action}  {human_size(item.size):>{width}}  {item.kind:<18} {_relative(item.path, state)}  ({item.reason})")
    pruned = [i for i in items if i.prune]
    kept = [i for i in items if not i.prune and i.kind not in NOTES]
    corpus = state / "corpus"
    corpus_note = f"; corpus store {human_size(folder_size(corpus))} (its own retention)" if corpus.is_dir() else ""
    total = human_size(sum(i.size for i in pruned))
    if args.dry_run:
        print(f"dry run: would free {total} in {len(pruned)} item(s); keeping "
              f"{human_size(sum(i.size for i in kept))} in {len(kept)}{corpus_note}")
    else:
        freed = prune(items)
        print(f"freed {human_size(freed)} in {len(pruned)} item(s); kept "
              f"{human_size(sum(i.size for i in kept))} in {len(kept)}{corpus_note}")
    return 0


def _relative(path, root) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
