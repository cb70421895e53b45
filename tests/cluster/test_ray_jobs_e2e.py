"""Jobs on a real Ray cluster, through the CLI only: a Ray head started here (``ray start --head`` on
127.0.0.1, free ports, token authentication on) with one worker node, a real ``mlflow server`` on
127.0.0.1, and real workflows submitted with ``interlingua submit``: a bitext corpus on a few hundred
written pairs (submitted, then followed with ``jobs logs --follow``), a stopped job, a failing job, a job
whose driver is killed, and a 2-step quickstart-shaped training on a tiny model that registers the model
in the MLflow server. The token never appears in any output."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from interlingua.cluster.local_head import free_ports, local_ray_head
from tiny_models import EN_ES_PAIRS, build_tiny_bert

pytestmark = pytest.mark.slow

PAIRS = [(f"{en} {k}", f"{es} {k}") for k in range(20) for en, es in EN_ES_PAIRS]  # 320 distinct pairs


@pytest.fixture(scope="module")
def head():
    with local_ray_head(num_cpus=2, worker_cpus=2, env={"HF_HUB_OFFLINE": "1", "RAY_DEDUP_LOGS": "1"}) as h:
        yield h


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Path:
    """Plays the volume mounted on every node (declared with --shared-path)."""
    root = tmp_path_factory.mktemp("shared")
    (root / "raw.en").write_text("".join(en + "\n" for en, _ in PAIRS))
    (root / "raw.es").write_text("".join(es + "\n" for _, es in PAIRS))
    return root


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlflow")
    (port,) = free_ports(1)
    log = open(root / "server.log", "wb")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}", "--artifacts-destination", str(root / "artifacts"),
         "--workers", "1"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_http(f"{url}/health", proc, 120, root / "server.log")
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def _wait_http(url: str, proc: subprocess.Popen, timeout: float, log: Path) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer in {timeout:.0f} s")


def cli(head, *args: str, token: str | None = None, timeout: float = 600,
        address: str | None = None) -> subprocess.CompletedProcess:
    env = head.client_env()
    if token is not None:
        env["RAY_AUTH_TOKEN"] = token
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", *args, "--address", address or head.address],
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert head.token not in proc.stdout + proc.stderr
    return proc


def _bitext_args(shared: Path, name: str, *extra: str) -> list[str]:
    return ["bitext-corpus", "--set", f"source={shared / 'raw.en'}", "--set", f"target={shared / 'raw.es'}",
            "--set", f"corpus_name={name}", "--set", "rows_per_shard=100", "--set", "workers=1",
            "--shared-path", str(shared), "--state-dir", str(shared / "state"), *extra]


def test_head_and_worker_node_listen_on_the_loopback_interface_only(head):
    """Project rule: local services bind 127.0.0.1. Every listening socket of the head's and the worker
    node's processes (GCS, raylets, dashboard, agents, workers) is on the loopback address."""
    import ipaddress

    import psutil

    listening, processes = [], set()
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            for conn in proc.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    listening.append((conn.laddr.ip, conn.laddr.port, proc.name()))
                    processes.add(proc.name())
    assert {"gcs_server", "raylet"} <= processes and len([p for p in listening if p[2] == "raylet"]) >= 4  # 2 nodes
    exposed = [entry for entry in listening
               if not ipaddress.ip_address(entry[0].removeprefix("::ffff:")).is_loopback]
    assert exposed == []


def test_bitext_corpus_job_submitted_then_followed_listed_and_published(head, shared):
    submitted = cli(head, "submit", *_bitext_args(shared, "bitext-e2e"))
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    assert job_id.startswith("interlingua-bitext-corpus-") and "interlingua jobs logs" in submitted.stderr

    followed = cli(head, "jobs", "logs", job_id, "--follow")
    assert followed.returncode == 0, followed.stderr
    assert "interlingua run bitext-corpus -c interlingua-job.yaml" in followed.stdout  # Ray's entrypoint line
    assert '"corpus": "bitext-e2e"' in followed.stdout and '"rows": 320' in followed.stdout
    assert f"job {job_id} succeeded" in followed.stderr

    status = cli(head, "jobs", "status", job_id)
    assert status.returncode == 0 and f"job {job_id}: SUCCEEDED" in status.stdout
    assert "workflow   bitext-corpus (interlingua 0.1.0, cluster image)" in status.stdout
    listed = cli(head, "jobs", "list")
    assert any(line.split()[:3] == [job_id, "SUCCEEDED", "bitext-corpus"] for line in listed.stdout.splitlines())
    logs = cli(head, "jobs", "logs", job_id)
    assert '"rows": 320' in logs.stdout

    # the corpus the job published on the shared state dir
    from interlingua.operators.corpus.store import CorpusStore

    manifest = CorpusStore(str(shared / "state" / "corpus")).manifest("bitext-e2e")
    assert manifest.total_rows == len(PAIRS)


def test_stop_a_running_job(head, shared):
    submitted = cli(head, "submit", *_bitext_args(shared, "bitext-stopped", "--set", "iterations=200"))
    job_id = submitted.stdout.strip()
    stopped = cli(head, "jobs", "stop", job_id, "--wait")
    assert stopped.returncode == 0 and f"job {job_id}: STOPPED" in stopped.stdout, stopped.stdout + stopped.stderr
    followed = cli(head, "jobs", "logs", job_id, "--follow")
    assert followed.returncode == 3
    assert f"interlingua jobs logs: job {job_id} stopped: it was stopped" in followed.stderr
    again = cli(head, "jobs", "stop", job_id)
    assert again.returncode == 0 and "had already finished (STOPPED)" in again.stdout


def test_a_failing_job_exits_non_zero_with_the_jobs_error(head, shared):
    proc = cli(head, "submit", "bitext-corpus", "--set", f"source={shared / 'missing.en'}",
               "--set", f"target={shared / 'missing.es'}", "--shared-path", str(shared),
               "--state-dir", str(shared / "state"), "--wait")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    # the job's own one-line error (inputs are checked before Ray or a model starts)
    assert " failed: interlingua run: error: input " in last and "missing.en" in last and "not found" in last


def test_a_job_whose_driver_is_killed_fails_with_a_line_saying_so(head, shared):
    import psutil

    marker = uuid.uuid4().hex
    submitted = cli(head, "submit", *_bitext_args(shared, "bitext-killed", "--set", "iterations=200",
                                                  "--env", f"INTERLINGUA_TEST_MARKER={marker}"))
    job_id = submitted.stdout.strip()
    driver = None
    deadline = time.monotonic() + 120
    while driver is None and time.monotonic() < deadline:
        for p in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if "run" in (p.info["cmdline"] or []) and p.environ().get("INTERLINGUA_TEST_MARKER") == marker:
                    driver = p
                    break
        time.sleep(0.5)
    assert driver is not None, "the job's driver process did not start"
    driver.kill()  # the driver this test's job started, by its pid
    followed = cli(head, "jobs", "logs", job_id, "--follow")
    assert followed.returncode == 1
    last = followed.stderr.strip().splitlines()[-1]
    assert f"job {job_id} failed: its driver process was killed (signal 9" in last


def test_wrong_token_and_unknown_job_against_the_real_head(head):
    wrong = cli(head, "jobs", "list", token="0" * 32)
    assert wrong.returncode == 2 and "rejected the token from $RAY_AUTH_TOKEN" in wrong.stderr
    assert "Traceback" not in wrong.stderr and len(wrong.stderr.strip().splitlines()) == 1
    bare = cli(head, "jobs", "list", address=head.address.removeprefix("http://"))  # HOST:PORT, no scheme
    assert bare.returncode == 0, bare.stderr
    unknown = cli(head, "jobs", "status", "raysubmit_doesnotexist")
    assert unknown.returncode == 2 and "no job 'raysubmit_doesnotexist'" in unknown.stderr


def test_quickstart_shaped_training_job_registers_the_model_in_an_mlflow_server(head, shared, mlflow_server):
    import pyarrow as pa
    import pyarrow.parquet as pq

    model = build_tiny_bert(shared / "tiny_bert")
    # each text its own: a held-out verse whose text a training verse has is no test verse
    rows = [(f"Tiny.{i // len(EN_ES_PAIRS)}.{i % len(EN_ES_PAIRS)}",
             *(f"{text} ({i})" for text in EN_ES_PAIRS[i % len(EN_ES_PAIRS)])) for i in range(31 * len(EN_ES_PAIRS))]
    pq.write_table(pa.table({"id": [r[0] for r in rows], "en": [r[1] for r in rows], "es": [r[2] for r in rows]}),
                   shared / "bitext.parquet")
    (shared / "debian").mkdir()
    pq.write_table(pa.table({"en": [p[0] for p in EN_ES_PAIRS], "tgt": [p[1] for p in EN_ES_PAIRS]}),
                   shared / "debian" / "debian-reference-en-es.parquet")
    settings = {"model": model, "bitext": shared / "bitext.parquet", "debian_reference_dir": shared / "debian",
                "registered_model": "tiny-cluster", "alias": "cluster", "experiment": "cluster-e2e",
                "rows_per_shard": 100, "train.max_steps": 2, "train.batch_size": 4, "train.max_length": 16,
                "train.lr": 1e-3, "train.warmup_steps": 0, "train.freeze_embeddings": False}
    args = ["submit", "quickstart", "--shared-path", str(shared), "--state-dir", str(shared / "qs-state"),
            "--tracking-uri", mlflow_server, "--wait"]
    for key, value in settings.items():
        args += ["--set", f"{key}={value}"]
    proc = cli(head, *args)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "retrieval accuracy" in proc.stdout and "registered models:/tiny-cluster@cluster" in proc.stdout

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_server, registry_uri=mlflow_server)
    version = client.get_model_version_by_alias("tiny-cluster", "cluster")
    run = client.get_run(version.run_id)
    assert run.data.tags["interlingua.workflow"] == "quickstart"
    assert sorted(m.step for m in client.get_metric_history(version.run_id, "loss")) == [1, 2]
    assert not (shared / "qs-state" / "mlflow.db").exists()  # nothing went to a local SQLite store
