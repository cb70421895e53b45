"""A failure of the MLflow model registry as the one line a user sees: an outage (nothing answered, a timeout, an HTTP
5xx) is a :class:`~interlingua.core.errors.ServiceUnavailable` (exit 69: a script reruns it), anything the registry
answered (an unknown name, version or alias; a refusal) a :class:`~interlingua.core.errors.UserError` (exit 2).
``interlingua promote`` and every load of a ``models:/`` URI classify with :func:`unanswered`."""

from __future__ import annotations

import re

from interlingua.core.errors import ServiceUnavailable, UserError

REGISTRY_HINT = "(hint: check that the tracking server is up and MLFLOW_TRACKING_URI, then rerun)"
#: A cloud artifact store that did not answer (:func:`store_unanswered`): the registry did, so its hint would mislead.
STORE_HINT = "(hint: check the network and the store's endpoint and credentials, then rerun)"
#: A version's store that answered but did not give its files (:func:`download_failures`): a refusal, a missing file.
STORE_REFUSED_HINT = "(hint: check that these credentials may read the store and that the version's files are there)"

#: How MLflow's REST client words a request that got no usable answer (a refused or dropped connection, retries
#: used up on 5xx replies): its stores raise other MlflowExceptions with the same INTERNAL_ERROR code for what is no
#: outage ("No versions of model with name ... found" for ``models:/NAME/latest``).
_REST_FAILURE_PREFIX = "API request to "

#: How it words a 200 reply that is not MLflow's JSON (a web server's default page, a sign-in page, a mistyped URL):
#: the server answered, it is just not an MLflow tracking server, so a rerun cannot help.
_NOT_MLFLOW_REPLY = "API request to endpoint was successful but the response body was not in a valid JSON format"
#: ... and a 404 or 405 reply that is not JSON (MLflow answers its own refusals in JSON, as RestException): a web
#: server that serves a page at ``/`` only, or an MLflow server too old for the endpoint. Another status keeps its
#: meaning (401/403: credentials; 5xx, a proxy's HTML error page included: no answer).
_NOT_MLFLOW_ERROR_REPLY = re.compile(r"API request to endpoint \S+ failed with error code 40[45] != \d+\. Response body: '")

#: MLflow's error codes for "no answer now, ask again", whoever raised them: a SQL store that is locked or lost
#: (sqlite, postgres, mysql: TEMPORARILY_UNAVAILABLE), a server under maintenance, a timeout, a rate limit or quota
#: (REQUEST_LIMIT_EXCEEDED and RESOURCE_EXHAUSTED are HTTP 429 to MLflow, and a 429 reply that is not MLflow's JSON
#: gets RESOURCE_EXHAUSTED; its REST client retries a 429 itself and reports the retries used up as INTERNAL_ERROR).
_TRY_AGAIN_CODES = frozenset({"TEMPORARILY_UNAVAILABLE", "SERVICE_UNDER_MAINTENANCE",
                              "WORKSPACE_TEMPORARILY_UNAVAILABLE", "DEADLINE_EXCEEDED", "REQUEST_LIMIT_EXCEEDED",
                              "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"})

#: A cloud artifact store's client that got no answer while a version's files were listed or downloaded (S3 through
#: botocore, GCS through google.api_core, Azure Blob through azure.core), as ``module.Class``: matched over the
#: exception's classes, so none of these optional packages is imported. Their other failures (no credentials, an SSL
#: certificate, a refusal of access) stay mistakes.
_CLOUD_STORE_UNANSWERED = frozenset({
    "botocore.exceptions.EndpointConnectionError", "botocore.exceptions.ConnectTimeoutError",
    "botocore.exceptions.ReadTimeoutError", "botocore.exceptions.ConnectionClosedError",
    "google.api_core.exceptions.ServiceUnavailable", "google.api_core.exceptions.DeadlineExceeded",
    "azure.core.exceptions.ServiceRequestError", "azure.core.exceptions.ServiceResponseError"})

#: How MLflow's ``ArtifactRepository.download_artifacts`` (the S3, GCS and Azure repositories') reports the files its
#: thread pool failed to download: one ``MlflowException`` (INTERNAL_ERROR) holding each file's error as text only
#: (``##### File PATH #####`` then the error), no ``__cause__``, so the classes above are lost.
_DOWNLOAD_FAILURES_PREFIX = "The following failures occurred while downloading one or more artifacts from "
#: botocore's texts for :data:`_CLOUD_STORE_UNANSWERED`'s classes, as they start a failure's line in that message
#: (google.api_core's and azure.core's texts are not fixed, so only their classes count).
_CLOUD_STORE_UNANSWERED_TEXT = re.compile(
    r"^(?:Could not connect to the endpoint URL|Connect timeout on endpoint URL|Read timeout on endpoint URL"
    r"|Connection was closed before we received a valid response)", re.MULTILINE)
#: How a store says a file is not there, as a failure's line in that message starts: a local or mounted store
#: (MLflow's "No such artifact"), S3 through botocore (NoSuchKey, or a 404 from HeadObject), GCS and an HTTP store
#: (a 404 status first).
_MISSING_FILE_TEXT = re.compile(r"^(?:No such artifact: |An error occurred \((?:404|NoSuchKey)\) |404 |The specified blob does not exist)")


def unanswered(err: BaseException) -> bool:
    """Whether a registry call failed for want of an answer (a refused or dropped connection, a timeout, an HTTP 5xx:
    MLflow reports the first ones and a proxy's 502 after its retries as ``INTERNAL_ERROR``, status 500; a code of
    :data:`_TRY_AGAIN_CODES` from anywhere, a locked SQL store's included; a cloud artifact store's connection failure,
    :data:`_CLOUD_STORE_UNANSWERED`), not because the registry refused it
    (``RESOURCE_DOES_NOT_EXIST``, ``PERMISSION_DENIED``: 4xx), a local store said no or the URI names a web server that
    is not MLflow's (:func:`not_mlflow`)."""
    import requests
    from mlflow.exceptions import MlflowException, RestException

    if store_unanswered(err):
        return True
    if isinstance(err, MlflowException):
        if err.error_code in _TRY_AGAIN_CODES:
            return True
        if not_mlflow(err):
            return False
        if isinstance(err, RestException) and not (err.json or {}).get("error_code"):
            return False  # a JSON refusal that is not MLflow's (a gateway's {"detail": "Not Found"}): 5xx are retried
        over_http = isinstance(err, RestException) or str(err.message).startswith(_REST_FAILURE_PREFIX)
        return over_http and err.get_http_status_code() >= 500
    if isinstance(err, requests.exceptions.HTTPError):  # an artifact download from the tracking server
        return err.response is not None and err.response.status_code >= 500
    return isinstance(err, (ConnectionError, TimeoutError, requests.exceptions.ConnectionError,
                            requests.exceptions.Timeout))


def store_unanswered(err: BaseException) -> bool:
    """Whether ``err`` is a cloud artifact store's failure to answer (:data:`_CLOUD_STORE_UNANSWERED`), raised as is or
    among a download's failures (:func:`download_failures`: one of their texts starts a line)."""
    if download_failures(err):
        return _CLOUD_STORE_UNANSWERED_TEXT.search(str(err.message)) is not None
    return any(f"{cls.__module__}.{cls.__name__}" in _CLOUD_STORE_UNANSWERED for cls in type(err).__mro__)


def download_failures(err: BaseException) -> bool:
    """Whether ``err`` is MLflow's report of the files an artifact repository failed to download
    (:data:`_DOWNLOAD_FAILURES_PREFIX`): the registry answered, the version's store did not give its files."""
    from mlflow.exceptions import MlflowException

    return isinstance(err, MlflowException) and str(err.message).startswith(_DOWNLOAD_FAILURES_PREFIX)


def missing_files(err: BaseException) -> bool:
    """Whether ``err`` is a :func:`download_failures` report whose every failure is a file the store does not hold
    (:data:`_MISSING_FILE_TEXT`), not a store that refused or did not answer."""
    found = _failures(err)[1] if download_failures(err) else []
    return bool(found) and all(_MISSING_FILE_TEXT.match(error) for _, error in found)


def _failures(err: BaseException) -> tuple[str, list[tuple[str, str]]]:
    """``(location, [(PATH, first line of its error), ...])`` of a :func:`download_failures` report."""
    location, _, failures = str(err.message).removeprefix(_DOWNLOAD_FAILURES_PREFIX).partition(":\n")
    return location, re.findall(r"^##### File (.*) #####\n(.*)", failures, re.MULTILINE)


def _failed_file(err: BaseException) -> tuple[str, str]:
    """``(location, "PATH: first line of its error")`` of a :func:`download_failures` report: the store's URI MLflow
    names and its first failure to answer (else its first failure; else the report's first line)."""
    text = str(err.message)
    location, found = _failures(err)
    found.sort(key=lambda failure: _CLOUD_STORE_UNANSWERED_TEXT.match(failure[1]) is None)  # stable: first stays first
    if not found:
        return location, (text.splitlines() or [""])[0][:200]
    return location, f"{found[0][0]}: {found[0][1][:200]}"


def not_mlflow(err: BaseException) -> bool:
    """Whether the tracking URI answered 200, 404 or 405 with a body that is not MLflow's JSON: it names some other
    web server (or an MLflow server without the endpoint)."""
    message = str(getattr(err, "message", ""))
    return message.startswith(_NOT_MLFLOW_REPLY) or _NOT_MLFLOW_ERROR_REPLY.match(message) is not None


#: The URI schemes of MLflow stores a user browses with ``mlflow ui --backend-store-uri``.
_LOCAL_STORES = ("file", "sqlite", "postgresql", "mysql", "mssql")


def models_page(registry: str) -> str:
    """Where a user sees ``registry``'s registered models: ``mlflow ui`` over a local store (a path, ``file:``,
    ``sqlite:``, ``postgresql:``, ``mysql:``, ``mssql:``), the server's own page over http(s), else a generic line."""
    from urllib.parse import urlparse

    scheme = urlparse(registry).scheme.partition("+")[0].lower()
    if scheme in ("http", "https"):
        return f"its Models page at {registry}"
    if scheme in _LOCAL_STORES or (not scheme and registry not in ("databricks", "databricks-uc")):
        return f"`mlflow ui --backend-store-uri {registry}`, Models page"
    return "the registry's Models page"


def supported_schemes(err: BaseException) -> list[str] | None:
    """The URI schemes MLflow's stores take, when ``err`` is (or was raised while handling) MLflow's refusal of a
    tracking or registry URI whose scheme none takes (its ``Unsupported…StoreURIException``, or ``MlflowClient``'s
    FEATURE_DISABLED line raised over it); None for any other failure."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        schemes = getattr(err, "supported_uri_schemes", None)
        if isinstance(schemes, (list, tuple)):
            return [str(scheme) for scheme in schemes]
        err = err.__cause__ or err.__context__
    return None


def _unsupported_store(schemes: list[str]) -> str:
    """:func:`~interlingua.core.runtime.unsupported_store_line` of the setting (registry URI, else tracking URI) whose
    scheme is not among ``schemes``."""
    import mlflow

    from interlingua.core.runtime import store_scheme, unsupported_store_line

    registry, tracking = mlflow.get_registry_uri(), mlflow.get_tracking_uri()
    settings = [("MLFLOW_TRACKING_URI", tracking)]
    if registry != tracking:
        settings.insert(0, ("MLFLOW_REGISTRY_URI", registry))
    setting, uri = next((entry for entry in settings if store_scheme(entry[1]) not in schemes), settings[0])
    return unsupported_store_line(setting, uri, schemes)


def first_line(err: BaseException) -> str:
    """``CODE: first line of the message`` (200 characters at most) of a registry failure."""
    code = getattr(err, "error_code", "") or type(err).__name__
    message = str(getattr(err, "message", err)).strip()
    message = message.removeprefix(f"{code}: ")  # over REST, MLflow's message starts with the code already
    return f"{code}: {(message.splitlines() or [''])[0][:200]}"


def registry_error(uri: str, err: BaseException, *, pinned: str = "", store: str = "") -> UserError:
    """The one line a user sees when MLflow cannot give ``uri``: the registry (credentials masked) and what to check;
    a :class:`ServiceUnavailable` when it did not answer (:func:`unanswered`). A cloud artifact store that did not
    answer (:func:`store_unanswered`) is named instead of the registry: the version ``pinned`` (``models:/NAME/VERSION``,
    else ``uri``) and its files' location ``store`` where the caller knows them (else the one MLflow names); so is one
    that answered but did not give the files (:func:`download_failures`), a mistake."""
    import mlflow

    from interlingua.core.redact import redact_text

    if store_unanswered(err) or download_failures(err):
        location, failure = _failed_file(err) if download_failures(err) else ("", first_line(err))
        where = f" ({store or location})" if store or location else ""
        lead = f"could not fetch {uri}: the artifact store of {pinned or uri}{where}"
        if unanswered(err):
            return ServiceUnavailable(redact_text(f"{lead} did not answer ({failure}) {STORE_HINT}"))
        return UserError(redact_text(f"{lead} did not give its files ({failure}) {STORE_REFUSED_HINT}"))
    registry = mlflow.get_registry_uri()
    setting = "MLFLOW_TRACKING_URI" if registry == mlflow.get_tracking_uri() else "MLFLOW_REGISTRY_URI"
    schemes = supported_schemes(err)
    if schemes is not None:
        return UserError(redact_text(f"could not fetch {uri}: {_unsupported_store(schemes)}"))
    from_a_run = uri.startswith("runs:/")  # a run's artifacts: the tracking store's, not the registry's
    if from_a_run:
        registry, setting = mlflow.get_tracking_uri(), "MLFLOW_TRACKING_URI"
    kind = "tracking store" if from_a_run else "model registry"
    if unanswered(err):
        return ServiceUnavailable(redact_text(f"could not fetch {uri}: the MLflow {kind} at {registry} did not "
                                              f"answer ({first_line(err)}) {REGISTRY_HINT}"))
    if not_mlflow(err):
        return UserError(redact_text(f"could not fetch {uri}: {registry} is not an MLflow {kind}, or one "
                                     f"without this API (it answered with a web page, not MLflow's JSON) (hint: set "
                                     f"{setting} to the MLflow server's address)"))
    missing = ("that run, or that path among its artifacts, is not there" if from_a_run else
               "that model name, version or alias is not registered there")
    listed = ("a run's artifacts are listed on its page in the MLflow UI" if from_a_run else
              f"the registered models and their aliases are listed in {models_page(registry)}")
    return UserError(redact_text(f"could not fetch {uri} from the MLflow {kind} at {registry} ({first_line(err)}) "
                                 f"(hint: {missing}, or these credentials may not read it; {listed})"))
