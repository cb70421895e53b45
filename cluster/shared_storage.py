"""What a job on a remote Ray cluster can read and write: shared storage only.

A submitted job's driver runs on the cluster's head node in its own working directory and its
training workers run on other nodes, so a path on the submitting machine means nothing there.
Inputs, corpora and checkpoints must be URLs of shared storage (``s3://``, ``gs://``, ...) or paths
under a folder the user declares mounted at the same place on every node (``--shared-path /mnt/data``).

Only values the user set are checked (values that differ from the workflow's defaults): defaults are
resolved on the cluster, where they point at the cluster's own state directory and packaged data.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from interlingua.core.errors import UserError

#: URL schemes of storage every node reaches (fsspec protocols, MLflow model/run URIs, the HF hub).
SHARED_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "hdfs", "webhdfs", "hf",
                            "http", "https", "models", "runs", "mlflow-artifacts", "dbfs", "oci", "oss"})
#: MLflow stores that are files on one machine.
FILE_STORE_SCHEMES = frozenset({"sqlite", "file", ""})
SHARED_HINT = "put the data on shared storage (s3://, gs://) or declare a folder mounted on every node with --shared-path DIR"


@dataclass(frozen=True)
class SharedStorage:
    """The folders the user declared mounted at the same path on this machine and every cluster node."""

    mounts: tuple[str, ...] = ()

    @classmethod
    def declare(cls, paths: Iterable[str]) -> SharedStorage:
        mounts = []
        for raw in paths:
            if _scheme(raw):
                raise UserError(f"--shared-path {raw}: expected a folder mounted on every node (e.g. /mnt/data); "
                                "URLs such as s3:// need no declaration")
            mounts.append(str(Path(raw).expanduser().resolve()))
        return cls(tuple(mounts))

    def is_shared(self, path: str) -> bool:
        p = PurePosixPath(path)
        return any(p == PurePosixPath(m) or PurePosixPath(m) in p.parents for m in self.mounts)

    def shared_path(self, key: str, value: str) -> str:
        """``value`` as the cluster must see it (a URL, or an absolute path under a mount), or a
        :class:`UserError` naming ``key``."""
        kind, resolved = classify(value)
        if kind == "local" and not self.is_shared(resolved):
            raise UserError(f"{key}={value} is a path on this machine, which a job on the cluster cannot read; "
                            f"{SHARED_HINT}")
        return resolved


def classify(value: str) -> tuple[str, str]:
    """``("url", value)`` for shared-storage URLs, ``("local", absolute path)`` for paths on this machine,
    ``("name", value)`` for anything else (a corpus name, a language code, a hub id)."""
    scheme = _scheme(value)
    if scheme == "file":
        return "local", str(Path(urlsplit(value).path).resolve())
    if scheme:
        return "url", value
    if value.startswith(("/", "~", "./", "../")) or value in (".", ".."):
        return "local", str(Path(value).expanduser().resolve())
    # A relative name is a path only if it exists here ("raw.en"); "org/model" is a hub id otherwise.
    if ("/" in value or "." in value) and os.path.exists(value):
        return "local", str(Path(value).resolve())
    return "name", value


def changed_values(resolved: dict[str, Any], defaults: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of every leaf of ``resolved`` that differs from ``defaults``."""
    for key, value in resolved.items():
        dotted = f"{prefix}{key}"
        default = defaults.get(key) if isinstance(defaults, dict) else None
        if isinstance(value, dict):
            yield from changed_values(value, default if isinstance(default, dict) else {}, dotted + ".")
        elif value != default:
            yield dotted, value


def require_shared_paths(resolved: dict[str, Any], defaults: dict[str, Any], storage: SharedStorage) -> dict[str, Any]:
    """Check every user-set string (also inside lists and mappings) of a resolved config; return the config
    with relative shared paths made absolute (the job's working directory is not the submitter's)."""
    out = _copy(resolved)
    bad: list[str] = []
    for key, value in changed_values(resolved, defaults):
        _set(out, key, _shared(key, value, storage, bad))
    if bad:
        what = " and ".join(bad)
        raise UserError(f"{what} {'is a path' if len(bad) == 1 else 'are paths'} on this machine, which a job on "
                        f"the cluster cannot read; {SHARED_HINT}")
    return out


def _shared(key: str, value: Any, storage: SharedStorage, bad: list[str]) -> Any:
    if isinstance(value, list):
        return [_shared(f"{key}[{i}]" if len(value) > 1 else key, v, storage, bad) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _shared(f"{key}.{k}", v, storage, bad) for k, v in value.items()}
    if isinstance(value, str) and classify(value)[0] == "local":
        try:
            return storage.shared_path(key, value)
        except UserError:
            bad.append(f"{key}={value}")
    return value


def require_tracking_uri(uri: str | None, storage: SharedStorage, *, needed: bool) -> str | None:
    """The MLflow tracking URI to give the job: a server (or database) the cluster reaches. ``needed``: the
    workflow logs to MLflow (then a missing or machine-local store is an error; otherwise it is not sent)."""
    if not uri:
        if needed:
            raise UserError("this workflow logs to MLflow, and a job on a cluster cannot use the local SQLite "
                            "default: set MLFLOW_TRACKING_URI (or --tracking-uri) to an MLflow server the cluster "
                            "reaches, e.g. http://mlflow.example.internal:5000")
        return None
    if urlsplit(uri).password:
        raise UserError(f"MLflow tracking URI {redact(uri)} carries a password, which would be stored with the job "
                        "for anyone who can list jobs to read: give the cluster's nodes MLFLOW_TRACKING_USERNAME / "
                        "MLFLOW_TRACKING_PASSWORD (e.g. from a Kubernetes Secret) and drop it from the URI")
    scheme = _scheme(uri)
    if scheme in FILE_STORE_SCHEMES:
        path = urlsplit(uri).path if scheme else uri
        if scheme == "sqlite":
            path = path[1:] if path.startswith("//") else path  # sqlite:////abs -> //abs
        if not storage.is_shared(str(Path(path).expanduser().resolve())):
            if not needed:
                return None  # a local store the job would not use anyway: not sent
            raise UserError(f"MLflow tracking URI {redact(uri)} is a file on this machine, which a job on the cluster "
                            "cannot reach: set MLFLOW_TRACKING_URI (or --tracking-uri) to an MLflow server the "
                            "cluster reaches, e.g. http://mlflow.example.internal:5000")
    return uri


def redact(url: str) -> str:
    """``url`` with any user:password replaced, fit for messages and metadata."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))


def _scheme(value: str) -> str:
    head, sep, _ = value.partition(":")
    if not sep or len(head) < 2 or not head.replace("+", "").replace("-", "").replace(".", "").isalnum():
        return ""  # "C:\\x" is a Windows drive, not a scheme
    return head.lower() if value[len(head):].startswith(":/") else ""


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        node = node[part]
    node[last] = value


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data
