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


def _history_points(client, run_id: str, keys) -> list[tuple[str, int]]:
    return sorted((key, m.step) for key in keys for m in client.get_metric_history(run_id, key))


def test_a_run_killed_and_resumed_from_its_checkpoint_logs_each_step_once(run):
    """Killed after step 7 with its checkpoint at step 4: the resumed loop trains steps 5 to 10 again in a new
    process (a new logger on the same run); steps 5 to 7, in the history already, are not logged a second time."""
    uri, client, run_id = run
    before_kill = _MetricsLogger(run_id, uri)
    for step in range(1, 8):
        before_kill.log({"loss": 1.0 / step, "lr": 0.1, "step": step}, step)
    before_kill.close()  # what was queued had landed when the process died

    resumed = _MetricsLogger(run_id, uri, resumed=True)
    assert resumed.logged_through == 7
    for step in range(5, 11):
        resumed.log({"loss": 2.0 / step, "lr": 0.2, "step": step}, step)
    resumed.close()

    assert _history_points(client, run_id, ("loss", "lr")) == sorted(
        (key, step) for key in ("loss", "lr") for step in range(1, 11))
    losses = {m.step: m.value for m in client.get_metric_history(run_id, "loss")}
    assert losses[7] == pytest.approx(1.0 / 7) and losses[8] == pytest.approx(2.0 / 8)  # the first value logged kept


def test_a_run_whose_history_cannot_be_read_logs_every_step(run, monkeypatch):
    from mlflow.tracking import MlflowClient

    uri, client, run_id = run

    def unreadable(self, run_id):
        raise ConnectionError("tracking server unreachable")

    monkeypatch.setattr(MlflowClient, "get_run", unreadable)
    with pytest.warns(UserWarning, match="its last logged step could not be read .*tracking server unreachable"):
        logger = _MetricsLogger(run_id, uri, resumed=True)
    logger.log({"loss": 0.5}, 1)
    logger.close()
    assert [m.step for m in client.get_metric_history(run_id, "loss")] == [1]


def test_a_loop_from_step_0_logs_every_step_into_a_run_with_a_history(run):
    """A second training logged to the same run (Python ``fit(..., run_id=R)`` twice): its loop starts at step 0, so
    none of its steps is taken for one a killed process logged; each of its steps is logged."""
    uri, client, run_id = run
    first = _MetricsLogger(run_id, uri)
    for step in range(1, 6):
        first.log({"loss": 1.0}, step)
    first.close()
    second = _MetricsLogger(run_id, uri)
    for step in range(1, 4):
        second.log({"loss": 2.0}, step)
    second.close()
    assert sorted(m.value for m in client.get_metric_history(run_id, "loss")) == [1.0] * 5 + [2.0] * 3
