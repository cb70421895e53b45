"""A real Ray head for the cluster tests (not a test module): ``ray start --head --block`` bound to
127.0.0.1 on free ports, token authentication on (``RAY_AUTH_MODE=token``, the token in
``$RAY_AUTH_TOKEN``, as Ray 2.60 configures it), its own temp dir; stopped by signalling the process
group this fixture started (never ``ray stop``, which would stop every Ray on the machine)."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PORT_OPTIONS = ("--port", "--dashboard-port", "--ray-client-server-port", "--node-manager-port",
                "--object-manager-port", "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
                "--metrics-export-port", "--runtime-env-agent-port")


@dataclass
class RayHead:
    address: str  # http://127.0.0.1:PORT (the dashboard / job API)
    token: str
    temp_dir: Path
    log: Path

    def client_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment for a CLI process talking to this head (token in RAY_AUTH_TOKEN)."""
        env = {k: v for k, v in (base or os.environ).items()
               if k not in ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN",
                            "RAY_AUTH_TOKEN_PATH", "MLFLOW_TRACKING_URI")}
        env.update(RAY_AUTH_TOKEN=self.token, HOME=str(self.temp_dir / "home"))
        return env


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


@contextlib.contextmanager
def ray_head(num_cpus: int = 4, env: dict[str, str] | None = None, startup_s: float = 120) -> Iterator[RayHead]:
    temp_dir = Path(tempfile.mkdtemp(prefix="rayh", dir="/tmp"))
    (temp_dir / "home").mkdir()
    token = secrets.token_hex(16)
    ports = free_ports(len(PORT_OPTIONS) + 2)
    worker_lo = 20000 + (ports[-1] % 20000)
    args = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
            "--dashboard-host", "127.0.0.1", "--num-cpus", str(num_cpus), "--object-store-memory", str(200 * 1024**2),
            "--temp-dir", str(temp_dir), "--disable-usage-stats", "--include-dashboard", "true",
            "--min-worker-port", str(worker_lo), "--max-worker-port", str(worker_lo + 200)]
    for option, port in zip(PORT_OPTIONS, ports):
        args += [option, str(port)]
    head_env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "MLFLOW_TRACKING_URI"}
    # The job's entrypoint (`interlingua run ...`) must be on the head's PATH, as in the cluster image.
    head_env["PATH"] = f"{Path(sys.executable).parent}:{head_env.get('PATH', '/usr/bin:/bin')}"
    head_env.update(env or {})
    head_env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, HOME=str(temp_dir / "home"))
    log = temp_dir / "head.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, env=head_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    head = RayHead(f"http://127.0.0.1:{ports[1]}", token, temp_dir, log)
    try:
        _wait_for_job_api(head, proc, startup_s)
        yield head
    finally:
        _stop(proc)


def _wait_for_job_api(head: RayHead, proc: subprocess.Popen, timeout: float) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"ray start exited with {proc.returncode}:\n{head.log.read_text()[-3000:]}")
        try:
            req = urllib.request.Request(f"{head.address}/api/version",
                                         headers={"Authorization": f"Bearer {head.token}"})
            with urllib.request.urlopen(req, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the Ray head's job API did not answer in {timeout:.0f} s:\n{head.log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to ``ray start --block`` (it stops the node's processes), then the process group it leads."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
