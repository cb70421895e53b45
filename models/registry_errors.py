"""A failure of the MLflow model registry as the one line a user sees: an outage (nothing answered, a timeout, an HTTP
5xx) is a :class:`~interlingua.core.errors.ServiceUnavailable` (exit 69: a script reruns it), anything the registry
answered (an unknown name, version or alias; a refusal) a :class:`~interlingua.core.errors.UserError` (exit 2).
``interlingua promote`` and every load of a ``models:/`` URI classify with :func:`unanswered`."""

from __future__ import annotations

from interlingua.core.errors import ServiceUnavailable, UserError

REGISTRY_HINT = "(hint: check that the tracking server is up and MLFLOW_TRACKING_URI, then rerun)"

#: How MLflow's REST client words a request that got no usable answer (a refused or dropped connection, retries
#: used up on 5xx replies, a reply that is not MLflow's JSON): its stores raise other MlflowExceptions with the same
#: INTERNAL_ERROR code for what is no outage ("No versions of model with name ... found" for ``models:/NAME/latest``).
_REST_FAILURE_PREFIX = "API request to "


def unanswered(err: BaseException) -> bool:
    """Whether a registry call failed for want of an answer (a refused or dropped connection, a timeout, an HTTP 5xx:
    MLflow reports the first ones and a proxy's 502 after its retries as ``INTERNAL_ERROR``, status 500), not because
    the registry refused it (``RESOURCE_DOES_NOT_EXIST``, ``PERMISSION_DENIED``: 4xx) or a local store said no."""
    import requests
    from mlflow.exceptions import MlflowException, RestException

    if isinstance(err, MlflowException):
        over_http = isinstance(err, RestException) or str(err.message).startswith(_REST_FAILURE_PREFIX)
        return over_http and err.get_http_status_code() >= 500
    if isinstance(err, requests.exceptions.HTTPError):  # an artifact download from the tracking server
        return err.response is not None and err.response.status_code >= 500
    return isinstance(err, (ConnectionError, TimeoutError, requests.exceptions.ConnectionError,
                            requests.exceptions.Timeout))


def first_line(err: BaseException) -> str:
    """``CODE: first line of the message`` (200 characters at most) of a registry failure."""
    code = getattr(err, "error_code", "") or type(err).__name__
    message = str(getattr(err, "message", err)).strip()
    message = message.removeprefix(f"{code}: ")  # over REST, MLflow's message starts with the code already
    return f"{code}: {(message.splitlines() or [''])[0][:200]}"


def registry_error(uri: str, err: BaseException) -> UserError:
    """The one line a user sees when MLflow cannot give ``uri``: the registry (credentials masked) and what to check;
    a :class:`ServiceUnavailable` when it did not answer (:func:`unanswered`)."""
    import mlflow

    from interlingua.core.redact import redact_text

    registry = mlflow.get_registry_uri()
    if unanswered(err):
        return ServiceUnavailable(redact_text(f"could not fetch {uri}: the MLflow model registry at {registry} did not "
                                              f"answer ({first_line(err)}) {REGISTRY_HINT}"))
    where = (f"its Models page at {registry}" if registry.startswith(("http://", "https://"))
             else f"`mlflow ui --backend-store-uri {registry}`, Models page")
    return UserError(redact_text(f"could not fetch {uri} from the MLflow model registry at {registry} "
                                 f"({first_line(err)}) (hint: that model name, version or alias is not registered "
                                 f"there, or these credentials may not read it; the registered models and their "
                                 f"aliases are listed in {where})"))
