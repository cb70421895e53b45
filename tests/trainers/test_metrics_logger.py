"""The training loop's per-step MLflow logger: asynchronous writes, all of them there after close, failures counted."""

from __future__ import annotations

import warnings

import pytest

from interlingua.trainers.engine.train_loop import _MetricsLogger


@pytest.fixture()
def run(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    run = client.create_run(client.create_experiment("metrics"))
    yield uri, client, run.info.run_id
    client.set_terminated(run.info.run_id)


def test_every_step_is_in_the_run_after_close(run):
    uri, client, run_id = run
    logger = _MetricsLogger(run_id, uri)
    for step in range(1, 6):
        logger.log({"loss": 1.0 / step, "tokens": 10 * step, "step": step}, step)
        assert len(logger.pending) == 1  # earlier steps were waited for before this one was queued
    logger.close()
    assert logger.pending == [] and logger.failures == 0
    history = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "loss"))
    assert history == [(step, pytest.approx(1.0 / step)) for step in range(1, 6)]
    assert [m.value for m in sorted(client.get_metric_history(run_id, "tokens"), key=lambda m: m.step)] == [
        10.0, 20.0, 30.0, 40.0, 50.0]
    assert client.get_metric_history(run_id, "step") == []  # the step is the metrics' x axis, not a metric


def test_a_failed_write_is_warned_about_and_counted_not_raised(run, monkeypatch):
    uri, _, run_id = run
    logger = _MetricsLogger(run_id, uri)

    def refuse(*args, **kwargs):
        raise ConnectionError("tracking server unreachable")

    monkeypatch.setattr(logger.client, "log_batch", refuse)
    with pytest.warns(UserWarning, match=r"failed at step 3 \(1 failures so far\): tracking server unreachable"):
        logger.log({"loss": 0.5}, 3)
    assert logger.failures == 1


def test_a_write_that_fails_in_the_background_is_counted_when_waited_for(run, monkeypatch):
    uri, _, run_id = run
    logger = _MetricsLogger(run_id, uri)

    class Failed:
        def wait(self):
            raise RuntimeError("rejected by the store")

    monkeypatch.setattr(logger.client, "log_batch", lambda *args, **kwargs: Failed())
    logger.log({"loss": 0.5}, 1)
    with pytest.warns(UserWarning, match="failed at step 1 .*rejected by the store"):
        logger.close()
    assert logger.failures == 1 and logger.pending == []


def test_without_a_run_nothing_is_logged():
    logger = _MetricsLogger(None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logger.log({"loss": 0.5}, 1)
        logger.close()
    assert logger.client is None and logger.failures == 0
