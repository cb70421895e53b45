"""What every benchmark's command line shares: a parser whose mistakes are one line (exit 2), and argument types that
check a value before any work starts (an existing file, a positive integer, an integer above a floor, an asset that
``interlingua assets`` builds)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from interlingua.core.argument_types import positive_int  # noqa: F401  (every benchmark's --rounds)


class BenchmarkParser(argparse.ArgumentParser):
    """argparse's parser whose mistakes (a missing file, a bad number, a missing asset) are one line with a hint,
    exit 2, instead of the usage lines followed by the error; ``--help`` still prints the usage."""

    def __init__(self, doc: str | None, **kwargs):
        super().__init__(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (hint: {self.prog} --help lists the arguments)\n")


def existing_file(text: str) -> str:
    """An argparse type: a file that exists (a path relative to the current folder)."""
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no file {text} (from the folder {os.getcwd()})")
    return text


def int_at_least(minimum: int, why: str):
    """An argparse type: an integer >= ``minimum``; its error says ``why`` fewer does not do."""
    def at_least(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer of at least {minimum} ({why}), got {text!r}")
        return value
    return at_least


def _assets_folder() -> Path:
    from interlingua.core.runtime import state_path

    return state_path(None) / "assets"


def _asset_missing(path: Path, asset: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(
        f"{path} not found (the default is under the state folder: $INTERLINGUA_HOME, else .interlingua in the "
        f"current folder); build it with `interlingua assets {asset}` there, or give its path")


def bible_file(text: str) -> str:
    """An argparse type: the Bible asset's parquet file (``interlingua assets bible``), checked."""
    if not Path(text).is_file():
        raise _asset_missing(Path(text).absolute(), "bible")
    return text


def e5_folder(text: str) -> str:
    """An argparse type: the e5-small asset's model folder (``interlingua assets e5-small``), checked."""
    if not Path(text, "config.json").is_file():
        raise _asset_missing(Path(text, "config.json").absolute(), "e5-small")
    return text


def default_bible() -> str:
    """Where ``interlingua assets bible`` writes the Bible (under the state folder); checked by :func:`bible_file`."""
    from interlingua.workflows.assets.build import bible_path

    return str(bible_path(_assets_folder()))


def default_e5() -> str:
    """Where ``interlingua assets e5-small`` writes the encoder (under the state folder)."""
    from interlingua.workflows.assets.build import e5_model_dir

    return str(e5_model_dir(_assets_folder()))


def add_bible_argument(parser: argparse.ArgumentParser) -> None:
    """``--bible PATH``: the Bible asset's parquet file, checked when the arguments are parsed."""
    parser.add_argument("--bible", type=bible_file, default=default_bible(),
                        help="the Bible bitext parquet (default: the `interlingua assets bible` asset, %(default)s)")
