"""Real MLflow processes for integration tests, on 127.0.0.1 and a free port, stopped when the test ends:

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
from importlib import metadata
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
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
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{log.read_text()[-4000:]}")


@contextlib.contextmanager
def _process(command: list[str], env: dict, log: Path, ready_url: str, cwd: Path, timeout: float = 180):
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        _wait_http(ready_url, process, log, timeout)
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # its own session: the server and its workers only
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@contextlib.contextmanager
def mlflow_server(folder: Path):
    """``mlflow server`` on 127.0.0.1; yields its tracking URI."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    mlflow_bin = str(Path(sys.executable).parent / "mlflow")
    command = [mlflow_bin, "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
               "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
               "--artifacts-destination", str(folder / "artifacts")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    with _process(command, env, folder / "server.log", f"http://127.0.0.1:{port}/health", folder):
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def model_server(python_bin: Path, model_uri: str, tracking_uri: str, folder: Path):
    """``mlflow models serve`` of ``model_uri`` with the environment of ``python_bin``; yields the
    invocations URL."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [str(python_bin.parent / "mlflow"), "models", "serve", "-m", model_uri, "--env-manager", "local",
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(MLFLOW_TRACKING_URI=tracking_uri, HF_HUB_OFFLINE="1",
               PATH=f"{python_bin.parent}{os.pathsep}{env.get('PATH', '')}")
    with _process(command, env, folder / "serve.log", f"http://127.0.0.1:{port}/ping", folder):
        yield f"http://127.0.0.1:{port}/invocations"


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
