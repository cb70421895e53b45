"""``promote`` and ``interlingua promote`` over an in-memory registry: what moves the alias, what is recorded and
when, and what is refused (no MLflow server; the server test is test_promotion_server.py)."""

from __future__ import annotations

import argparse
import types

import pytest

import interlingua.cluster.promotion as promotion
from interlingua.core.errors import ServiceUnavailable, UserError
from interlingua.evaluation.tasks.spec import TaskSpec
from ports import closed_port


class FakeRegistry:
    """The registry calls ``promote`` makes: aliases, and a log of what happened in which order."""

    def __init__(self, aliases=None):
        self.aliases = dict(aliases or {})
        self.events: list[tuple] = []
        self.lookup_error: Exception | None = None

    def get_model_version_by_alias(self, name, alias):
        self.events.append(("get-alias", alias))
        if self.lookup_error is not None:
            raise self.lookup_error
        if alias not in self.aliases:
            from mlflow.exceptions import MlflowException

            raise MlflowException(f"Registered model alias {alias} not found.", error_code="INVALID_PARAMETER_VALUE")
        return types.SimpleNamespace(version=self.aliases[alias])

    def set_registered_model_alias(self, name, alias, version):
        self.events.append(("set-alias", alias, version))
        self.aliases[alias] = version


def _task(scores: dict[str, dict[str, float]], name="t", on_run=None):
    """A task whose primary metric is ``scores[task name][version]`` for the encoder of that version."""

    def run(encoder, seed):
        if on_run:
            on_run(encoder)
        return {"acc": scores[name][encoder.rsplit("/", 1)[1]]}

    return TaskSpec(name, "retrieval", "en", "acc", run)


@pytest.fixture
def registry(monkeypatch):
    registry = FakeRegistry({"champion": "1"})
    monkeypatch.setattr(promotion, "_check_version_exists", lambda client, ref: None)
    monkeypatch.setattr(promotion, "_check_servable", lambda client, ref: {})
    monkeypatch.setattr("interlingua.models.load.load_text_encoder", lambda uri, mlmodel=None: uri)

    def record(client, candidate, alias, record, table):
        client.events.append(("record", record["decision"],
                              record["reason"]))
        return "run-1"

    monkeypatch.setattr(promotion, "_record", record)
    return registry


def _cli(argv, registry, tasks, monkeypatch, tmp_path):
    from interlingua.workflows.commands import promote as promote_command

    monkeypatch.setattr("mlflow.tracking.MlflowClient", lambda *a, **k: registry)
    monkeypatch.setattr("interlingua.core.runtime.use_tracking_store", lambda *a, **k: None)
    monkeypatch.setattr(promote_command, "_available_tasks", lambda args: tasks)
    monkeypatch.setattr("interlingua.evaluation.runner.select_tasks", lambda available, names: available)
    parser = argparse.ArgumentParser()
    promote_command.add_arguments(parser)
    return promote_command.run(parser.parse_args([*argv, "--tasks", "t", "--pack", str(tmp_path / "none")]))


def test_a_candidate_that_scores_nan_is_not_promoted(registry, monkeypatch, tmp_path, capsys):
    """A collapsed encoder's STS spearman is nan; nan compared false with everything, so it was promoted."""
    tasks = [_task({"t": {"1": 80.0, "2": float("nan")}})]
    rc = _cli(["models:/enc/2", "--alias", "champion"], registry, tasks, monkeypatch, tmp_path)
    assert rc == 1
    assert "not promoted: @champion stays on models:/enc/1: models:/enc/2 scored NaN on task t/en" in capsys.readouterr().out
    assert registry.aliases == {"champion": "1"}
    assert not [e for e in registry.events if e[0] == "set-alias"]


def test_a_holder_that_scores_nan_blocks_the_move(registry):
    result = promotion.promote("models:/enc/2", "champion", [_task({"t": {"1": float("nan"), "2": 95.0}})],
                               client=registry)
    assert not result.moved and registry.aliases == {"champion": "1"}
    assert result.decision.reason == "models:/enc/1 scored NaN on task t/en"


def test_tasks_scored_for_one_model_only_are_one_line(registry, monkeypatch):
    """A task that gave the holder no primary score raised a bare ValueError ("failed: ValueError")."""
    from interlingua.evaluation.tasks.records import Measurement

    def evaluate(encoders, tasks, seeds, release=True):
        (label, _), = encoders.items()
        return [] if label.endswith("/1") else [Measurement(label, "t", "en", "acc", 1, 90.0, True)]

    monkeypatch.setattr("interlingua.evaluation.runner.evaluate_models", evaluate)
    with pytest.raises(UserError, match=r"cannot compare models:/enc/2 with models:/enc/1: candidate and holder "
                                        r"were scored on different tasks.*\(hint: "):
        promotion.promote("models:/enc/2", "champion", [_task({"t": {}})], client=registry)
    assert registry.aliases == {"champion": "1"}


@pytest.fixture
def answering_registry(monkeypatch):
    """A registry URL whose alias lookup answers ``answer[0]`` (status, content type, body)."""
    from mlflow.tracking import MlflowClient

    from mlflow_services import answering_server

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with answering_server((502, "text/html", b"<html>502 Bad Gateway</html>")) as (uri, answer):
        yield MlflowClient(tracking_uri=uri, registry_uri=uri), answer


@pytest.mark.parametrize("answer", [
    (502, "text/html", b"<html>502 Bad Gateway</html>"),          # a proxy while the server restarts
    (500, "application/json", b'{"error_code": "INTERNAL_ERROR", "message": "database is locked"}'),
])
def test_a_registry_that_does_not_answer_is_not_read_as_no_holder(answering_registry, answer):
    """The REST path (/registered-models/alias) holds "alias": every failed lookup read as "no holder", and the
    candidate was promoted as a first promotion."""
    client, answers = answering_registry
    answers[0] = answer
    with pytest.raises(ServiceUnavailable, match=r"^the model registry did not answer which version @champion of enc "
                                                 r"names \(.*\); nothing was moved \(hint: "):
        promotion._alias_holder(client, "enc", "champion")


@pytest.mark.parametrize("answer", [
    (403, "application/json", b'{"error_code": "PERMISSION_DENIED", "message": "not allowed to read aliases of enc"}'),
    (401, "text/html", b"<html>401 Sign in</html>"),  # a proxy's sign-in page: credentials, not "not MLflow"
])
def test_a_registry_that_refuses_the_holder_lookup_is_a_mistake_not_an_outage(answering_registry, answer):
    """Every failure but "not found" was a ServiceUnavailable: a 403 exited 69, and a script retried a refusal."""
    client, answers = answering_registry
    answers[0] = answer
    with pytest.raises(UserError) as refused:  # neither "no holder" nor an outage: a plain 2
        promotion._alias_holder(client, "enc", "champion")
    assert type(refused.value) is UserError
    assert str(refused.value).startswith("the model registry refused to say which version @champion of enc names (")


def test_mlflow_saying_the_alias_names_no_version_is_no_holder(answering_registry):
    client, answers = answering_registry
    answers[0] = (400, "application/json",
                  b'{"error_code": "INVALID_PARAMETER_VALUE", "message": "Registered model alias champion not found."}')
    assert promotion._alias_holder(client, "enc", "champion") is None
    answers[0] = (200, "application/json", b'{"model_version": {"name": "enc", "version": "3"}}')
    assert promotion._alias_holder(client, "enc", "champion") == promotion.ModelVersionRef("enc", "3")


def test_a_failed_holder_lookup_moves_and_records_nothing(registry):
    from mlflow.exceptions import MlflowException

    registry.lookup_error = MlflowException("API request to endpoint /api/2.0/mlflow/registered-models/alias failed "
                                            "with error code 502 != 200", error_code="TEMPORARILY_UNAVAILABLE")
    with pytest.raises(ServiceUnavailable, match="did not answer"):  # the CLI's exit 69, not a mistake's 2
        promotion.promote("models:/enc/2", "champion", [_task({"t": {"1": 1.0, "2": 2.0}})], client=registry)
    assert registry.aliases == {"champion": "1"} and [e[0] for e in registry.events] == ["get-alias"]


def test_a_holder_that_changes_during_the_evaluation_is_not_overwritten(registry, monkeypatch, tmp_path, capsys):
    """B read holder v1; A moved @champion to v3 (better than B's v2) while B evaluated; B then moved it to v2."""
    def meanwhile(encoder):
        if encoder.endswith("/1"):
            registry.aliases["champion"] = "3"

    tasks = [_task({"t": {"1": 50.0, "2": 60.0, "3": 90.0}}, on_run=meanwhile)]
    rc = _cli(["models:/enc/2", "--alias", "champion"], registry, tasks, monkeypatch, tmp_path)
    assert rc == 1
    assert ("not promoted: @champion holder changed during evaluation (models:/enc/1 -> models:/enc/3); rerun"
            in capsys.readouterr().out)
    assert registry.aliases == {"champion": "3"}
    assert registry.events[-1] == ("record", "holder changed",
                                   "holder changed during evaluation (models:/enc/1 -> models:/enc/3); rerun")


def test_the_decision_is_recorded_after_the_alias_moved(registry, monkeypatch, tmp_path, capsys):
    """'promoted' was tagged on the version before the alias was set, so a refused set left a false record."""
    rc = _cli(["models:/enc/2", "--alias", "champion"], registry, [_task({"t": {"1": 50.0, "2": 60.0}})],
              monkeypatch, tmp_path)
    assert rc == 0 and registry.aliases == {"champion": "2"}
    assert [e[:2] for e in registry.events] == [("get-alias", "champion"), ("get-alias", "champion"),
                                                ("set-alias", "champion"), ("record", "promoted")]


def test_a_refused_move_is_recorded_as_such(registry):
    def refuse(name, alias, version):
        registry.events.append(("set-alias", alias, version))
        raise RuntimeError("permission denied")

    registry.set_registered_model_alias = refuse
    with pytest.raises(UserError, match=r"^the registry did not move @champion: RuntimeError: permission denied "
                                        r"\(recorded in MLflow run run-1"):
        promotion.promote("models:/enc/2", "champion", [_task({"t": {"1": 50.0, "2": 60.0}})], client=registry)
    assert registry.events[-1][:2] == ("record", "move failed")
    assert registry.aliases == {"champion": "1"}


@pytest.mark.parametrize("answer", [
    (502, "text/html", b"<html>502 Bad Gateway</html>"),  # a proxy, after MLflow's retries
    (500, "application/json", b'{"error_code": "INTERNAL_ERROR", "message": "database is locked"}'),
])
def test_a_registry_that_does_not_answer_whether_the_version_exists_is_unavailable(answering_registry, answer):
    """Any failure of the version lookup was reported as "does not exist", exit 2: a script did not retry an outage."""
    client, answers = answering_registry
    answers[0] = answer
    with pytest.raises(ServiceUnavailable, match=r"^the model registry did not answer whether models:/enc/2 exists "
                                                 r"\(.*\); nothing was evaluated or moved \(hint: "):
        promotion._check_version_exists(client, promotion.ModelVersionRef("enc", "2"))
    answers[0] = (404, "application/json",
                  b'{"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "Model Version (name=enc, version=2) not found"}')
    with pytest.raises(UserError) as caught:  # a real "not found" stays a mistake (2)
        promotion._check_version_exists(client, promotion.ModelVersionRef("enc", "2"))
    assert type(caught.value) is UserError and str(caught.value).startswith("models:/enc/2 does not exist")


def test_a_registry_that_refuses_connections_is_unavailable(monkeypatch):
    from mlflow.tracking import MlflowClient

    uri = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with pytest.raises(ServiceUnavailable, match="did not answer whether models:/enc/2 exists"):
        promotion._check_version_exists(MlflowClient(tracking_uri=uri, registry_uri=uri),
                                        promotion.ModelVersionRef("enc", "2"))


def test_an_alias_move_the_registry_did_not_answer_is_unavailable(registry):
    """A failed move said "rerun when the registry answers" with the exit code of a mistake (2)."""
    from mlflow.exceptions import MlflowException, RestException

    answers = iter([MlflowException("API request to endpoint /api/2.0/mlflow/registered-models/alias failed with "
                                    "exception ... too many 502 error responses"),  # as MLflow raises it: status 500
                    RestException({"error_code": "PERMISSION_DENIED", "message": "not allowed to set aliases of enc"})])

    def fail(name, alias, version):
        raise next(answers)

    registry.set_registered_model_alias = fail
    tasks = [_task({"t": {"1": 50.0, "2": 60.0}})]
    with pytest.raises(ServiceUnavailable, match=r"^the registry did not move @champion: MlflowException: .*502"):
        promotion.promote("models:/enc/2", "champion", tasks, client=registry)
    with pytest.raises(UserError) as refused:  # the registry answered no: a plain 2
        promotion.promote("models:/enc/2", "champion", tasks, client=registry)
    assert type(refused.value) is UserError and "not allowed to set aliases" in str(refused.value)
    assert [e[:2] for e in registry.events if e[0] == "record"] == [("record", "move failed")] * 2


def test_an_outage_that_also_fails_the_record_of_a_failed_move_is_unavailable(registry, monkeypatch):
    """The alias move failed for want of an answer and so did recording it, on the same server: the record's
    MlflowException went to the unexpected-error path (exit 1)."""
    from mlflow.exceptions import RestException

    def down(*args):
        raise RestException({"error_code": "TEMPORARILY_UNAVAILABLE", "message": "502 Bad Gateway"})

    registry.set_registered_model_alias = down
    monkeypatch.setattr(promotion, "_record", down)
    with pytest.raises(ServiceUnavailable, match=r"^the registry did not move @champion: RestException: .*; the "
                                                 r"decision \(move failed\) was not recorded: the tracking server did "
                                                 r"not answer \(TEMPORARILY_UNAVAILABLE: 502 Bad Gateway\) \(hint: "):
        promotion.promote("models:/enc/2", "champion", [_task({"t": {"1": 50.0, "2": 60.0}})], client=registry)
    assert registry.aliases == {"champion": "1"}


def test_a_refusal_to_record_a_failed_move_is_not_called_an_outage(registry, monkeypatch):
    from mlflow.exceptions import RestException

    def refuse(*args):
        raise RestException({"error_code": "PERMISSION_DENIED", "message": "not allowed"})

    registry.set_registered_model_alias = refuse
    monkeypatch.setattr(promotion, "_record", refuse)
    with pytest.raises(RestException, match="PERMISSION_DENIED"):  # unexpected: not hidden as an outage
        promotion.promote("models:/enc/2", "champion", [_task({"t": {"1": 50.0, "2": 60.0}})], client=registry)


def test_a_gating_task_is_released_once_after_both_models_ran_it(registry):
    """The holder and the candidate score a task on its one read: it is released after both, not after each."""
    events = []

    def run(encoder, seed):
        events.append(("run", encoder))
        return {"acc": {"1": 80.0, "2": 90.0}[encoder.rsplit("/", 1)[1]]}

    task = TaskSpec("t", "retrieval", "en", "acc", run, release=lambda: events.append(("release",)))
    promotion.promote("models:/enc/2", "champion", [task], client=registry)
    assert events == [("run", "models:/enc/2"), ("run", "models:/enc/1"), ("release",)]
