"""The console shows our lines; the libraries' chatter and tracebacks go to the log file."""

from __future__ import annotations

import logging
import socket
import sys

import pytest

from interlingua.core import console
from interlingua.core.errors import UserError
from interlingua.core.runtime import check_reachable


@pytest.fixture
def restore_root_logging():
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    yield
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
    monkeypatch.delenv(console.VERBOSE_ENV, raising=False)
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
