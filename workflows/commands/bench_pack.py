"""``interlingua bench-pack``: build the offline benchmark pack from real data."""

from __future__ import annotations

import argparse
import sys

HELP = "build the offline benchmark pack (Bible, debian-reference, Wikipedia leads) into a directory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--assets", default=None, help="directory with bible-en-es.parquet and the debian-reference parquet "
                        "files, or the folder `interlingua assets` built (default: the state's assets, ./.interlingua/assets)")
    parser.add_argument("--out", default="bench-pack", help="output pack directory (default ./bench-pack)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--bible-pairs", type=int, default=1000,
                        help="Bible verse pairs of the en-es retrieval task (default %(default)s)")
    parser.add_argument("--debian-pairs", type=int, default=300,
                        help="debian-reference pairs of each language's retrieval task (default %(default)s)")
    parser.add_argument("--mining-gold", type=int, default=100,
                        help="gold pairs per mining split (default %(default)s)")
    parser.add_argument("--clustering-items", type=int, default=600,
                        help="items of each language's Wikipedia clustering task (default %(default)s)")
    parser.add_argument("--title-lead-pairs", type=int, default=300,
                        help="title -> lead pairs of each language's wiki_title_lead task (default %(default)s)")


def log_state_dir(args: argparse.Namespace) -> str | None:
    """The CLI's hook: the state's assets are only read, so a state folder ``INTERLINGUA_HOME`` names that does not
    exist is not made for the log either (:func:`~interlingua.core.runtime.log_folder_for_reading`); run refuses it."""
    from interlingua.core.runtime import log_folder_for_reading, state_origin

    return log_folder_for_reading() if args.assets is None and state_origin() is not None else None


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from interlingua.evaluation.pack.build import PackSizes, build_pack
    from interlingua.core.errors import UserError
    from interlingua.core.url_filesystems import require_known_protocol

    require_known_protocol(args.out)  # before the assets are read
    try:
        sizes = PackSizes(bible_pairs=args.bible_pairs, debian_pairs=args.debian_pairs, mining_gold_per_split=args.mining_gold,
                          clustering_items=args.clustering_items, title_lead_pairs=args.title_lead_pairs)
        if args.assets is None:
            from interlingua.core.runtime import assets_dir, missing_state_line, state_origin

            # a mistyped INTERLINGUA_HOME built a pack of the Wikipedia tasks alone, exit 0 (no ./.interlingua yet:
            # the pack says which tasks need `interlingua assets`)
            if state_origin() is not None and (missing := missing_state_line()) is not None:
                raise UserError(missing)
            args.assets = str(assets_dir())
        elif not Path(args.assets).is_dir():  # a typo built a pack of the Wikipedia tasks alone, exit 0
            raise UserError(f"--assets {args.assets} is not a folder (hint: the folder `interlingua assets` built, "
                            "or one with bible-en-es.parquet and the debian-reference Parquet files)")
        if Path(args.out).exists() and not Path(args.out).is_dir():
            raise UserError(f"--out {args.out} is a file; give a folder for the pack")
        from interlingua.core.inputs import require_writable

        require_writable(args.out, "--out folder")
        manifest = build_pack(args.assets, args.out, sizes, seed=args.seed)
    except ValueError as err:
        raise UserError(str(err)) from err
    for task in manifest["tasks"]:
        print(f"{task['name']:<24} {task['kind']:<11} {task['language']:<6} size={task.get('size', task.get('gold_per_split'))}")
    for skipped in manifest["skipped"]:
        print(f"skipped {skipped['name']}: {skipped['reason']}", file=sys.stderr)
    print(f"wrote {args.out}/manifest.json ({len(manifest['tasks'])} tasks, {len(manifest['skipped'])} skipped)", file=sys.stderr)
    return 0
