"""A rerun of the same workflow and config continues the MLflow run that did not complete."""

import pytest


@pytest.fixture()
def tracking(tmp_path, monkeypatch):
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    yield mlflow.create_experiment("resume", artifact_location=(tmp_path / "art").as_uri())
    mlflow.set_tracking_uri(previous)


def test_crashed_run_is_continued_and_completed_run_is_not(tracking):
    from mlflow.tracking import MlflowClient

    from interlingua.workflows.resume import COMPLETE_TAG, resume_key, workflow_run

    config = {"train": {"max_steps": 3}, "corpus_name": "x"}
    with pytest.raises(RuntimeError), workflow_run("wf", config, tracking, "first") as first:
        raise RuntimeError("crash")
    client = MlflowClient()
    assert client.get_run(first.run_id).info.status == "FAILED" and not first.resumed
    with workflow_run("wf", config, tracking, "second") as second:
        assert second.resumed and second.run_id == first.run_id
        assert client.get_run(first.run_id).info.status == "RUNNING"
    run = client.get_run(first.run_id)
    assert run.info.status == "FINISHED" and run.data.tags[COMPLETE_TAG] == "true"
    with workflow_run("wf", config, tracking, "third") as third:  # completed: a new run
        assert not third.resumed and third.run_id != first.run_id
    with workflow_run("wf", {**config, "corpus_name": "y"}, tracking, "other") as other:  # other config: new run
        assert not other.resumed and other.run_id not in (first.run_id, third.run_id)
    assert resume_key("wf", config) != resume_key("other-wf", config)


def test_a_crashed_run_is_not_continued_after_its_base_model_was_rewritten(tracking, tmp_path):
    from interlingua.workflows.resume import workflow_run

    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text('{"model_type": "bert"}')
    (base / "model.safetensors").write_bytes(b"weights v1")
    config = {"model": str(base), "train": {"max_steps": 3}}
    with pytest.raises(RuntimeError), workflow_run("wf-base", config, tracking, "first") as first:
        raise RuntimeError("crash")
    (base / "model.safetensors").write_bytes(b"weights v2")  # retrained in place: its checkpoints do not apply
    with pytest.raises(RuntimeError), workflow_run("wf-base", config, tracking, "second") as second:
        assert not second.resumed and second.run_id != first.run_id
        raise RuntimeError("crash again")
    with workflow_run("wf-base", config, tracking, "third") as third:  # unchanged since: continued
        assert third.resumed and third.run_id == second.run_id


def test_a_recipe_stages_run_is_the_one_mlflow_run_id_names(tracking, monkeypatch):
    """A recipe runs a stage's workflow with ``MLFLOW_RUN_ID`` set to the stage's child run, which the recipe creates,
    resumes and ends: the workflow logs there (quickstart and amr-retrofit had opened runs of their own beside it)."""
    from mlflow.tracking import MlflowClient

    from interlingua.workflows.resume import RESUME_TAG, workflow_run

    client = MlflowClient()
    child = client.create_run(tracking).info.run_id
    monkeypatch.setenv("MLFLOW_RUN_ID", child)
    with workflow_run("wf-stage", {"x": 1}, tracking, "stage") as run:
        assert run.run_id == child and not run.resumed
    assert client.get_run(child).info.status == "RUNNING"  # the recipe ends it
    assert RESUME_TAG not in client.get_run(child).data.tags
    assert len(client.search_runs([tracking])) == 1


def test_the_training_workflows_resume_inputs_key_as_before():
    """quickstart, amr-retrofit and train build their resume inputs with one helper: a run that crashed before it
    (keyed on the dict each wrote out) is still found, and another corpus version or model folder is another key."""
    from interlingua.workflows.resume import resume_inputs, resume_key
    from interlingua.workflows.train import TrainWorkflowConfig

    config = TrainWorkflowConfig(corpus="c")
    before = {"config": config.model_dump(mode="json"), "corpus": "c@v-01", "model": "/m"}
    assert resume_key("quickstart", resume_inputs(config, "/m", corpus="c@v-01")) == resume_key("quickstart", before)
    train_before = {"config": config.model_dump(mode="json"), "corpus_versions": {"c": "v-01"}, "model": "/m"}
    assert resume_key("train", resume_inputs(config, "/m", corpus_versions={"c": "v-01"})) == \
        resume_key("train", train_before)
    keys = {resume_key("train", resume_inputs(config, folder, corpus_versions={"c": version}))
            for folder in ("/m", "/n") for version in ("v-01", "v-02")}
    assert len(keys) == 4
