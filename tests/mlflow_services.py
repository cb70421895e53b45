"""Real MLflow processes for integration tests, on 127.0.0.1 and a free port (another one when a process beside the
tests took it first), stopped when the test ends:

- :func:`mlflow_server` — ``mlflow server`` (SQLite backend, served artifacts).
- :func:`model_server` — ``mlflow models serve -m URI --env-manager local`` from any Python environment.
- :func:`serving_venv` — a venv with MLflow and sentence-transformers but no interlingua (uv, local wheels).
- :func:`answering_server` — no MLflow at all: every request gets one set answer (a proxy's 502, a 503 while the
  tracking server restarts, a 404), for the registry's failures without a real server.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Ports tried in turn by a server whose port a process beside the tests took between free_port() and its bind.
PORT_ATTEMPTS = 5


class _PortTaken(Exception):
    """The server exited for its port was in use: taken by another process after free_port() gave it."""


def _wait_bound(port: int, process: subprocess.Popen, log: Path, deadline: float) -> None:
    """Until the server's log says uvicorn runs on ``port``: this process holds it. An answer on the port alone could
    come from a process beside the tests that took it first (a second suite's MLflow answers /health too)."""
    running = f"Uvicorn running on http://127.0.0.1:{port} "
    while time.monotonic() < deadline:
        if running in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            text = log.read_text(errors="replace")
            if "address already in use" in text:
                raise _PortTaken(port)
            raise RuntimeError(f"port {port}: the process exited with {process.returncode}:\n{text[-4000:]}")
        time.sleep(0.5)
    raise RuntimeError(f"port {port}: no 'Uvicorn running' line within the time allowed:\n{log.read_text()[-4000:]}")


def _wait_http(url: str, process: subprocess.Popen, log: Path, deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer in the time allowed:\n{log.read_text()[-4000:]}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # its own session: the server and its workers only
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def _server(command_on: Callable[[int], list[str]], env: dict, log: Path, ready_path: str, cwd: Path,
            timeout: float = 180):
    """The uvicorn server ``command_on(port)`` on a free port, once it holds that port and answers ``ready_path``;
    started again on another port when a process beside the tests took the port first. Yields its base URL."""
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(command_on(port), env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            _wait_bound(port, process, log, deadline)
            _wait_http(f"http://127.0.0.1:{port}{ready_path}", process, log, deadline)
            yield f"http://127.0.0.1:{port}"
            return
        except _PortTaken:
            continue
        finally:
            _stop(process)
    raise RuntimeError(f"{PORT_ATTEMPTS} free ports in turn were taken before the server bound them:\n"
                       f"{log.read_text()[-4000:]}")


@contextlib.contextmanager
def mlflow_server(folder: Path):
    """``mlflow server`` on 127.0.0.1; yields its tracking URI."""
    folder.mkdir(parents=True, exist_ok=True)
    mlflow_bin = str(Path(sys.executable).parent / "mlflow")

    def command_on(port: int) -> list[str]:
        return [mlflow_bin, "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
                "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
                "--artifacts-destination", str(folder / "artifacts")]

    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    with _server(command_on, env, folder / "server.log", "/health", folder) as url:
        yield url


@contextlib.contextmanager
def model_server(python_bin: Path, model_uri: str, tracking_uri: str, folder: Path):
    """``mlflow models serve`` of ``model_uri`` with the environment of ``python_bin``; yields the
    invocations URL."""
    folder.mkdir(parents=True, exist_ok=True)

    def command_on(port: int) -> list[str]:
        return [str(python_bin.parent / "mlflow"), "models", "serve", "-m", model_uri, "--env-manager", "local",
                "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(MLFLOW_TRACKING_URI=tracking_uri, HF_HUB_OFFLINE="1",
               PATH=f"{python_bin.parent}{os.pathsep}{env.get('PATH', '')}")
    with _server(command_on, env, folder / "serve.log", "/ping", folder) as url:
        yield f"{url}/invocations"


@contextlib.contextmanager
def answering_server(answer: tuple[int, str, bytes]):
    """A local HTTP server answering every GET and POST with ``answer[0]`` (status, content type, body; a list, so a
    test changes it between requests); yields ``(url, answer)``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    answers = [answer]

    class Handler(BaseHTTPRequestHandler):
        def _reply(self):
            status, kind, body = answers[0]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", answers
    finally:
        server.shutdown()
        server.server_close()


def post_json(url: str, payload: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def serving_venv(folder: Path) -> Path:
    """A venv (uv, wheels from the local cache and /opt/wheels) with the MLflow, sentence-transformers and
    torch versions installed here, and not interlingua; returns its python. Skips when uv is missing."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    python = folder / "bin" / "python"
    if not python.exists():
        pins = [f"{p}=={metadata.version(p).split('+')[0]}" for p in ("torch", "mlflow", "sentence-transformers")]
        subprocess.run([uv, "venv", "-q", str(folder), "--python", f"{sys.version_info[0]}.{sys.version_info[1]}"],
                       check=True)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(python), "--find-links", "/opt/wheels", *pins],
                       check=True)
    return python
