"""A ``models:/`` URI the registry cannot give: an outage (nothing listens, an HTTP 5xx) exits 69 so a script reruns it,
an unknown name or alias exits 2 with a hint. Before, every failure was a plain UserError (2). No network: a SQLite
store, a closed port and a local HTTP server answering 5xx; MLflow's retries are off."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlingua.core.errors import ServiceUnavailable, UserError
from interlingua.models.load import resolve_model_folder
from mlflow_services import answering_server as answering_server_at
from ports import closed_port


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


@pytest.mark.parametrize("path", ["nothing", None])
def test_a_run_artifact_that_is_not_there_names_the_tracking_store_not_the_registry(registry_at, tmp_path, path):
    """``runs:/ID/nothing`` said "from the MLflow model registry" and hinted at registered model names: runs:/ reads
    a run's artifacts, from the tracking store."""
    import mlflow

    store = registry_at(f"sqlite:///{tmp_path / 'mlflow.db'}")
    # an experiment of this store: an earlier test's active experiment id may name none here
    with mlflow.start_run(experiment_id=mlflow.create_experiment("runs-uri")) as run:
        mlflow.log_text("x", "a.txt")
    uri = f"runs:/{run.info.run_id}/nothing" if path else "runs:/0123456789abcdef/model"
    with pytest.raises(UserError) as caught:
        resolve_model_folder(uri, cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert message.startswith(f"could not fetch {uri} from the MLflow tracking store at {store} (")
    assert message.endswith("(hint: that run, or that path among its artifacts, is not there, or these credentials "
                            "may not read it; a run's artifacts are listed on its page in the MLflow UI)")
    assert "registry" not in message and "registered" not in message


def test_a_registry_where_nothing_listens_is_unavailable_and_its_credentials_are_not_shown(registry_at, tmp_path):
    port = closed_port()
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


@pytest.mark.parametrize("outage", [True, False])
def test_promotion_reading_the_candidate_s_mlmodel_names_the_artifact_store_that_failed(tmp_path, monkeypatch, outage):
    """The version's S3 store not answering, or refusing the MLmodel, said "the model registry did not answer" (69)
    or "has no readable MLmodel" (2): the registry had answered; the store is named, its credentials masked."""
    import types

    import mlflow
    from mlflow.exceptions import MlflowException

    import interlingua.cluster.promotion as promotion

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    if outage:
        failure = _sdk_error("botocore.exceptions.EndpointConnectionError")(
            'Could not connect to the endpoint URL: "https://models.s3.amazonaws.com/enc/MLmodel"')
    else:
        failure = MlflowException("The following failures occurred while downloading one or more artifacts from "
                                  "s3://reader:s3cret@models/enc:\n##### File MLmodel #####\nAn error occurred "
                                  "(AccessDenied) when calling the GetObject operation: Access Denied")

    def download(**kwargs):
        raise failure

    monkeypatch.setattr(mlflow.artifacts, "download_artifacts", download)
    client = types.SimpleNamespace(get_model_version_download_uri=lambda name, version: "s3://reader:s3cret@models/enc")
    with pytest.raises(UserError) as caught:
        promotion._check_servable(client, promotion.ModelVersionRef("enc", "2"))
    message = str(caught.value)
    assert isinstance(caught.value, ServiceUnavailable) == outage
    assert message.startswith("could not fetch the MLmodel of models:/enc/2: the artifact store of models:/enc/2 "
                              "(s3://***@models/enc) ")
    assert ("did not answer (EndpointConnectionError: " if outage else "did not give its files (MLmodel: An error "
            "occurred (AccessDenied)") in message
    assert "registry" not in message and "s3cret" not in message and "\n" not in message


def test_promotion_of_a_local_version_folder_without_mlmodel_says_it_has_none(tmp_path, monkeypatch):
    """MLflow 3.17 reports a local store's missing MLmodel among a download's failures ("No such artifact"): a plain
    folder registered by hand was told to check the store's credentials, not that promotion serves MLflow models."""
    import types

    import interlingua.cluster.promotion as promotion

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    folder = tmp_path / "versions" / "enc"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    client = types.SimpleNamespace(get_model_version_download_uri=lambda name, version: f"file://{folder}")
    with pytest.raises(UserError) as caught:
        promotion._check_servable(client, promotion.ModelVersionRef("enc", "2"))
    assert not isinstance(caught.value, ServiceUnavailable)
    assert str(caught.value) == ("models:/enc/2 has no readable MLmodel (MlflowException); promotion serves registered "
                                 "sentence_transformers models only")


@pytest.mark.parametrize(("error", "missing"), [
    ("No such artifact: 'MLmodel'", True),
    ("An error occurred (NoSuchKey) when calling the GetObject operation: The specified key does not exist.", True),
    ("An error occurred (404) when calling the HeadObject operation: Not Found", True),
    ("404 GET https://storage.googleapis.com/download/storage/v1/b/models/o/enc%2FMLmodel: No such object", True),
    ("The specified blob does not exist.\nRequestId:0f3c\nTime:2026-11-28T04:30:00Z\nErrorCode:BlobNotFound", True),
    ("An error occurred (AccessDenied) when calling the GetObject operation: Access Denied", False),
    ('Could not connect to the endpoint URL: "https://models.s3.amazonaws.com/enc/MLmodel"', False),
])
def test_a_download_s_failures_are_missing_files_only_when_the_store_lacks_them(error, missing):
    from mlflow.exceptions import MlflowException

    from interlingua.models.registry_errors import missing_files

    report = ("The following failures occurred while downloading one or more artifacts from s3://models/enc:\n"
              f"##### File MLmodel #####\n{error}")
    assert missing_files(MlflowException(report)) == missing
    both = report + "\n##### File model.safetensors #####\nAn error occurred (AccessDenied) when calling GetObject"
    assert not missing_files(MlflowException(both))
    assert not missing_files(MlflowException(error))


def test_embed_of_a_models_uri_exits_69_when_the_registry_is_down(registry_at, answering_server, capsys):
    """Through the CLI: the tracking server's port answers (its TCP probe passes), its registry calls get 503."""
    from interlingua.workflows import cli

    url, _ = answering_server
    registry_at(url)
    assert cli.main(["embed", "--model", "models:/enc@champion", "hello"]) == 69
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"interlingua embed: error: could not fetch models:/enc@champion: the "
                                               f"MLflow model registry at {url} did not answer (")


@pytest.fixture
def short_sqlite_wait():
    """MLflow's SQL store waits up to 20 s on a locked sqlite file (its ``PRAGMA busy_timeout``); 50 ms here."""
    import re

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def shorten(conn, cursor, statement, parameters, context, executemany):
        return re.sub(r"(?i)PRAGMA busy_timeout = \d+", "PRAGMA busy_timeout = 50", statement), parameters

    event.listen(Engine, "before_cursor_execute", shorten, retval=True)
    yield
    event.remove(Engine, "before_cursor_execute", shorten)


def test_a_locked_sqlite_store_is_unavailable_for_load_and_promote(registry_at, short_sqlite_wait, tmp_path):
    """A SQL store that is locked (or lost) says TEMPORARILY_UNAVAILABLE without any REST: promote said
    "models:/enc/1 does not exist" (2) of an existing version, load "not registered" (2)."""
    import sqlite3

    from mlflow.tracking import MlflowClient

    import interlingua.cluster.promotion as promotion

    database = tmp_path / "mlflow.db"
    registry_at(f"sqlite:///{database}")
    client = MlflowClient()
    client.create_registered_model("enc")
    client.create_model_version("enc", str(tmp_path))
    client.set_registered_model_alias("enc", "champion", "1")
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ServiceUnavailable, match=r"^the model registry did not answer whether models:/enc/1 "
                                                     r"exists \(TEMPORARILY_UNAVAILABLE: .*\); nothing was evaluated"):
            promotion._check_version_exists(client, promotion.ModelVersionRef("enc", "1"))
        with pytest.raises(ServiceUnavailable, match=r"^could not fetch models:/enc@champion: the MLflow model registry "
                                                     r"at sqlite:///.* did not answer \(TEMPORARILY_UNAVAILABLE: "):
            resolve_model_folder("models:/enc@champion", cache_dir=tmp_path / "cache")
    finally:
        holder.close()


@pytest.mark.parametrize("code", ["TEMPORARILY_UNAVAILABLE", "SERVICE_UNDER_MAINTENANCE", "DEADLINE_EXCEEDED",
                                  "REQUEST_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"])
def test_mlflow_s_try_again_codes_are_no_answer_whoever_raised_them(code):
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import INTERNAL_ERROR, ErrorCode

    from interlingua.models.registry_errors import unanswered

    err = MlflowException("(sqlite3.OperationalError) database is locked", error_code=ErrorCode.Value(code))
    assert err.error_code == code and unanswered(err)
    # a local store's answer with the 5xx code of ``models:/NAME/latest`` with no versions stays a mistake
    assert not unanswered(MlflowException("No versions of model with name 'enc' found", error_code=INTERNAL_ERROR))


@pytest.mark.parametrize("rate_limited", [
    {"json": {"error_code": "RESOURCE_EXHAUSTED", "message": "Too many requests, retry later"}},  # MLflow's 429 JSON
    {"json": {"error_code": "429", "message": "Too Many Requests"}},  # a gateway's JSON with the status as its code
    {"message": "API request to endpoint /api/2.0/mlflow/registered-models/alias failed with error code 429 != 200. "
                "Response body: 'Too Many Requests'", "error_code": "RESOURCE_EXHAUSTED"},  # a 429 page, as MLflow maps it
])
def test_a_rate_limited_registry_is_an_outage_to_rerun_later(registry_at, tmp_path, rate_limited):
    """RESOURCE_EXHAUSTED is HTTP 429 to MLflow (below 500), so a rate limit was "not registered there" (exit 2)."""
    from mlflow.exceptions import MlflowException, RestException
    from mlflow.protos.databricks_pb2 import ErrorCode

    from interlingua.models.registry_errors import registry_error

    registry_at(f"sqlite:///{tmp_path / 'mlflow.db'}")
    if "json" in rate_limited:
        err = RestException(rate_limited["json"])
    else:
        err = MlflowException(rate_limited["message"], error_code=ErrorCode.Value(rate_limited["error_code"]))
    assert err.get_http_status_code() == 429
    error = registry_error("models:/enc@champion", err)
    assert isinstance(error, ServiceUnavailable) and error.exit_code == 69
    assert "did not answer (RESOURCE_EXHAUSTED: " in str(error) and str(error).endswith("then rerun)")


@pytest.mark.parametrize("status", [200, 404])
def test_a_tracking_uri_naming_a_web_page_that_is_not_mlflow_is_a_mistake(registry_at, capsys, status):
    """A 200 reply in HTML (a web server's default page, a sign-in page) counted as an outage: a script retried a
    bad setting forever (69); a 404 page (a web server that serves ``/`` only) read as "not registered there"."""
    from interlingua.workflows import cli

    with answering_server_at((status, "text/html", b"<html>\n<h1>Welcome to nginx!</h1>\n</html>")) as (url, _):
        registry_at(url)
        assert cli.main(["embed", "--model", "models:/enc@champion", "hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"interlingua embed: error: could not fetch models:/enc@champion: {url} is not an MLflow model "
                   f"registry, or one without this API (it answered with a web page, not MLflow's JSON) (hint: set "
                   f"MLFLOW_TRACKING_URI to the MLflow server's address)"]


def test_the_not_mlflow_hint_names_the_registry_setting_when_the_registry_is_set_apart(registry_at, tmp_path):
    import mlflow

    with answering_server_at((200, "text/html", b"<html></html>")) as (url, _):
        registry_at(f"sqlite:///{tmp_path / 'tracking.db'}")
        mlflow.set_registry_uri(url)
        with pytest.raises(UserError, match=r"\(hint: set MLFLOW_REGISTRY_URI to the MLflow server's address\)$"):
            resolve_model_folder("models:/enc@champion")


def test_a_json_404_that_is_not_mlflow_s_is_no_outage(registry_at):
    """A gateway's JSON 404 without MLflow's error_code became a RestException with INTERNAL_ERROR (status 500), so
    a wrong URI exited 69 and a script retried it forever."""
    with answering_server_at((404, "application/json", b'{"detail": "Not Found"}')) as (url, _):
        registry_at(url)
        with pytest.raises(UserError) as caught:
            resolve_model_folder("models:/enc@champion")
    assert not isinstance(caught.value, ServiceUnavailable)
    assert "{'detail': 'Not Found'}" in str(caught.value)


@pytest.mark.parametrize("status", [200, 404])
def test_promote_s_alias_lookup_against_a_page_that_is_not_mlflow_says_so(registry_at, status):
    """``_alias_holder`` read an HTML 404 (a server without the alias endpoint) as a refusal of the credentials' rights."""
    from mlflow.tracking import MlflowClient

    from interlingua.cluster import promotion

    with answering_server_at((status, "text/html", b"<html>old server</html>")) as (url, _):
        registry_at(url)
        with pytest.raises(UserError) as caught:
            promotion._alias_holder(MlflowClient(), "enc", "champion")
    assert not isinstance(caught.value, ServiceUnavailable)
    assert str(caught.value).startswith(f"could not fetch models:/enc@champion: {url} is not an MLflow model registry")


@pytest.mark.parametrize("status", [401, 502])
def test_an_html_refusal_or_proxy_error_keeps_its_meaning(registry_at, status):
    """Only a 404 or 405 page says "not MLflow": a sign-in proxy's 401 is about credentials, a proxy's 502 page an
    outage."""
    with answering_server_at((status, "text/html", b"<html>\n<h1>nope</h1>\n</html>")) as (url, _):
        registry_at(url)
        with pytest.raises(UserError) as caught:
            resolve_model_folder("models:/enc@champion")
    assert "is not an MLflow model registry" not in str(caught.value)
    assert isinstance(caught.value, ServiceUnavailable) == (status == 502)


@pytest.mark.parametrize(("registry", "where"), [
    ("sqlite:///tmp/mlflow.db", "`mlflow ui --backend-store-uri sqlite:///tmp/mlflow.db`, Models page"),
    ("/srv/mlruns", "`mlflow ui --backend-store-uri /srv/mlruns`, Models page"),
    ("postgresql+psycopg2://reader:s3cret@db/mlflow", "`mlflow ui --backend-store-uri postgresql+psycopg2://"),
    ("https://mlflow.example.org", "its Models page at https://mlflow.example.org"),
    ("databricks", "the registry's Models page"),
    ("databricks-uc", "the registry's Models page"),
    ("databricks://profile", "the registry's Models page"),
])
def test_the_hint_for_an_unknown_model_names_where_the_registry_lists_its_models(registry_at, registry, where):
    """``mlflow ui`` browses a local store only: it was the hint for Databricks too."""
    import mlflow
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST

    from interlingua.models.registry_errors import registry_error

    mlflow.set_registry_uri(registry)
    not_found = MlflowException("Registered Model with name=enc not found", error_code=RESOURCE_DOES_NOT_EXIST)
    error = registry_error("models:/enc@champion", not_found)
    message = str(error)
    assert type(error) is UserError and "s3cret" not in message
    assert f"the registered models and their aliases are listed in {where}" in message
    assert ("mlflow ui" in message) == where.startswith("`mlflow ui")


def test_a_recipe_stage_s_alias_output_pinned_while_the_registry_is_down_is_unavailable(registry_at, answering_server):
    """A stage whose output is ``models:/NAME@ALIAS`` is pinned to its version: that raised MLflow's own exception
    (exit 1, a traceback) when the registry did not answer."""
    from interlingua.workflows.recipe import _pinned

    registry_at(answering_server[0])
    assert _pinned({"model": "models:/enc/2", "corpus": "c@v1"}) == {"model": "models:/enc/2", "corpus": "c@v1"}
    with pytest.raises(ServiceUnavailable, match=r"^could not fetch models:/enc@champion: .* did not answer"):
        _pinned({"model": "models:/enc@champion"})


@pytest.mark.parametrize("status", [200, 404])
def test_promote_against_a_web_page_that_is_not_mlflow_says_so_not_that_the_version_is_missing(registry_at, status):
    """``_check_version_exists`` read any refusal as "models:/enc/1 does not exist (no registered model 'enc')"."""
    from mlflow.tracking import MlflowClient

    from interlingua.cluster import promotion

    with answering_server_at((status, "text/html", b"<html>\n<h1>Sign in</h1>\n</html>")) as (url, _):
        registry_at(url)
        with pytest.raises(UserError) as caught:
            promotion._check_version_exists(MlflowClient(), promotion.ModelVersionRef("enc", "1"))
    assert not isinstance(caught.value, ServiceUnavailable)
    assert str(caught.value).startswith(f"could not fetch models:/enc/1: {url} is not an MLflow model registry")


def _sdk_error(qualified: str, base: type = Exception) -> type:
    """A stand-in for an optional cloud SDK's exception class (``module.Class``): none of them is needed here."""
    module, _, name = qualified.rpartition(".")
    return type(name, (base,), {"__module__": module})


_CLOUD_OUTAGES = ["botocore.exceptions.EndpointConnectionError", "botocore.exceptions.ConnectTimeoutError",
                  "botocore.exceptions.ReadTimeoutError", "botocore.exceptions.ConnectionClosedError",
                  "google.api_core.exceptions.ServiceUnavailable", "google.api_core.exceptions.DeadlineExceeded",
                  "azure.core.exceptions.ServiceRequestError", "azure.core.exceptions.ServiceResponseError"]


@pytest.mark.parametrize("qualified", _CLOUD_OUTAGES)
def test_a_cloud_artifact_store_that_does_not_answer_is_an_outage(qualified):
    """botocore's, google.api_core's and azure.core's connection failures derive from none of Python's or requests'
    (they were a mistake, exit 2); a subclass (azure's ServiceRequestTimeoutError) counts as its base."""
    from interlingua.models.registry_errors import unanswered

    error = _sdk_error(qualified)
    assert unanswered(error("Could not connect to the endpoint URL"))
    assert unanswered(_sdk_error("some.sdk.exceptions.ItsTimeoutError", error)("timed out"))


@pytest.mark.parametrize("qualified", ["botocore.exceptions.NoCredentialsError", "botocore.exceptions.SSLError",
                                       "botocore.exceptions.ClientError", "google.api_core.exceptions.Forbidden",
                                       "azure.core.exceptions.ClientAuthenticationError",
                                       "some.other.sdk.ServiceUnavailable", "botocore.ReadTimeoutError"])
def test_a_cloud_store_s_other_failures_stay_mistakes(qualified):
    from interlingua.models.registry_errors import unanswered

    assert not unanswered(_sdk_error(qualified)("refused"))


def test_loading_a_version_whose_cloud_store_does_not_answer_exits_69(registry_at, tmp_path, monkeypatch):
    """Through the load of a ``models:/`` alias whose artifacts live in S3: the download's EndpointConnectionError
    names the version's store (its credentials masked), not the registry, which answered (its hint pointed at the
    tracking server)."""
    import mlflow
    from mlflow.tracking import MlflowClient

    registry_at(f"sqlite:///{tmp_path / 'mlflow.db'}")
    MlflowClient().create_registered_model("enc")
    MlflowClient().create_model_version("enc", "s3://reader:s3cret@models/enc")
    MlflowClient().set_registered_model_alias("enc", "champion", "1")
    unreachable = _sdk_error("botocore.exceptions.EndpointConnectionError")

    def download(**kwargs):
        raise unreachable('Could not connect to the endpoint URL: "https://models.s3.amazonaws.com/enc"')

    monkeypatch.setattr(mlflow.artifacts, "download_artifacts", download)
    with pytest.raises(ServiceUnavailable) as caught:
        resolve_model_folder("models:/enc@champion", cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert caught.value.exit_code == 69 and "\n" not in message and "s3cret" not in message
    assert message == ("could not fetch models:/enc@champion: the artifact store of models:/enc/1 (s3://***@models/enc) "
                       "did not answer (EndpointConnectionError: Could not connect to the endpoint URL: "
                       '"https://models.s3.amazonaws.com/enc") (hint: check the network and the store\'s endpoint and '
                       "credentials, then rerun)")
    assert "registry" not in message and "MLFLOW_TRACKING_URI" not in message


@pytest.mark.parametrize(("failure", "outage"), [
    (("botocore.exceptions.ReadTimeoutError", 'Read timeout on endpoint URL: "https://models.s3.amazonaws.com/enc/'
                                              'model.safetensors"'), True),
    (("botocore.exceptions.ClientError", "An error occurred (AccessDenied) when calling the GetObject operation: "
                                         "Access Denied"), False),
])
def test_a_cloud_store_s_failure_wrapped_by_mlflow_s_download_names_the_store(registry_at, tmp_path, monkeypatch,
                                                                               failure, outage):
    """``ArtifactRepository.download_artifacts`` (S3's, GCS's, Azure's) gathers each file's error from its thread pool
    into one MlflowException (INTERNAL_ERROR) holding their texts only: a read timeout mid-download was "not
    registered there" (2) with the registry's hint. Here the ``s3`` scheme's repository is one whose file download
    fails as botocore's would."""
    from mlflow.entities import FileInfo
    from mlflow.store.artifact.artifact_repo import ArtifactRepository
    from mlflow.store.artifact.artifact_repository_registry import _artifact_repository_registry
    from mlflow.tracking import MlflowClient

    raised = _sdk_error(failure[0])

    class FailingS3(ArtifactRepository):
        def list_artifacts(self, path=None):
            return [FileInfo("config.json", False, 2), FileInfo("model.safetensors", False, 10)]

        def _is_directory(self, artifact_path):
            return False

        def _download_file(self, remote_file_path, local_path):
            if remote_file_path != "model.safetensors":
                Path(local_path).write_text("{}")
                return
            raise raised(failure[1])

        def log_artifact(self, local_file, artifact_path=None):
            raise NotImplementedError

        def log_artifacts(self, local_dir, artifact_path=None):
            raise NotImplementedError

    monkeypatch.setitem(_artifact_repository_registry._registry, "s3", FailingS3)
    registry_at(f"sqlite:///{tmp_path / 'mlflow.db'}")
    MlflowClient().create_registered_model("enc")
    MlflowClient().create_model_version("enc", "s3://reader:s3cret@models/enc")
    MlflowClient().set_registered_model_alias("enc", "champion", "1")
    with pytest.raises(UserError) as caught:
        resolve_model_folder("models:/enc@champion", cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert isinstance(caught.value, ServiceUnavailable) == outage and caught.value.exit_code == (69 if outage else 2)
    assert "\n" not in message and "s3cret" not in message and "registry" not in message
    start = "could not fetch models:/enc@champion: the artifact store of models:/enc/1 (s3://***@models/enc) "
    if outage:
        assert message == (start + f"did not answer (model.safetensors: {failure[1]}) (hint: check the network and "
                                   "the store's endpoint and credentials, then rerun)")
    else:
        assert message == (start + f"did not give its files (model.safetensors: {failure[1]}) (hint: check that these "
                                   "credentials may read the store and that the version's files are there)")


def _supported_schemes_named(message: str) -> set[str]:
    """The schemes a message lists between ``(supported: `` and ``) (hint``."""
    listed = message.partition("(supported: ")[2].partition(") (hint: ")[0]
    return set(listed.split(", "))


def _mlflow_tracking_schemes() -> set[str]:
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry

    return {"'' (a local path)" if not scheme else scheme for scheme in _tracking_store_registry._registry}


def test_a_tracking_uri_whose_scheme_mlflow_does_not_take_is_named_with_every_scheme_it_takes(registry_at, capsys):
    """``htp:/bad`` read as "that model name, version or alias is not registered there", and MLflow's list of schemes
    was cut at 200 characters (``'https)``). The tracking check refuses it before the registry is asked, in the line
    every workflow gives (``core.runtime.unsupported_store_line``)."""
    from interlingua.workflows import cli

    registry_at("htp:/bad")
    assert cli.main(["embed", "--model", "models:/x@y", "hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not registered" not in err[0]
    assert err[0].startswith("interlingua embed: error: the URI scheme 'htp' of "
                             "MLFLOW_TRACKING_URI=htp:/bad is not one MLflow supports (supported: ")
    assert err[0].endswith(") (hint: set MLFLOW_TRACKING_URI to such a URI, e.g. sqlite:///mlflow.db or "
                           "http://HOST:5000)")
    assert _supported_schemes_named(err[0]) == _mlflow_tracking_schemes()


def test_promote_names_a_tracking_uri_whose_scheme_mlflow_does_not_take_in_the_same_line(registry_at, capsys,
                                                                                         tmp_path):
    """``promote`` built its ``MlflowClient`` outside its error handling: ``htp:/bad`` was a traceback and exit 1."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from interlingua.evaluation.pack.build import MANIFEST, PACK_VERSION
    from interlingua.workflows import cli

    registry_at("htp:/bad")
    (tmp_path / "bench-pack").mkdir()
    pq.write_table(pa.table({"source": ["a"], "target": ["b"]}), tmp_path / "bench-pack" / "t.parquet")
    task = {"name": "t", "kind": "retrieval", "language": "en-de", "file": "t.parquet"}  # a table promote's check takes
    (tmp_path / "bench-pack" / MANIFEST).write_text(json.dumps({"version": PACK_VERSION, "tasks": [task]}))
    assert cli.main(["promote", "models:/enc/2", "--alias", "champion", "--tasks", "t"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "interlingua promote: error: the URI scheme 'htp' of MLFLOW_TRACKING_URI=htp:/bad "
        "is not one MLflow supports (supported: ")
    assert _supported_schemes_named(err[0]) == _mlflow_tracking_schemes()


def test_a_registry_uri_whose_scheme_mlflow_does_not_take_names_the_registry_setting(registry_at, tmp_path):
    """A tracking store MLflow takes and a registry URI it does not: ``MlflowClient`` raises its own FEATURE_DISABLED
    line over the refusal, which still names the registry's setting and every scheme."""
    import mlflow

    registry_at(f"sqlite:///{tmp_path / 'tracking.db'}")
    mlflow.set_registry_uri("s3x://bucket/registry")
    with pytest.raises(UserError) as caught:
        resolve_model_folder("models:/enc@champion", cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert type(caught.value) is UserError and "\n" not in message
    assert message.startswith("could not fetch models:/enc@champion: the URI scheme 's3x' of "
                              "MLFLOW_REGISTRY_URI=s3x://bucket/registry is not one MLflow supports (supported: ")
    assert "sqlite" in _supported_schemes_named(message) and "s3x" not in _supported_schemes_named(message)


@pytest.mark.parametrize("spec, uri", [("models:/nomodel", "models:/nomodel"), ("models:/enc@", "models:/enc@"),
                                       ("models:/enc/", "models:/enc/"), ("models:/@champion", "models:/@champion"),
                                       ("concat(models:/enc@champion|models:/nomodel)", "models:/nomodel")])
def test_a_models_uri_without_an_alias_or_version_is_refused_before_the_registry_is_asked(registry_at, capsys, spec,
                                                                                          uri):
    """``models:/nomodel`` was sent to MLflow, which reads it as a logged model's id ("Logged model with ID 'nomodel'
    not found"). Nothing listens at the tracking URI here: probing the server, or asking the registry, would exit 69."""
    from interlingua.workflows import cli

    registry_at(f"http://127.0.0.1:{closed_port()}")
    assert cli.main(["embed", "--model", spec, "hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"interlingua embed: error: {uri!r} is not a registered model URI: it needs models:/NAME@ALIAS or "
        "models:/NAME/VERSION (hint: e.g. models:/")
    with pytest.raises(UserError, match=r"is not a registered model URI"):  # any load of one: the registry not asked
        resolve_model_folder(uri)


@pytest.mark.parametrize("models", ["models:/nomodel", "use,models:/enc@"])
def test_eval_refuses_a_models_uri_without_an_alias_or_version_before_it_probes_the_server(registry_at, capsys,
                                                                                        models):
    """``interlingua eval --model models:/nomodel`` probed the tracking server first: with nothing listening there,
    the user saw "the MLflow tracking server ... does not answer" (exit 69) instead of the spec's own line."""
    from interlingua.workflows import cli

    registry_at("http://127.0.0.1:9")  # the discard port: nothing answers
    assert cli.main(["eval", "--model", models, "--tasks", "all"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    uri = models.rpartition(",")[2]
    assert len(err) == 1 and err[0].startswith(f"interlingua eval: error: {uri!r} is not a registered model URI: "
                                               "it needs models:/NAME@ALIAS or models:/NAME/VERSION (hint: e.g. ")


def test_a_logged_models_id_uri_is_not_taken_for_a_registered_model_without_a_version():
    """MLflow 3 names a logged model ``models:/m-<32 hex digits>``: such a URI is read as before, not refused."""
    from interlingua.models.load import registered_uri_problem

    assert registered_uri_problem("models:/m-" + "0123456789abcdef" * 2) == ""
    assert registered_uri_problem("models:/m-0123") != ""  # not an id MLflow gives
