"""Training killed with SIGKILL after a checkpoint, then rerun with the same name: it resumes from the last
complete checkpoint on disk and ends exactly where an uninterrupted run with the same seed ends — same step
count, same loss at every step, same final weights."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from faults.harness import FaultCounts, cli_env, kill_tree, start, wait_until
from faults.train_driver import result_line
from interlingua.trainers.engine.checkpoints import latest_complete

pytestmark = pytest.mark.slow

MAX_STEPS, EVERY = 40, 4
DRIVER = str(Path(__file__).with_name("train_driver.py"))


def _weights(encoder_dir: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    (path,) = sorted(Path(encoder_dir).glob("*.safetensors"))
    return load_file(str(path))


def _losses(client, run_id: str, since_ms: int = 0) -> dict[int, float]:
    """Loss per step (the last value logged for a step wins), from entries logged at or after ``since_ms``."""
    out = {}
    for metric in sorted(client.get_metric_history(run_id, "loss"), key=lambda m: m.timestamp):
        if metric.timestamp >= since_ms:
            out[metric.step] = metric.value
    return out


def _run(root, name, run_id, env, log) -> dict:
    process = start([DRIVER, str(root), name, run_id, str(MAX_STEPS), str(EVERY)], env, log)
    try:
        assert process.wait(timeout=420) == 0, log.read_text()[-3000:]
    finally:
        kill_tree(process)
    return result_line(log.read_text())


def test_killed_training_resumes_to_the_uninterrupted_result(tmp_path):
    from mlflow.tracking import MlflowClient

    from interlingua.models.sentence_encoder import SentenceEncoder
    from tiny_models import build_tiny_bert

    SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "tiny_bert"), max_length=16).save(tmp_path / "tiny_encoder")
    env = cli_env(tmp_path)
    client = MlflowClient(env["MLFLOW_TRACKING_URI"])
    experiment = client.create_experiment("faults", artifact_location=(tmp_path / "art").as_uri())
    reference_id = client.create_run(experiment, run_name="reference").info.run_id
    victim_id = client.create_run(experiment, run_name="victim").info.run_id
    counts = FaultCounts(trials=1)

    reference = _run(tmp_path, "reference", reference_id, env, tmp_path / "reference.log")

    run_dir = tmp_path / "ray_results" / "victim"
    process = start([DRIVER, str(tmp_path), "victim", victim_id, str(MAX_STEPS), str(EVERY)], env,
                    tmp_path / "victim.log")
    reached = wait_until(lambda: latest_complete(run_dir) is not None,
                         process, 420, poll=0.01)
    alive = process.poll() is None
    kill_tree(process)
    assert reached and alive, "the run ended before the first checkpoint could be seen: no fault injected"
    counts.faults += 1
    resumed_from = latest_complete(run_dir).step
    assert EVERY <= resumed_from < MAX_STEPS and resumed_from % EVERY == 0

    logged_before_kill = max(_losses(client, victim_id), default=0)  # the last step the killed run logged
    since = int(time.time() * 1000)
    resumed = _run(tmp_path, "victim", victim_id, env, tmp_path / "resumed.log")
    assert f"resuming from step {resumed_from}" in (tmp_path / "resumed.log").read_text()
    assert resumed["step"] == reference["step"] == MAX_STEPS

    # the rerun trained exactly the steps after the checkpoint, and logged those the run's history lacked: the steps
    # between the checkpoint and the kill, logged before it, are in the history once
    assert sorted(_losses(client, victim_id, since)) == list(range(logged_before_kill + 1, MAX_STEPS + 1))
    assert sorted(m.step for m in client.get_metric_history(victim_id, "loss")) == list(range(1, MAX_STEPS + 1))
    # ...and the run's loss history is the uninterrupted run's, step for step
    expected, got = _losses(client, reference_id), _losses(client, victim_id)
    assert sorted(got) == sorted(expected) == list(range(1, MAX_STEPS + 1))
    np.testing.assert_allclose([got[s] for s in sorted(got)], [expected[s] for s in sorted(expected)], rtol=1e-5)
    final, reference_weights = _weights(resumed["encoder_dir"]), _weights(reference["encoder_dir"])
    assert final.keys() == reference_weights.keys()
    for key in final:
        np.testing.assert_allclose(final[key], reference_weights[key], rtol=1e-5, atol=1e-7, err_msg=key)
    counts.rows_checked = MAX_STEPS  # steps compared
    print(counts.line(f"training SIGKILL after step {resumed_from}/{MAX_STEPS}, steps compared"))
