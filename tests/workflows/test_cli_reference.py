"""README.md's command reference and the CLI's parsers agree: every subcommand and long option is in the
"Command line" table (in its command's rows), the table names no option the CLI lacks, and every option and
positional argument has a help text."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from interlingua.workflows.cli import build_parser
from interlingua.workflows.commands import COMMANDS

README = Path(__file__).resolve().parents[2] / "README.md"
#: Options every subcommand has (``cli.build_parser`` adds them): the line under the table covers them.
COMMON_OPTIONS = frozenset({"--help", "--verbose"})


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, action) for every action of ``parser`` and of its subcommand parsers."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, nested in action.choices.items():
                yield path, name
                yield from walk(nested, path + (name,))
        else:
            yield path, action


def actions_without_help(parser: argparse.ArgumentParser) -> list[str]:
    missing = []
    for path, action in walk(parser):
        if isinstance(action, str) or isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
            missing.append(" ".join(("interlingua", *path, action.option_strings[-1] if action.option_strings
                                     else action.dest)))
    return missing


def command_rows(readme: str) -> dict[str, str]:
    """The "Command line" section's table rows, joined per top-level command (``| `interlingua CMD ...``)."""
    section = readme.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        match = re.match(r"\| `interlingua ([a-z-]+)", line)
        if match:
            rows[match.group(1)] = rows.get(match.group(1), "") + line + "\n"
    return rows


def _long(action: argparse.Action) -> str | None:
    return next((option for option in action.option_strings if option.startswith("--")), None)


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def missing_from_reference(readme: str, parser: argparse.ArgumentParser) -> list[str]:
    """What the CLI defines and the command table does not name: ``CMD``, ``CMD SUB`` or ``CMD --option``."""
    rows = command_rows(readme)
    section = readme.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]
    missing = [_long(action) for action in parser._actions
               if _long(action) and not any(_mentions(section, option) for option in action.option_strings)]
    for name in COMMANDS:
        text = rows.get(name)
        if text is None:
            missing.append(name)
            continue
        for path, item in walk(parser._subparsers._group_actions[0].choices[name]):
            if isinstance(item, str):
                if not _mentions(text, item):
                    missing.append(" ".join((name,) + path + (item,)))
                continue
            option = _long(item)  # `-c` in the table names `--config` too
            if option and option not in COMMON_OPTIONS and not any(_mentions(text, o) for o in item.option_strings):
                missing.append(" ".join((name, *path, option)))
    return missing


def unknown_in_reference(readme: str, parser: argparse.ArgumentParser) -> list[str]:
    """Long options a command's rows name that none of its parsers defines (an option renamed or removed)."""
    choices = parser._subparsers._group_actions[0].choices
    unknown = []
    for name, text in command_rows(readme).items():
        if name not in choices:
            unknown.append(name)
            continue
        defined = {option for _, item in walk(choices[name]) if not isinstance(item, str)
                   for option in item.option_strings}
        unknown += [f"{name} {option}" for option in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)))
                    if option not in defined]
    return unknown


def test_every_option_and_argument_has_a_help_text():
    assert actions_without_help(build_parser()) == []


def test_the_help_check_finds_an_option_without_help():
    parser = argparse.ArgumentParser(prog="interlingua")
    nested = parser.add_subparsers(dest="command").add_parser("x")
    nested.add_argument("--size", type=int, default=3)
    nested.add_argument("name")
    assert actions_without_help(parser) == ["interlingua x --size", "interlingua x name"]


def test_the_command_table_names_every_subcommand_and_option():
    assert missing_from_reference(README.read_text(encoding="utf-8"), build_parser()) == []


def test_the_command_table_names_no_option_the_cli_lacks():
    assert unknown_in_reference(README.read_text(encoding="utf-8"), build_parser()) == []


def test_the_table_checks_catch_drift():
    readme = README.read_text(encoding="utf-8")
    parser = build_parser()
    rows = command_rows(readme)
    assert set(rows) == set(COMMANDS)
    # an option dropped from its command's row is found, even when another command's row names it
    embed_row = rows["embed"]
    assert "--out" in rows["eval"]
    assert missing_from_reference(readme.replace(embed_row, embed_row.replace("--out", "out")), parser) == [
        "embed --out"]
    # a subcommand dropped, and a command's whole row
    corpus_row = rows["corpus"]
    assert missing_from_reference(readme.replace(corpus_row, corpus_row.replace(" / `pin NAME V [--remove]`", "")),
                                  parser) == ["corpus pin"]
    assert missing_from_reference(readme.replace(rows["schedule"], ""), parser) == ["schedule"]
    # an option the CLI does not define
    assert unknown_in_reference(readme.replace(embed_row, embed_row.replace("[--similarity]", "[--similarity] [--fp16]")),
                                parser) == ["embed --fp16"]


def test_verbose_follows_any_command():
    """README: ``-v`` before or after the command. After a nested command (``corpus list -v``, ``jobs list -v``,
    ``schedule refresh -v``) it was an unrecognized argument."""
    parser = build_parser()
    commands = [path + (name,) for path, name in walk(parser) if isinstance(name, str)]
    assert ("corpus", "list") in commands and ("schedule", "refresh") in commands
    for command in commands:
        nested = parser
        for name in command:
            nested = next(a for a in nested._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
        assert "-v" in nested._option_string_actions, " ".join(command)
    args, extras = parser.parse_known_args(["corpus", "list", "-v"])
    assert args.verbose is True and extras == []
    assert parser.parse_known_args(["corpus", "list"])[0].verbose is False
