"""A throw-away Ray cluster on this machine, for tests, benchmarks and trying ``interlingua submit``:
``ray start --head --block`` bound to 127.0.0.1 on free ports, token authentication on
(``RAY_AUTH_MODE=token``, a fresh token in ``$RAY_AUTH_TOKEN``, as Ray 2.60 configures it), its own temp
dir, optionally one worker node joined to it. Stopped by signalling the processes it started (never
``ray stop``, which would stop every Ray on the machine)::

    with local_ray_head(num_cpus=2, worker_cpus=2) as head:
        env = head.client_env()          # RAY_AUTH_TOKEN for the CLI
        subprocess.run(["interlingua", "submit", ..., "--address", head.address], env=env)
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
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


def worker_port_range(taken: list[int], width: int = 200) -> tuple[int, int]:
    """``(lo, lo + width)``: a range of worker ports in 11000-32767 that holds none of ``taken``.

    Ray refuses to start a node whose worker-port range holds one of its other components' ports (a fresh-clone
    run of the slow suite failed so: node manager 35551 inside workers 35513-35713). Those are ephemeral ports
    (``free_ports``), which Linux hands out from 32768 up by default, so a range below that rarely meets one; the
    ``taken`` check covers a machine that hands out lower ports too. Ray's own defaults (6379, 8265, 10001) lie
    below 11000. The start comes from the ports, so two clusters on one machine seldom share a range."""
    base = 11000
    span = 32768 - base - width
    lo = base + max(taken, default=0) % span
    for _ in range(span // (width + 1) + 1):
        if not any(lo <= p <= lo + width for p in taken):
            return lo, lo + width
        lo = base + (lo - base + width + 1) % span
    raise RuntimeError(f"no range of {width + 1} worker ports between {base} and 32767 avoids the ports in use")


@contextlib.contextmanager
def local_ray_head(num_cpus: int = 4, env: dict[str, str] | None = None, startup_s: float = 120,
             worker_cpus: int = 0) -> Iterator[RayHead]:
    """A head (and, with ``worker_cpus``, one worker node joined to it), stopped on exit."""
    temp_dir = Path(tempfile.mkdtemp(prefix="rayh", dir="/tmp"))
    (temp_dir / "home").mkdir()
    token = secrets.token_hex(16)
    ports = free_ports(len(PORT_OPTIONS) + 2)
    worker_lo, worker_hi = worker_port_range(ports)
    args = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
            "--dashboard-host", "127.0.0.1", "--num-cpus", str(num_cpus), "--object-store-memory", str(200 * 1024**2),
            "--temp-dir", str(temp_dir), "--disable-usage-stats", "--include-dashboard", "true",
            "--min-worker-port", str(worker_lo), "--max-worker-port", str(worker_hi)]
    for option, port in zip(PORT_OPTIONS, ports):
        args += [option, str(port)]
    head_env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "MLFLOW_TRACKING_URI"}
    # The job's entrypoint (`interlingua run ...`) must be on the head's PATH, as in the cluster image.
    head_env["PATH"] = f"{Path(sys.executable).parent}:{head_env.get('PATH', '/usr/bin:/bin')}"
    head_env.update(env or {})
    # Every server of the head (GCS, raylet, agents, dashboard) binds 127.0.0.1, not all interfaces: Ray binds
    # the node IP, and keeps 127.0.0.1 as the node IP only in its single-machine mode (see core.runtime._loopback_only).
    head_env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, HOME=str(temp_dir / "home"),
                    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    log = temp_dir / "head.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, env=head_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    head = RayHead(f"http://127.0.0.1:{ports[1]}", token, temp_dir, log)
    procs = [proc]
    keep = True
    try:
        _wait_for_job_api(head, proc, startup_s)
        if worker_cpus:
            procs.append(_start_worker(f"127.0.0.1:{ports[0]}", worker_cpus, head_env, temp_dir,
                                       [*ports, *range(worker_lo, worker_hi + 1)]))
            _wait_for_worker(procs[-1], temp_dir / "worker.log", startup_s)
        yield head
    except BaseException:
        keep = True  # the logs under temp_dir say why
        raise
    else:
        keep = False
    finally:
        for p in reversed(procs):
            _stop(p)
        if not keep:
            shutil.rmtree(temp_dir, ignore_errors=True)


#: ``ray start`` for a worker node joining a loopback-only head. The node's processes run with
#: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (as the head's do: their node IP stays 127.0.0.1, so every server
#: binds the loopback interface), which also makes ``ray start --address`` refuse to join ("Multi-node Ray
#: clusters are not supported on Windows and OSX"); this CLI process alone lifts that refusal, and keeps the
#: given 127.0.0.1 as the node IP instead of resolving it to the machine's external address.
_JOIN_ON_LOOPBACK = """
import sys
from ray._private import ray_constants, services
ray_constants.ENABLE_RAY_CLUSTER = True
services.resolve_ip_for_localhost = lambda host: host
from ray.scripts.scripts import main
sys.argv[0] = "ray"
sys.exit(main())
"""


def _start_worker(gcs: str, num_cpus: int, env: dict[str, str], temp_dir: Path, head_ports: list[int]) -> subprocess.Popen:
    """``head_ports``: the head's ports and worker ports, kept out of this node's worker-port range."""
    ports = free_ports(6)
    worker_lo, worker_hi = worker_port_range([*ports, *head_ports])
    args = [sys.executable, "-c", _JOIN_ON_LOOPBACK, "start", "--address", gcs, "--block", "--node-ip-address",
            "127.0.0.1", "--num-cpus", str(num_cpus), "--object-store-memory", str(200 * 1024**2),
            "--disable-usage-stats", "--node-manager-port", str(ports[0]), "--object-manager-port", str(ports[1]),
            "--dashboard-agent-listen-port", str(ports[2]), "--dashboard-agent-grpc-port", str(ports[3]),
            "--metrics-export-port", str(ports[4]), "--runtime-env-agent-port", str(ports[5]),
            "--min-worker-port", str(worker_lo), "--max-worker-port", str(worker_hi)]
    with open(temp_dir / "worker.log", "wb") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for_worker(proc: subprocess.Popen, log: Path, timeout: float) -> None:
    """Until ``ray start`` of the worker node reports the node started (it has registered with the GCS)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the worker node's ray start exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        if "Ray runtime started" in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise RuntimeError(f"the worker node did not start in {timeout:.0f} s:\n{log.read_text()[-3000:]}")


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
