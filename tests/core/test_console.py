"""The console shows our lines; the libraries' chatter and tracebacks go to the log file."""

from __future__ import annotations

import io
import logging
import os
import socket
import sys

import pytest

from interlingua.core import console
from interlingua.core.errors import UserError
from interlingua.core.runtime import check_reachable


@pytest.fixture
def restore_root_logging():
    """The root logger as it was after the test; the library logger the tests write to enabled before it (a test
    run earlier in the process, e.g. import-linter's, may have configured logging with existing loggers disabled)."""
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    library = logging.getLogger("urllib3.connectionpool")
    was_disabled, library.disabled = library.disabled, False
    yield
    library.disabled = was_disabled
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def test_library_info_goes_to_the_file_only(tmp_path, capsys, monkeypatch, restore_root_logging):
    monkeypatch.delenv(console.VERBOSE_ENV, raising=False)
    path = console.configure_console("unit", log_dir=tmp_path)
    logging.getLogger("urllib3.connectionpool").info("Starting new HTTP connection x")
    logging.getLogger("interlingua.unit").warning("our warning")
    for handler in logging.getLogger().handlers:
        handler.flush()
    err = capsys.readouterr().err
    assert "our warning" in err and "Starting new HTTP" not in err
    text = path.read_text()
    assert "Starting new HTTP connection x" in text and "our warning" in text
    assert path.parent == tmp_path and path.name.startswith("unit-")


def test_verbose_lets_library_info_through(tmp_path, capsys, monkeypatch, restore_root_logging):
    monkeypatch.setenv(console.VERBOSE_ENV, "0")  # recorded: unset after the test (a delenv of an unset one is not)
    console.configure_console("unit", verbose=True, log_dir=tmp_path)
    logging.getLogger("urllib3.connectionpool").info("library detail")
    assert "library detail" in capsys.readouterr().err
    monkeypatch.delenv(console.VERBOSE_ENV, raising=False)


def test_tee_copies_printed_text_into_the_log(tmp_path, capsys):
    log = tmp_path / "x.log"
    with console.tee_to_log(log):
        print("stage line")
        print("problem", file=sys.stderr)
    captured = capsys.readouterr()
    assert captured.out == "stage line\n" and captured.err == "problem\n"
    assert log.read_text() == "stage line\nproblem\n"


def test_unreachable_ray_address_fails_fast_with_a_hint():
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UserError, match="cannot reach a Ray cluster.*ray start --head"):
        check_reachable(f"127.0.0.1:{port}", timeout=1.0)
    with pytest.raises(UserError, match="job-submission URL"):
        check_reachable("http://127.0.0.1:8265")
    with pytest.raises(UserError, match="expected HOST:PORT"):
        check_reachable("just-a-host")
    check_reachable("auto")  # left to Ray


CPP_LINE = ("[2026-11-23 14:09:53,788 E 28094 28124] core_worker.cc:2465: Actor with class name: 'PreemptionWatcher' "
            "and ID: 'e2872f' has constructor arguments in the object store and max_restarts > 0.")


def test_forwarded_cpp_lines_are_split_from_worker_output():
    data = {"lines": ["[train] step 1/4 loss 2.31", CPP_LINE, "Traceback (most recent call last):"], "pid": 28094,
            "actor_name": "TrainController", "is_err": True}
    kept, chatter = console.split_forwarded_lines(data)
    assert kept["lines"] == ["[train] step 1/4 loss 2.31", "Traceback (most recent call last):"]
    assert kept["pid"] == 28094 and data["lines"][1] == CPP_LINE  # the batch itself is left as it was
    assert chatter == [f"(TrainController pid=28094) {CPP_LINE}"]
    assert console.split_forwarded_lines({"lines": ["[2026] not a log line"], "pid": 1})[1] == []


@pytest.fixture
def quiet_console(tmp_path, monkeypatch, restore_root_logging):
    """Call it in the test (the console handler then writes to the stderr that capsys captures)."""
    monkeypatch.delenv(console.VERBOSE_ENV, raising=False)
    monkeypatch.setenv(console.LOG_FILE_ENV, "")
    yield lambda: console.configure_console("unit", log_dir=tmp_path)
    console._HANDLERS.clear()


def test_ray_cpp_lines_forwarded_to_the_driver_go_to_the_log_file(quiet_console, monkeypatch):
    from ray._private import ray_logging

    log = quiet_console()
    printed = []
    dispatcher = ray_logging.WorkerStandardStreamDispatcher()
    dispatcher.add_handler("ray_print_logs", printed.append)
    monkeypatch.setattr(ray_logging, "global_worker_stdstream_dispatcher", dispatcher)
    from ray._private import worker

    monkeypatch.setattr(worker, "print_to_stdstream", worker.print_to_stdstream)  # wrapped too: restored after
    console.forward_ray_cpp_lines_to_log_file()
    console.forward_ray_cpp_lines_to_log_file()  # idempotent: wrapped once
    dispatcher.emit({"lines": ["[train] done", CPP_LINE], "pid": 7, "actor_name": "TrainController"})
    dispatcher.emit({"lines": [CPP_LINE], "pid": 8, "actor_name": None})
    dispatcher.emit({"lines": [CPP_LINE, ""], "pid": 9, "actor_name": None})  # printed a blank line on the console
    dispatcher.emit({"lines": [""], "pid": 10, "actor_name": None})  # a worker's own blank line still prints
    assert [batch["lines"] for batch in printed] == [["[train] done"], [""]]  # an all-chatter batch prints nothing
    assert log.read_text().splitlines() == [f"(TrainController pid=7) {CPP_LINE}", f"(worker pid=8) {CPP_LINE}",
                                            f"(worker pid=9) {CPP_LINE}"]


def test_the_raylet_worker_pool_warning_goes_to_the_log_file(quiet_console, monkeypatch, capsys):
    """The raylet's "N PYTHON worker processes have been started" (a busy machine) reached the console through the
    driver's own printing of raylet messages; it goes to the log file, other raylet messages still print."""
    from ray._private import ray_logging, worker

    log = quiet_console()
    printed = []
    dispatcher = ray_logging.WorkerStandardStreamDispatcher()
    dispatcher.add_handler("ray_print_logs", printed.append)
    monkeypatch.setattr(ray_logging, "global_worker_stdstream_dispatcher", dispatcher)
    monkeypatch.setattr(worker, "print_to_stdstream", worker.print_to_stdstream)  # restored after the test
    console.forward_ray_cpp_lines_to_log_file()
    console.forward_ray_cpp_lines_to_log_file()  # idempotent: wrapped once
    pool = ("WARNING: 8 PYTHON worker processes have been started on node: 7df1 with address: 127.0.0.1, which is 4x "
            "the maximum expected startup concurrency (2).")
    memory = "Task was killed due to the node running low on memory."
    worker.print_to_stdstream({"lines": [pool], "pid": "raylet", "is_err": False}, ignore_prefix=False)
    worker.print_to_stdstream({"lines": [memory, pool], "pid": "raylet", "is_err": False}, ignore_prefix=False)
    console_out = capsys.readouterr().out
    assert memory in console_out and "PYTHON worker processes" not in console_out
    # and by the dispatcher's path (the log monitor's batches), where the same line arrived once without a prefix
    dispatcher.emit({"lines": [pool, "ours"], "pid": "raylet"})
    assert [batch["lines"] for batch in printed] == [["ours"]]
    assert log.read_text().splitlines() == [f"(worker pid=raylet) {pool}"] * 3


@pytest.fixture
def mlflow_stream():
    from mlflow.utils import logging_utils

    logger = logging.getLogger("mlflow")
    saved = list(logger.handlers), logger.propagate
    yield logging_utils
    for name in ("write", "flush", "_interlingua"):
        logging_utils.MLFLOW_LOGGING_STREAM.__dict__.pop(name, None)
    logger.handlers[:], logger.propagate = saved


def test_mlflow_registration_lines_go_to_the_log_file(mlflow_stream, quiet_console, capsys):
    log = quiet_console()
    console.mlflow_events_to_log_file()
    mlflow_stream.eprint("Successfully registered model 'enc'.")
    logging.getLogger("mlflow.store").error("the store failed")
    for handler in logging.getLogger().handlers:
        handler.flush()
    err = capsys.readouterr().err
    assert "Successfully registered" not in err and "the store failed" in err
    text = log.read_text()
    assert "Successfully registered model 'enc'." in text and "the store failed" in text


def test_mlflow_imported_before_the_command_logs_to_the_file_only(mlflow_logging_as_imported, quiet_console, capsys):
    """MLflow imported (its logger at INFO with its own stderr handler) before the command set MLFLOW_LOGGING_LEVEL:
    its INFO records go to the log file from the start of the command, not only once the tracking store is set."""
    log = quiet_console()
    logging.getLogger("mlflow.store.db.utils").info("Creating initial MLflow database tables...")
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert "Creating initial" not in capsys.readouterr().err
    assert "Creating initial MLflow database tables..." in log.read_text()


def test_verbose_keeps_mlflow_and_ray_auth_lines_on_the_console(tmp_path, monkeypatch, restore_root_logging,
                                                               mlflow_stream, capsys):
    monkeypatch.setenv(console.VERBOSE_ENV, "0")  # recorded: unset after the test, not restored as the "1" set below
    monkeypatch.setenv(console.LOG_FILE_ENV, "")
    console.configure_console("unit", verbose=True, log_dir=tmp_path)
    monkeypatch.setenv(console.VERBOSE_ENV, "1")
    console.mlflow_events_to_log_file()
    console.to_log_file_only("interlingua.unit.auth")
    mlflow_stream.eprint("Created version '1' of model 'enc'.")
    logging.getLogger("interlingua.unit.auth").warning("token auth is on")
    assert "Created version '1'" in capsys.readouterr().err
    assert logging.getLogger("interlingua.unit.auth").propagate  # untouched
    console._HANDLERS.clear()


def test_a_library_logger_can_be_sent_to_the_log_file_only(quiet_console, capsys):
    log = quiet_console()
    name = "interlingua.unit.noisy_library"
    logging.getLogger(name).addHandler(logging.StreamHandler(sys.stderr))
    console.to_log_file_only(name)
    logging.getLogger(name).warning("Token authentication is enabled for this Ray cluster.")
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert "Token authentication" not in capsys.readouterr().err
    assert "Token authentication is enabled" in log.read_text()
    logging.getLogger(name).handlers.clear()
    logging.getLogger(name).propagate = True


def test_processes_started_inside_child_stderr_to_log_write_to_the_log_file(quiet_console, capfd):
    import subprocess

    log = quiet_console()
    script = "import sys; sys.stderr.write('E gcs_actor_scheduler.cc:538: Failed to kill actor\\n')"
    with console.child_stderr_to_log():
        child = subprocess.Popen([sys.executable, "-c", script])  # inherits fd 2, like Ray's GCS and raylet
    child.wait()
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('after\\n')"], check=True)
    captured = capfd.readouterr()
    assert "Failed to kill actor" not in captured.err and "after" in captured.err  # fd 2 is the console again
    assert "Failed to kill actor" in log.read_text()


def test_child_stderr_stays_on_the_console_when_verbose(quiet_console, capfd, monkeypatch):
    import subprocess

    log = quiet_console()
    monkeypatch.setenv(console.VERBOSE_ENV, "1")
    with console.child_stderr_to_log():
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('chatter\\n')"], check=True)
    assert "chatter" in capfd.readouterr().err and not (log.exists() and "chatter" in log.read_text())


NATIVE_STDERR_SCRIPT = r"""
import logging, os, subprocess, sys
from interlingua.core import console
log = console.configure_console("unit", log_dir=sys.argv[1])
with console.tee_to_log(log), console.native_stderr_to_log():
    os.write(2, b"[2026-11-23 22:23:42,778 E 9629 9629] core_worker.cc:2465: Actor with class name\n")
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('child chatter\\n')"], check=True)
    print("[stage] ours", file=sys.stderr)
    logging.getLogger("interlingua.unit").warning("a warning of ours")
print("after the block", file=sys.stderr)
os.write(2, b"native after\n")
print(log)
"""


@pytest.mark.parametrize("verbose", [False, True])
def test_native_stderr_goes_to_the_log_file_and_ours_to_the_console(tmp_path, verbose):
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in (console.VERBOSE_ENV, console.LOG_FILE_ENV)}
    if verbose:
        env[console.VERBOSE_ENV] = "1"
    done = subprocess.run([sys.executable, "-c", NATIVE_STDERR_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          env=env, check=True)
    log = open(done.stdout.strip().splitlines()[-1], encoding="utf-8").read()
    for ours in ("[stage] ours", "a warning of ours", "after the block", "native after"):
        assert ours in done.stderr
    for native in ("core_worker.cc:2465", "child chatter"):
        assert (native in done.stderr) == verbose
        assert (native in log) != verbose
    assert "[stage] ours" in log  # the log file keeps our lines too


def test_the_raylets_forwarded_cpp_lines_are_chatter_too():
    line = ("[2026-11-23 22:04:41,651 E 699 710] (raylet) file_system_monitor.cc:116: /tmp/ray/session_x is over 95% "
            "full, available space: 10.66 GB; capacity: 251.97 GB.")
    kept, chatter = console.split_forwarded_lines({"lines": [line, "(raylet) ours"], "pid": "raylet"})
    assert kept["lines"] == ["(raylet) ours"] and chatter == [f"(worker pid=raylet) {line}"]


def test_tee_masks_credentials_on_the_console_and_in_the_log(tmp_path, capsys):
    log = tmp_path / "x.log"
    with console.tee_to_log(log):
        size = sys.stdout.write("loading https://u:pw@h/m?token=t\n")
        print("password=hunter2", file=sys.stderr)
    captured = capsys.readouterr()
    assert size == len("loading https://u:pw@h/m?token=t\n")  # what the caller asked to write
    assert captured.out == "loading https://***@h/m?token=***\n" and captured.err == "password=***\n"
    assert log.read_text() == captured.out + captured.err


def test_printable_escapes_what_drives_a_terminal_and_keeps_json_valid():
    import json

    from interlingua.core.console import printable, printable_data

    text = "a\x1b]52;c;ZXZpbA==\x07b\u009b2Jc\u202ed\x7f\ne\tf"
    assert printable(text) == "a\\x1b]52;c;ZXZpbA==\\x07b\\x9b2Jc\\u202ed\\x7f\\ne\\tf"
    assert printable(text, keep="\n") == "a\\x1b]52;c;ZXZpbA==\\x07b\\x9b2Jc\\u202ed\\x7f\ne\\tf"
    assert printable("plain ünïcode ☃ text") == "plain ünïcode ☃ text"
    dumped = json.dumps({"k": text}, ensure_ascii=False, indent=1)
    assert json.loads(printable(dumped, keep="\n", json=True)) == {"k": text}
    assert printable_data({"x\x1b": [text, 1, None]}) == {"x\\x1b": [printable(text), 1, None]}


def test_a_worker_s_print_reaches_ray_s_log_monitor_as_one_line(tmp_path, monkeypatch):
    """Ray's log monitor reads a worker's log file as it grows; a print's newline written apart from its text (Ray's
    worker stdout flushed after each write) reached the driver as an empty line: a blank line between two steps."""
    from ray._private.log_monitor import LogFileInfo, LogMonitor
    from ray._private.utils import open_log
    from ray._private.worker import print_worker_logs

    published = []

    class Gcs:
        def publish_logs(self, data):
            published.append(data)

    path = tmp_path / "worker-01-02-7.out"
    path.touch()
    monitor = LogMonitor("127.0.0.1", str(tmp_path), Gcs(), lambda pid: True)
    monitor.open_file_infos.append(LogFileInfo(filename=str(path), size_when_last_opened=0, file_position=0,
                                               file_handle=open(path, "rb"), worker_pid=7))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    worker_stdout = open_log(fd, unbuffered=True, closefd=False)  # as Ray's default_worker sets sys.stdout
    monkeypatch.setattr(sys, "stdout", worker_stdout)

    class MonitorReadsAfterEachWrite:
        def write(self, text):
            sys.stdout.write(text)
            monitor.check_log_files_and_publish_updates()

        def flush(self):
            sys.stdout.flush()

    try:
        console.worker_prints_whole_lines()
        for step in (1, 2):
            print(f"[train] step {step}/24", file=MonitorReadsAfterEachWrite(), flush=True)
        monitor.check_log_files_and_publish_updates()
    finally:
        monitor.open_file_infos[0].file_handle.close()
        worker_stdout.stream.close()
        os.close(fd)
    assert [line for batch in published for line in batch["lines"]] == ["[train] step 1/24", "[train] step 2/24"]
    driver = io.StringIO()
    for batch in published:
        print_worker_logs(batch, driver, ignore_prefix=True)
    assert driver.getvalue() == "[train] step 1/24\n[train] step 2/24\n"
