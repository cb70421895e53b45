"""A ``models:/`` URI the registry cannot give: an outage (nothing listens, an HTTP 5xx) exits 69 so a script reruns it,
an unknown name or alias exits 2 with a hint. Before, every failure was a plain UserError (2). No network: a SQLite
store, a closed port and a local HTTP server answering 5xx; MLflow's retries are off."""

from __future__ import annotations

import pytest

from interlingua.core.errors import ServiceUnavailable, UserError
from interlingua.models.load import resolve_model_folder
from mlflow_services import answering_server as answering_server_at
from mlflow_services import free_port


@pytest.fixture
def registry_at(monkeypatch, tmp_path):
    """``registry_at(uri)``: MLflow's tracking and registry URI for this test (its globals reset before and after),
    retries off and a short timeout."""
    import mlflow

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    monkeypatch.delenv("MLFLOW_REGISTRY_URI", raising=False)

    def use(uri: str) -> str:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
        return uri

    yield use
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


@pytest.fixture
def answering_server():
    """``(url, answer)``: a local server answering every request with ``answer[0]`` (a 503 unless a test sets it)."""
    with answering_server_at((503, "text/html", b"<html>503 Service Unavailable</html>")) as served:
        yield served


@pytest.mark.parametrize("uri", ["models:/no-such-model@champion", "models:/registered-without-versions/latest"])
def test_an_unknown_model_in_a_local_store_is_a_mistake_with_a_hint(registry_at, tmp_path, uri):
    """``.../latest`` of a model with no versions: MLflow's local store says INTERNAL_ERROR (status 500), which is
    no outage."""
    from mlflow.tracking import MlflowClient

    store = registry_at(f"sqlite:///{tmp_path / 'mlflow.db'}")
    MlflowClient().create_registered_model("registered-without-versions")
    with pytest.raises(UserError) as caught:
        resolve_model_folder(uri, cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert type(caught.value) is UserError and caught.value.exit_code == 2 and "\n" not in message
    assert message.startswith(f"could not fetch {uri} from the MLflow model registry at {store} (")
    assert message.endswith("(hint: that model name, version or alias is not registered there, or these credentials "
                            "may not read it; the registered models and their aliases are listed in "
                            f"`mlflow ui --backend-store-uri {store}`, Models page)")


def test_a_registry_where_nothing_listens_is_unavailable_and_its_credentials_are_not_shown(registry_at, tmp_path):
    port = free_port()  # bound, then closed: nothing listens there
    registry_at(f"http://reader:s3cret@127.0.0.1:{port}")
    with pytest.raises(ServiceUnavailable) as caught:
        resolve_model_folder("models:/enc@champion", cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert caught.value.exit_code == 69 and "s3cret" not in message and "\n" not in message
    assert message.startswith(f"could not fetch models:/enc@champion: the MLflow model registry at "
                              f"http://***@127.0.0.1:{port} did not answer (")
    assert message.endswith("(hint: check that the tracking server is up and MLFLOW_TRACKING_URI, then rerun)")


@pytest.mark.parametrize("uri", ["models:/enc@champion", "models:/enc/2"])
@pytest.mark.parametrize("answer", [
    (503, "text/html", b"<html>503 Service Unavailable</html>"),  # a proxy while the server restarts
    (500, "application/json", b'{"error_code": "INTERNAL_ERROR", "message": "database is locked"}'),
])
def test_a_registry_answering_5xx_is_unavailable(registry_at, answering_server, tmp_path, answer, uri):
    url, answers = answering_server
    answers[0] = answer
    registry_at(url)
    with pytest.raises(ServiceUnavailable, match=rf"^could not fetch {uri}: the MLflow model registry at {url} did "
                                                 r"not answer \(.*\) \(hint: check that the tracking server is up"):
        resolve_model_folder(uri, cache_dir=tmp_path / "cache")


def test_a_registry_saying_not_found_over_http_is_a_mistake(registry_at, answering_server, tmp_path):
    url, answers = answering_server
    answers[0] = (404, "application/json",
                  b'{"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "Registered Model with name=enc not found"}')
    registry_at(url)
    with pytest.raises(UserError) as caught:
        resolve_model_folder("models:/enc@champion", cache_dir=tmp_path / "cache")
    assert type(caught.value) is UserError and f"its Models page at {url})" in str(caught.value)
    assert "RESOURCE_DOES_NOT_EXIST: Registered Model with name=enc not found" in str(caught.value)


def test_the_operator_encoder_and_a_combined_part_report_an_outage_as_such(registry_at, answering_server):
    """The other places that ask the registry for a ``models:/`` URI: the embedding cache's key (the alias pinned
    before Ray starts) and a combined encoder's part provenance (which raised MLflow's own exception: exit 1)."""
    from interlingua.operators.embed_encoder import OperatorEmbedEncoder
    from interlingua.workflows.combine import part_provenance

    registry_at(answering_server[0])
    with pytest.raises(ServiceUnavailable, match=r"^could not fetch models:/enc@champion: .* did not answer"):
        OperatorEmbedEncoder("models:/enc@champion").identity
    with pytest.raises(ServiceUnavailable, match=r"^could not fetch models:/enc/2: .* did not answer"):
        part_provenance("models:/enc/2")


def test_promotion_reading_the_candidate_s_mlmodel_from_a_registry_down_is_unavailable(registry_at, answering_server):
    """The download of the version's MLmodel failing for want of an answer said "has no readable MLmodel" (2)."""
    import types

    import interlingua.cluster.promotion as promotion

    registry_at(answering_server[0])
    client = types.SimpleNamespace(get_model_version_download_uri=lambda name, version: "mlflow-artifacts:/1/r/model")
    with pytest.raises(ServiceUnavailable, match=r"^the model registry did not answer for the MLmodel of "
                                                 r"models:/enc/2 \(.*\); nothing was evaluated or moved \(hint: "):
        promotion._check_servable(client, promotion.ModelVersionRef("enc", "2"))


def test_embed_of_a_models_uri_exits_69_when_the_registry_is_down(registry_at, answering_server, capsys):
    """Through the CLI: the tracking server's port answers (its TCP probe passes), its registry calls get 503."""
    from interlingua.workflows import cli

    url, _ = answering_server
    registry_at(url)
    assert cli.main(["embed", "--model", "models:/enc@champion", "hello"]) == 69
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"interlingua embed: error: could not fetch models:/enc@champion: the "
                                               f"MLflow model registry at {url} did not answer (")
