"""An MLflow tracking URI that carries a credential must not be handed to a Ray cluster: Ray keeps a job's (and a
driver's) environment in its job table for anyone who can list jobs to read. ``interlingua submit`` and
``run`` / ``refresh --address`` refuse such a URI with the same line (:func:`refuse_tracking_uri_credentials`)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from interlingua.core.errors import UserError
from interlingua.core.redact import is_secret_key, redact_text, redact_url


def tracking_uri_credential(uri: str) -> str | None:
    """What credential ``uri`` carries ("a password", ...), or None: any user-info, any credential-like query
    (or fragment) parameter, or a secret :func:`~interlingua.core.redact.redact_text` would mask."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise UserError(f"MLflow tracking URI {redact_text(redact_url(uri))} is not a valid URI; expected e.g. "
                        "http://mlflow.example.internal:5000") from None
    if parts.password:
        return "a password"
    if "@" in parts.netloc:
        return "user-info (a user name or token before '@')"
    names = [k for k, _ in parse_qsl(parts.query, keep_blank_values=True) + parse_qsl(parts.fragment)
             if is_secret_key(k, query=True)]
    if names:
        return f"a credential-like query parameter ({', '.join(sorted(set(names)))})"
    if redact_text(uri) != uri:
        return "a credential"
    return None


def refuse_tracking_uri_credentials(uri: str | None) -> None:
    """A one-line :class:`UserError` (the URI masked) when ``uri`` carries a credential."""
    credential = tracking_uri_credential(uri) if uri else None
    if credential:
        raise UserError(f"MLflow tracking URI {redact_text(redact_url(uri))} carries {credential}, which would be "
                        "stored with the job for anyone who can list jobs to read: give the cluster's nodes "
                        "MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD or MLFLOW_TRACKING_TOKEN (e.g. from a "
                        "Kubernetes Secret) and drop it from the URI")
