"""The ``interlingua`` command line. Subcommand modules are imported only when used, so
``interlingua --help`` answers without loading torch, Ray or MLflow."""

from __future__ import annotations

import argparse
import importlib
import sys

from interlingua.workflows.commands import COMMANDS
from interlingua.core.errors import UserError


def build_parser(load: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="interlingua",
        description="Distributed data-and-training workflow for multilingual sentence embeddings.",
    )
    parser.add_argument("--version", action="version", version=f"interlingua {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if load is None or load == name:
            module = importlib.import_module(module_name)
            p = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
            module.add_arguments(p)
            p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(load=command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from interlingua.core.redact import install_log_redaction, redact_text

    install_log_redaction()
    try:
        return int(args._module.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except UserError as err:
        print(f"interlingua {args.command}: error: {redact_text(str(err))}", file=sys.stderr)
        return 2


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("interlingua")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
