"""One readable console: our stage lines and progress bars; everything else in a log file.

By default Ray's, Ray Train's, Ray Data's, DeepSpeed's and transformers' chatter stays off the console
(the settings below reach Ray workers through the environment that :func:`~interlingua.core.runtime.init_ray`
forwards); every Python log record of the driver goes to ``<state>/logs/<command>-<time>.log``, whose path
the CLI prints. ``--verbose`` (``INTERLINGUA_VERBOSE=1``) leaves the libraries' output on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import time
from pathlib import Path

from interlingua.core.redact import redact_text

VERBOSE_ENV = "INTERLINGUA_VERBOSE"
LOG_FILE_ENV = "INTERLINGUA_LOG_FILE"

#: Environment that quiets the libraries, in this process and in Ray workers started after it.
QUIET_ENV = {
    "RAY_TRAIN_ENABLE_WORKER_STRUCTURED_LOGGING": "0",  # "Reporting training result ..." per step and worker
    "RAY_TRAIN_ENABLE_CONTROLLER_STRUCTURED_LOGGING": "0",
    "RAY_TRAIN_ENABLE_PRINT_PATCH": "0",  # worker print() stays print(), not a log record
    "RAY_DATA_DISABLE_PROGRESS_BARS": "1",  # Ray Data's periodic progress dumps
    "RAY_DATA_LOG_LEVEL": "ERROR",  # "Starting execution of Dataset ...", "Progress bars disabled ..."
    "RAY_DEDUP_LOGS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # transformers' "Loading weights" bars
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONWARNINGS": "ignore::DeprecationWarning,ignore::FutureWarning",
    "MLFLOW_LOGGING_LEVEL": "ERROR",  # "Detected uv project", "Failed to resolve installed pip version", ...
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
}

#: Loggers whose INFO records belong in the log file, not on the console.
NOISY_LOGGERS = ("ray", "sentence_transformers", "ray.data", "ray.train", "ray.tune", "DeepSpeed", "deepspeed", "torch.distributed",
                 "mlflow", "alembic", "transformers", "urllib3", "filelock", "fsspec", "numexpr", "gensim")


#: Characters that drive a terminal or reorder what it shows: C0 controls (ESC starts CSI and OSC sequences: colours,
#: a window title, OSC 52 writes to the clipboard), DEL, C1 controls (U+009B is a one-character CSI) and Unicode's
#: bidirectional marks, embeddings, overrides and isolates.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str, keep: str = "", *, json: bool = False) -> str:
    """``text`` with its control characters (see ``_CONTROL``) written as escapes (``\\x1b``, ``\\u202e``), so that
    what a file or a shared store holds, printed, cannot drive the terminal or disguise itself; the characters in
    ``keep`` (e.g. ``"\\n"`` for the line breaks of our own output) are left as they are. ``json``: the escapes are
    JSON's (``\\u001b``), for JSON text (where such characters can only be inside strings)."""
    def escape(match: re.Match) -> str:
        char = match.group()
        if char in keep:
            return char
        code = ord(char)
        if json or code > 0xFF:
            return f"\\u{code:04x}"
        return _SHORT_ESCAPES.get(char) or f"\\x{code:02x}"

    return _CONTROL.sub(escape, text)


def printable_data(value):
    """``value`` (JSON-like: dicts, lists, strings, ...) with every string and key passed through :func:`printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_data(v) for v in value)
    return value


def is_verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0", "false", "False")


def configure_console(command: str, *, verbose: bool = False, log_dir: str | os.PathLike | None = None) -> Path:
    """Set up the console and the log file for one CLI command; returns the log file's path. What an earlier
    command in this process set up for itself (``--verbose``, the quieting environment) is taken back first, and
    MLflow's logger, if MLflow is imported already, goes through our handlers (:func:`mlflow_events_to_log_file`),
    so the quieting holds whatever ran before in the process."""
    _take_back_command_env()
    if verbose and not is_verbose():
        _set_for_this_command(VERBOSE_ENV, "1")
    verbose = is_verbose()
    if not verbose:
        for key, value in QUIET_ENV.items():
            if key not in os.environ:  # a value of the user's own stays
                _set_for_this_command(key, value)
        import warnings

        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
    if log_dir is None:
        from interlingua.core.runtime import state_dir

        log_dir = state_dir() / "logs"
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{command}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    with open(path, "a", encoding="utf-8"):  # a read-only folder fails here, not later on fd 2
        pass
    os.environ[LOG_FILE_ENV] = str(path)

    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        if getattr(handler, "_interlingua", False):
            root.removeHandler(handler)
    file_handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    file_handler._interlingua = True  # type: ignore[attr-defined]
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    console.addFilter(_QuietLibraries(verbose))
    console._interlingua = True  # type: ignore[attr-defined]
    _HANDLERS[:] = [file_handler, console]
    restore_handlers()
    logging.captureWarnings(True)
    if "mlflow" in sys.modules:  # imported before this command: its logger kept the level and stream handler it got
        mlflow_events_to_log_file()
    return path


_HANDLERS: list[logging.Handler] = []

#: The environment variables :func:`configure_console` set for the current command: name -> (value set, value before).
_COMMAND_ENV: dict[str, tuple[str, str | None]] = {}


def _set_for_this_command(key: str, value: str) -> None:
    _COMMAND_ENV.setdefault(key, (value, os.environ.get(key)))
    os.environ[key] = value


def _take_back_command_env() -> None:
    """The variables the previous command set (and nobody changed since) as they were before it: one command's
    ``--verbose`` does not make the next command in the same process verbose."""
    for key, (value, before) in _COMMAND_ENV.items():
        if os.environ.get(key) == value:
            if before is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = before
    _COMMAND_ENV.clear()


def restore_handlers() -> None:
    """Make our two handlers the root logger's only ones again (``ray.init`` with a ``LoggingConfig``
    replaces the driver's root handlers)."""
    if not _HANDLERS:
        return
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in _HANDLERS:
        root.addHandler(handler)
    root.setLevel(logging.INFO)


class _QuietLibraries(logging.Filter):
    """On the console, the libraries' records below ERROR are dropped unless verbose (they stay in the file)."""

    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if self.verbose or record.levelno >= logging.ERROR:
            return True
        name = record.name
        return not (name == "py.warnings" or any(name == n or name.startswith(n + ".") for n in NOISY_LOGGERS))


class TeeStream:
    """A text stream that writes to the console stream and appends the same text to the log file, credentials in
    it masked on both (:func:`~interlingua.core.redact.redact_text`: URLs' user-info and token-like parameters, and
    ``password=…`` pairs), whichever line printed them."""

    def __init__(self, stream, log_path: Path):
        self._stream, self._log_path, self._log = stream, log_path, None

    def write(self, text: str) -> int:
        size, text = len(text), redact_text(text)
        self._stream.write(text)
        try:
            if self._log is None:
                self._log = open(self._log_path, "a", encoding="utf-8")
            self._log.write(text)
        except OSError:  # the log is a convenience: never fail the command over it
            pass
        return size

    def flush(self) -> None:
        self._stream.flush()
        if self._log is not None:
            self._log.flush()

    def close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __getattr__(self, name):  # isatty, fileno, encoding, ... of the console stream
        return getattr(self._stream, name)


@contextlib.contextmanager
def tee_to_log(log_path: Path):
    """Inside the block, what is printed on stdout/stderr is also appended to ``log_path``."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TeeStream(sys.stdout, log_path), TeeStream(sys.stderr, log_path)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, TeeStream):
                stream.flush()
                stream.close_log()
        sys.stdout, sys.stderr = saved


def log_file() -> str | None:
    """The current command's log file (also inside Ray workers, which inherit the environment)."""
    return os.environ.get(LOG_FILE_ENV)


@contextlib.contextmanager
def child_stderr_to_log():
    """Inside the block, file descriptor 2 is the log file, so the processes started here (a local Ray's GCS,
    raylet and agents, which keep the stderr they inherit and write their C++ error lines on it) write there, not
    on the console. Our own output meanwhile goes to the log file too, unless :func:`native_stderr_to_log` (the
    CLI's) has put it on a duplicate of the console's descriptor. No-op when verbose or without a log file."""
    path = log_file()
    if is_verbose() or not path:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    with _fd2_on_file(path):
        yield
        sys.stderr.flush()


@contextlib.contextmanager
def _fd2_on_file(path: str, saved: int | None = None):
    """File descriptor 2 on ``path`` (appended) inside the block, back to what it was after (``saved``: a duplicate
    of it the caller made; closed here)."""
    saved = os.dup(2) if saved is None else saved
    target = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


@contextlib.contextmanager
def native_stderr_to_log():
    """Inside the block, this process's file descriptor 2 is the log file, while Python's ``sys.stderr`` (our lines,
    progress bars, tracebacks) and our console log handler still write to the console, through a duplicate of its
    descriptor. What native code of this process writes on fd 2 then lands in the log file: Ray's C++ core worker in
    the driver ("Actor with class name: 'MapWorker(...)' ... has constructor arguments in the object store"), and so
    does the stderr of the processes started inside the block. No-op when verbose, without a log file, or when fd 2
    is not open."""
    path = log_file()
    if is_verbose() or not path:
        yield
        return
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    encoding = getattr(sys.__stderr__, "encoding", None) or "utf-8"
    console = os.fdopen(os.dup(saved), "w", buffering=1, encoding=encoding, errors="backslashreplace")
    swapped = _point_fd2_streams_at(console)
    try:
        with _fd2_on_file(path, saved):
            try:
                yield
            finally:
                for stream in (sys.stdout, sys.stderr, console):
                    with contextlib.suppress(Exception):
                        stream.flush()
    finally:
        for restore in swapped:
            restore()
        console.close()


def _point_fd2_streams_at(console) -> list:
    """Repoints what writes to fd 2 through a Python stream (``sys.stderr``, a :class:`TeeStream` around it, our
    console handler) at ``console``; returns the functions that undo it."""
    def on_fd2(stream) -> bool:
        try:
            return stream.fileno() == 2
        except Exception:  # a capture object of pytest, a closed stream, ...
            return False

    undo = []
    err = sys.stderr
    if isinstance(err, TeeStream) and on_fd2(err._stream):
        inner = err._stream
        err._stream = console
        undo.append(lambda: setattr(err, "_stream", inner))
    elif not isinstance(err, TeeStream) and on_fd2(err):
        sys.stderr = console
        undo.append(lambda: setattr(sys, "stderr", err))
    for handler in _HANDLERS:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler) \
                and on_fd2(handler.stream):
            old = handler.setStream(console)
            undo.append(lambda handler=handler, old=old: handler.setStream(old))
    return undo


def file_handler() -> logging.Handler | None:
    """The current command's log-file handler (``None`` before :func:`configure_console`, e.g. in a library)."""
    return _HANDLERS[0] if _HANDLERS else None


def to_log_file_only(*names: str) -> None:
    """Unless verbose, the records of these loggers go to the log file and nowhere else: for libraries that
    warn on their own stderr handler (Ray's token-auth notice, logged during ``ray.init`` by
    ``ray._private.authentication``, whose parent ``ray`` logger gets a stderr handler of Ray's)."""
    handler = file_handler()
    if handler is None or is_verbose():
        return
    for name in names:
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.INFO)


def logger_through_our_handlers(name: str) -> None:
    """Unless verbose, the ``name`` logger loses the stream handlers a library gave it and propagates to ours
    (everything in the log file; on the console only what :class:`_QuietLibraries` lets through)."""
    if file_handler() is None or is_verbose():
        return
    logger = logging.getLogger(name)
    for handler in list(logger.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            logger.removeHandler(handler)
    logger.propagate = True


#: A line of Ray's C++ logging (``[2026-11-23 14:09:53,788 E 28094 28124] core_worker.cc:2465: Actor ...``; the
#: raylet's name its component: ``... E 699 710] (raylet) file_system_monitor.cc:116: ...``), which Ray workers write on
#: their stderr and ``log_to_driver`` forwards to the driver's console.
CPP_LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [DIWEF] \d+ \d+\] (\([\w.-]+\) )?\S+\.(cc|h):\d+: ")


#: A raylet warning that only says workers started faster than its startup concurrency (a busy machine, Ray Train's
#: and Ray Data's actors starting together): ``WARNING: 8 PYTHON worker processes have been started on node: ...``.
#: Other raylet messages (a task killed for memory, ...) stay on the console.
RAYLET_CHATTER = re.compile(r"^WARNING: \d+ PYTHON worker processes have been started on node")


def split_forwarded_lines(data: dict) -> tuple[dict, list[str]]:
    """A batch of worker or raylet output that Ray prints on the driver (``{"lines": [...], "pid", "actor_name",
    ...}``) split into the batch without Ray's C++ log lines and :data:`RAYLET_CHATTER`, and those lines prefixed with
    their process."""
    kept, chatter = [], []
    for line in data.get("lines", ()):
        (chatter if CPP_LOG_LINE.match(line) or RAYLET_CHATTER.match(line) else kept).append(line)
    who = data.get("actor_name") or data.get("task_name") or "worker"
    return {**data, "lines": kept}, [f"({who} pid={data.get('pid')}) {line}" for line in chatter]


def forward_ray_cpp_lines_to_log_file() -> None:
    """Unless verbose: in the batches of worker output Ray forwards to the driver, C++ log lines (an actor's
    constructor arguments "in the object store and max_restarts > 0" for Ray Train's PreemptionWatcher, ...)
    go to the log file; the rest (our workers' prints, tracebacks) still reaches the console. Called after
    ``ray.init``; wraps the dispatcher handler that prints the batches, and the function that prints the raylet's
    messages (``ray._private.worker.print_to_stdstream``), so :data:`RAYLET_CHATTER` goes there too, by either path."""
    if log_file() is None or is_verbose():
        return
    try:
        from ray._private import worker
        from ray._private.ray_logging import global_worker_stdstream_dispatcher as dispatcher
    except ImportError:  # pragma: no cover - another Ray layout: the lines stay on the console
        return
    with dispatcher._lock:  # noqa: SLF001 - no public API to filter forwarded worker output
        dispatcher.handlers = [(name, _without_chatter(handler)
                                if name == "ray_print_logs" and not getattr(handler, "_interlingua", False) else handler)
                               for name, handler in dispatcher.handlers]
    if not getattr(worker.print_to_stdstream, "_interlingua", False):
        worker.print_to_stdstream = _without_chatter(worker.print_to_stdstream)


def _without_chatter(print_batch):
    """``print_batch`` that writes the lines :func:`split_forwarded_lines` calls chatter to the current command's log
    file instead (all of a batch prints when there is none)."""
    def handle(data: dict, *args, **kwargs) -> None:
        path = log_file()
        kept, chatter = split_forwarded_lines(data) if path else (data, [])
        if chatter:
            try:
                with open(path, "a", encoding="utf-8") as log:
                    log.write("".join(line + "\n" for line in chatter))
            except OSError:  # the log is a convenience: never fail the command over it
                pass
        if any(line.strip() for line in kept["lines"]) or (kept["lines"] and not chatter):
            print_batch(kept, *args, **kwargs)  # a batch left with blank lines once its chatter went prints nothing

    handle._interlingua = True  # type: ignore[attr-defined]
    return handle


def mlflow_events_to_log_file() -> None:
    """Unless verbose, what MLflow prints on its event stream ("Successfully registered model 'x'.", "Created
    version '1' of model 'x'.") goes to the log file only; MLflow's logger propagates to our handlers, so its
    errors still reach the console. Called by each command once MLflow is imported (:func:`configure_console`,
    ``use_tracking_store``); a later ``--verbose`` command in the same process has the events on the console again."""
    path = log_file()
    if path is None or is_verbose():
        return
    from mlflow.utils import logging_utils

    stream = logging_utils.MLFLOW_LOGGING_STREAM
    if not getattr(stream, "_interlingua", False):
        def write(text: str) -> int:
            if is_verbose():
                return sys.stderr.write(text)
            try:
                with open(log_file() or path, "a", encoding="utf-8") as log:
                    log.write(text)
            except OSError:
                pass
            return len(text)

        stream.write, stream.flush, stream._interlingua = write, (lambda: None), True
    logger_through_our_handlers("mlflow")


def worker_prints_whole_lines() -> None:
    """Called inside Ray workers: a ``print`` reaches the worker's log file in one write, its text with its newline.
    Ray makes a worker's ``sys.stdout`` and ``sys.stderr`` flush after each ``write``
    (``ray._private.utils.Unbuffered``), and ``print`` writes the text, then the newline: Ray's log monitor, which
    reads the file line by line as it grows, could read between the two and forward the newline alone, an empty line,
    which the driver (no worker prefix with the ``LoggingConfig`` of :func:`~interlingua.core.runtime.init_ray`)
    printed as a blank line between two training steps. The stream Ray wraps is line buffered (it writes a line when
    its newline comes, and on ``flush``), so it takes the wrapper's place."""
    try:
        from ray._private.utils import Unbuffered
    except ImportError:  # pragma: no cover - another Ray layout: the streams stay as they are
        return
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, Unbuffered) and getattr(stream.stream, "line_buffering", False):
            setattr(sys, name, stream.stream)


def quiet_worker_libraries() -> None:
    """Called inside Ray workers: DeepSpeed's and transformers' INFO output off unless verbose."""
    if is_verbose():
        return
    for name in ("DeepSpeed", "deepspeed", "transformers", "torch.distributed"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        from deepspeed.utils import logger as ds_logger

        ds_logger.setLevel(logging.WARNING)
    except Exception:  # pragma: no cover - deepspeed missing or failing to import
        pass
