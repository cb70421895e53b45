"""Fault-injection helpers (not a test module): run the CLI in its own session, kill it (or one of its Ray
workers) with SIGKILL at a chosen moment, clean up every process it started, compare corpus versions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]


@dataclass
class FaultCounts:
    """What a fault test did: the closing note of issue #13 reports these."""

    trials: int = 0
    faults: int = 0
    rows_checked: int = 0
    lost: int = 0
    duplicated: int = 0
    notes: list = field(default_factory=list)

    def line(self, what: str) -> str:
        return (f"[faults] {what}: trials={self.trials} faults_injected={self.faults} rows_checked={self.rows_checked} "
                f"lost={self.lost} duplicated={self.duplicated}" + (f" ({'; '.join(self.notes)})" if self.notes else ""))


def cli_env(state: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env.update({"INTERLINGUA_HOME": str(state), "OMP_NUM_THREADS": "2", "RAY_USAGE_STATS_ENABLED": "0",
                "MLFLOW_TRACKING_URI": f"sqlite:///{state / 'mlflow.db'}", "DS_ACCELERATOR": "cpu"})
    env.update(extra)
    return env


def start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    handle = open(log, "ab")
    return subprocess.Popen([sys.executable, *args], cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
                            start_new_session=True)


def descendants(process: subprocess.Popen) -> list[psutil.Process]:
    try:
        return psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_tree(process: subprocess.Popen, known: list[psutil.Process] | None = None) -> None:
    """SIGKILL the driver, then every process it had started (by pid, checked against its creation time)."""
    family = (known or []) + descendants(process)
    try:
        process.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=60)
    for child in family:
        try:
            if child.is_running():
                child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs([c for c in family if _alive(c)], timeout=30)


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running()
    except psutil.Error:
        return False


def wait_until(predicate, process: subprocess.Popen, timeout: float, poll: float = 0.05) -> bool:
    """True when ``predicate()`` holds before ``process`` ends or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        if process.poll() is not None:
            return predicate()
        time.sleep(poll)
    return False


def ray_workers(process: subprocess.Popen, marker: str) -> list[psutil.Process]:
    """The driver's Ray worker processes whose title contains ``marker`` (e.g. an operator's class name)."""
    found = []
    for child in descendants(process):
        try:
            title = " ".join(child.cmdline()) or child.name()
        except psutil.Error:
            continue
        if title.startswith("ray::") and marker in title:
            found.append(child)
    return found


def version_files(store: Path) -> dict[str, bytes]:
    """Every shard and rejects file of every version under ``store`` (relative path -> bytes)."""
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in _published(store, "*.parquet")
            if "/data/" in p.as_posix() or "/rejects/" in p.as_posix()}


def _published(store: Path, pattern: str) -> list[Path]:
    """Files under ``store`` outside writers' private staging folders (``_staging``)."""
    return [p for p in sorted(store.rglob(pattern)) if "_staging" not in p.relative_to(store).parts]


def completed_shards(store: Path) -> int:
    """Shards with a completion record anywhere in the store (published or staged by any writer)."""
    return max(len({p.name for p in store.rglob("_complete/*.json")}), len(manifest_shards(store)))


def manifest_shards(store: Path) -> dict[str, tuple]:
    out = {}
    for path in store.glob("*/*/manifest.json"):
        manifest = json.loads(path.read_text())
        for shard in manifest["shards"]:
            out[f"{manifest['name']}/{manifest['version']}/{shard['shard_id']}"] = (shard["rows"], shard["sha256"])
    return out


def row_ids(store: Path) -> Counter:
    import pyarrow.parquet as pq

    ids: Counter = Counter()
    for path in _published(store, "*.parquet"):
        if "/data/" in path.as_posix():
            ids.update(str(i) for i in pq.read_table(path, columns=["id"]).column("id").to_pylist())
    return ids
