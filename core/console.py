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
import sys
import time
from pathlib import Path

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


def is_verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0", "false", "False")


def configure_console(command: str, *, verbose: bool = False, log_dir: str | os.PathLike | None = None) -> Path:
    """Set up the console and the log file for one CLI command; returns the log file's path."""
    if verbose:
        os.environ[VERBOSE_ENV] = "1"
    verbose = is_verbose()
    if not verbose:
        for key, value in QUIET_ENV.items():
            os.environ.setdefault(key, value)
        import warnings

        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
    if log_dir is None:
        from interlingua.core.runtime import state_dir

        log_dir = state_dir() / "logs"
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{command}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
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
    return path


_HANDLERS: list[logging.Handler] = []


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
    """A text stream that writes to the console stream and appends the same text to the log file."""

    def __init__(self, stream, log_path: Path):
        self._stream, self._log_path, self._log = stream, log_path, None

    def write(self, text: str) -> int:
        written = self._stream.write(text)
        try:
            if self._log is None:
                self._log = open(self._log_path, "a", encoding="utf-8")
            self._log.write(text)
        except OSError:  # the log is a convenience: never fail the command over it
            pass
        return written

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
