"""The ``interlingua`` command line. Subcommand modules are imported only when used, so
``interlingua --help`` answers without loading torch, Ray or MLflow."""

from __future__ import annotations

import argparse
import importlib
import sys

from interlingua.workflows.commands import COMMANDS
from interlingua.core.errors import UserError


class _OneLineParser(argparse.ArgumentParser):
    """argparse's parser, whose mistakes (a missing argument, a bad value, an unknown choice) are one line with a hint
    instead of the usage lines followed by the error; ``--help`` still prints the usage. Subcommands' parsers are of
    this class too (argparse makes them of their parent's class)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (hint: {self.prog} --help lists the arguments)\n")


def build_parser(load: str | None = None) -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="interlingua",
        description="Distributed data-and-training workflow for multilingual sentence embeddings.",
    )
    parser.add_argument("--version", action="version", version=f"interlingua {_version()}")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show Ray's, DeepSpeed's and the libraries' output on the console "
                             "(it always goes to the log file under <state>/logs)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if load is None or load == name:
            module = importlib.import_module(module_name)
            p = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
            module.add_arguments(p)
            p.set_defaults(_module=module)
            _remember_parsers(p)
    return parser


def _remember_parsers(parser: argparse.ArgumentParser) -> None:
    """Each (sub)command parser records itself as ``_parser``: the innermost one given wins, and names the command
    when an argument is left over. Each takes ``-v`` too, so it may follow any command (``corpus list -v``)."""
    parser.set_defaults(_parser=parser)
    if "-v" not in parser._option_string_actions:
        parser.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                            help="show Ray's, DeepSpeed's and the libraries' output too")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for nested in action.choices.values():
                _remember_parsers(nested)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(load=command if command in COMMANDS else None)
    args, extras = parser.parse_known_args(argv)
    if extras and getattr(args, "command", None):
        # argparse would answer with the top-level usage (`interlingua: error: unrecognized arguments`): one line
        # naming the command instead (`embed A --input F B`: the sentences are one list, before or after the options)
        words = not any(extra.startswith("-") for extra in extras)
        hint = getattr(args._module, "UNRECOGNIZED_HINT", None) if words else None
        print(f"{args._parser.prog}: error: unrecognized arguments: {' '.join(extras)} "
              f"(hint: {hint or f'{args._parser.prog} --help lists the arguments'})", file=sys.stderr)
        return 2
    if extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from interlingua.core.console import configure_console
    from interlingua.core.redact import install_log_redaction

    log_dir = None
    named = getattr(args, "state_dir", None) if getattr(args._module, "LOCAL_STATE_DIR", False) else None
    if named is None and hasattr(args._module, "log_state_dir"):
        named = args._module.log_state_dir(args)  # `run W --set state_dir=D` or its -c file's state_dir
    if getattr(args._module, "STATE_DIR_MUST_EXIST", False):  # from --state-dir, INTERLINGUA_HOME or the default
        from interlingua.core.runtime import missing_state_line

        if (missing := missing_state_line(named)) is not None:  # before the log: a mistyped folder is not made
            print(f"interlingua {args.command}: error: {missing}", file=sys.stderr)
            return 2
    if named:
        from interlingua.core.runtime import state_dir

        try:
            log_dir = state_dir(named) / "logs"  # `assets --state-dir D`: the log goes under D too
        except UserError as err:
            print(f"interlingua {args.command}: error: {err}", file=sys.stderr)
            return 2
    try:
        log_path = configure_console(args.command, verbose=args.verbose, log_dir=log_dir)
    except (OSError, UserError) as err:
        # a state folder that cannot be written (a read-only mount): the log goes to a private temporary folder,
        # and the command says so and goes on (reading commands work; one that writes state says why it cannot)
        from interlingua.core.runtime import temporary_log_folder

        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        log_path = configure_console(args.command, verbose=args.verbose, log_dir=temporary_log_folder())
        print(f"interlingua {args.command}: note: the state folder's log cannot be written ({reason}); "
              f"the log is {log_path} (kept if the command fails unexpectedly)", file=sys.stderr)
    install_log_redaction()  # the console and log-file handlers configure_console installed: credentials masked
    from interlingua.core.console import native_stderr_to_log, tee_to_log

    # native_stderr_to_log: C++ error lines Ray writes on this process's fd 2 go to the log file, ours to the console
    with tee_to_log(log_path), native_stderr_to_log():
        rc = _run_command(args, log_path)
    if not getattr(args, "_log_named", False):  # no line sent the user to the log: a temporary one goes
        _drop_temporary_log(log_path)
    if rc == 0 and _ran_long(args) and log_path.exists():
        print(f"[interlingua] full log: {log_path}", file=sys.stderr, flush=True)
    return rc


def _drop_temporary_log(log_path) -> None:
    """A command whose end sent the user to no log (it succeeded, stopped at a user mistake, found a damaged store, a
    service down, ^C) leaves no log in a temporary folder (one more in the system's temp folder each run): the folder
    is removed (:func:`~interlingua.core.runtime.remove_temporary_log_folder`), the log's handler let go and the
    log's path taken out of the environment, so that nothing later in this process (logging, a Ray started after)
    tries to reopen the file."""
    import logging
    import os

    from interlingua.core.console import LOG_FILE_ENV, file_handler
    from interlingua.core.runtime import remove_temporary_log_folder

    if not remove_temporary_log_folder(log_path):
        return
    if os.environ.get(LOG_FILE_ENV) == str(log_path):
        del os.environ[LOG_FILE_ENV]
    handler = file_handler()
    if handler is not None:
        logging.getLogger().removeHandler(handler)
        handler.close()
        handler.setLevel(logging.CRITICAL + 1)  # should a later ray.init's restore_handlers add it again: it is mute


def _ran_long(args: argparse.Namespace) -> bool:
    """Whether the command was one that runs long (:data:`LONG_COMMANDS`) and did its work, rather than only print
    its config or its keys (``run W --show-config``, ``--list-keys``): then the log file's path is worth a line."""
    only_shown = getattr(args, "show_config", False) or getattr(args, "list_keys", False)
    return args.command in LONG_COMMANDS and not only_shown


def _run_command(args: argparse.Namespace, log_path) -> int:
    from interlingua.core.redact import redact_text

    try:
        return int(args._module.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except UserError as err:  # 2, or 69 for a service that does not answer (ServiceUnavailable)
        print(f"interlingua {args.command}: error: {redact_text(str(err))}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:
        # The reader went away (`interlingua corpus show --json | head`): stop quietly, as `cat` would.
        _silence_stdout()
        return 141
    except (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError) as err:
        if err.filename is None:
            return _unexpected(args, err, log_path)
        print(f"interlingua {args.command}: error: {err.strerror}: {redact_text(str(err.filename))}", file=sys.stderr)
        return 2
    except ImportError as err:
        if not _missing_fsspec_driver(err):
            return _unexpected(args, err, log_path)
        # fsspec names the package a URL's scheme needs ("Install s3fs to access S3"): the user's environment
        print(f"interlingua {args.command}: error: a URL given needs a package that is not installed: "
              f"{redact_text(str(err))} (hint: pip install it into this environment)", file=sys.stderr)
        return 2
    except Exception as err:  # a bug or a failure deep in a library: one line here, the traceback in the log
        return _unexpected(args, err, log_path)


def _missing_fsspec_driver(err: ImportError) -> bool:
    """Whether ``err`` is fsspec saying which package a URL's scheme needs (its registry's messages: "Install s3fs to
    access S3", "Please install gcsfs to access Google Storage", "HTTPFileSystem requires ...")."""
    try:
        from fsspec.registry import known_implementations
    except ImportError:
        return False
    return str(err).startswith("Install ") or str(err) in {entry.get("err") for entry in known_implementations.values()}


#: Commands that run long enough for the log file's path to be worth a line.
LONG_COMMANDS = frozenset({"run", "eval", "align", "assets", "bench-pack", "submit", "refresh", "schedule",
                           "promote", "train"})


def _unexpected(args: argparse.Namespace, err: BaseException, log_path) -> int:
    import traceback

    from interlingua.core.console import is_verbose
    from interlingua.core.redact import redact_text

    try:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(redact_text(f"interlingua {args.command} failed:\n{''.join(traceback.format_exception(err))}"))
    except OSError:
        pass
    args._log_named = True  # the user is sent to it: a temporary log folder is kept
    if is_verbose():
        raise err
    print(f"interlingua {args.command}: failed: {type(err).__name__}: {redact_text(str(err))}\n"
          f"  (the traceback is in {log_path}; --verbose shows it here)", file=sys.stderr)
    return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:  # pragma: no cover
        pass


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("interlingua")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
