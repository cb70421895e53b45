"""What a job on a remote Ray cluster can read and write: shared storage only.

A submitted job's driver runs on the cluster's head node in its own working directory and its
training workers run on other nodes, so a path on the submitting machine means nothing there.
Inputs, corpora and checkpoints must be URLs of shared storage (``s3://``, ``gs://``, ...) or paths
under a folder the user declares mounted at the same place on every node (``--shared-path /mnt/data``).

Only values the user set are checked (values that differ from the workflow's defaults): defaults are
resolved on the cluster, where they point at the cluster's own state directory and packaged data. A relative
value that reads as a file (``raw.en``, ``data/x/raw.en``) must exist here or under a ``--shared-path`` folder:
the job's working directory is not the submitter's, so a missing one would only fail on the cluster.

The MLflow tracking URI is sent in the job's environment, which Ray keeps in its job table for anyone who can
list jobs: it may carry no user-info and no credential-like query parameter (``?token=``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from interlingua.core.errors import UserError
from interlingua.core.redact import redact_text, redact_url
from interlingua.core.tracking_credentials import refuse_tracking_uri_credentials

#: URL schemes of storage every node reaches (fsspec protocols, MLflow model/run URIs, the HF hub).
SHARED_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "hdfs", "webhdfs", "hf",
                            "http", "https", "models", "runs", "mlflow-artifacts", "dbfs", "oci", "oss"})
#: MLflow stores that are files on one machine.
FILE_STORE_SCHEMES = frozenset({"sqlite", "file", ""})
SHARED_HINT = "put the data on shared storage (s3://, gs://) or declare a folder mounted on every node with --shared-path DIR"
#: A last path component with a file extension (``raw.en``, ``x.jsonl.gz``; not ``Qwen2.5-0.5B`` or ``v1.0``).
_FILE_NAME = re.compile(r"[^/\\]+\.[A-Za-z][A-Za-z0-9]{0,7}")
#: Config keys (any part of the dotted key) whose values are names, never files: MLflow names, corpus names,
#: column names (``translation.en``), free text.
_NAME_KEYS = frozenset({"experiment", "registered_model", "alias", "name", "corpus_name", "corpus", "description",
                        "objective", "split", "workflow", "run_name", "column", "columns", "src_column", "tgt_column",
                        "id_column", "src_lang", "tgt_lang", "lang", "languages", "tasks", "eval_tasks", "domains",
                        "force", "compare", "stop_after"})


@dataclass(frozen=True)
class SharedStorage:
    """The folders the user declared mounted at the same path on this machine and every cluster node."""

    mounts: tuple[str, ...] = ()

    @classmethod
    def declare(cls, paths: Iterable[str], *, must_exist: bool = True) -> SharedStorage:
        """The declared folders, absolute; each must be a folder here unless ``must_exist`` is False (a dry run
        of a command meant for another machine, e.g. a CronJob pod that mounts it)."""
        mounts = []
        for raw in paths:
            if _scheme(raw):
                raise UserError(f"--shared-path {raw}: expected a folder mounted on every node (e.g. /mnt/data); "
                                "URLs such as s3:// need no declaration")
            path = Path(raw).expanduser().resolve()
            if must_exist and not path.is_dir():
                what = "is a file, not a folder" if path.exists() else "does not exist on this machine"
                raise UserError(f"--shared-path {raw} {what}: give the folder where the shared storage is mounted "
                                "here (and at the same path on every node), e.g. --shared-path /mnt/data")
            mounts.append(str(path))
        return cls(tuple(mounts))

    def is_shared(self, path: str) -> bool:
        p = PurePosixPath(path)
        return any(p == PurePosixPath(m) or PurePosixPath(m) in p.parents for m in self.mounts)

    def find(self, relative: str) -> str | None:
        """``relative`` under the first mount that holds it (absolute), or None."""
        for mount in self.mounts:
            candidate = Path(mount, relative)
            if candidate.exists():
                return str(candidate.resolve())
        return None

    def shared_path(self, key: str, value: str) -> str:
        """``value`` as the cluster must see it (a URL, or an absolute path under a mount), or a
        :class:`UserError` naming ``key``."""
        kind, resolved = classify(value)
        if kind == "missing":
            kind, resolved = "local", str(Path(value).resolve())
        if kind == "local" and not self.is_shared(resolved):
            raise UserError(f"{key}={value} is a path on this machine, which a job on the cluster cannot read; "
                            f"{SHARED_HINT}")
        return resolved


def classify(value: str) -> tuple[str, str]:
    """``("url", value)`` for shared-storage URLs, ``("local", absolute path)`` for paths on this machine,
    ``("missing", value)`` for a relative value that reads as a file path but does not exist here (``raw.en``,
    ``data/x/y``), ``("name", value)`` for anything else (a corpus name, a language code, a hub id ``org/model``)."""
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
    if _looks_like_file(value):
        return "missing", value
    return "name", value


def _looks_like_file(value: str) -> bool:
    """A relative value that reads as a path: no spaces, and a file extension, a backslash, more than the two
    parts of a hub id (``a/b/c``), or a first part that is a folder here (``data/raw``)."""
    if not value or any(c.isspace() for c in value) or "@" in value or ":" in value:
        return False
    parts = [p for p in re.split(r"[/\\]", value) if p]
    if not parts:
        return False
    return (bool(_FILE_NAME.fullmatch(parts[-1])) or "\\" in value or len(parts) > 2
            or (len(parts) > 1 and os.path.isdir(parts[0])))


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
    missing: list[str] = []
    for key, value in changed_values(resolved, defaults):
        _set(out, key, _shared(key, value, storage, bad, missing))
    if missing:
        what = " and ".join(missing)
        where = f" nor under --shared-path {' '.join(storage.mounts)}" if storage.mounts else ""
        raise UserError(f"{what}: no such file here{where}, and a relative path would not be found on the cluster "
                        f"either (the job runs in its own folder); fix the path, or {SHARED_HINT}")
    if bad:
        what = " and ".join(bad)
        raise UserError(f"{what} {'is a path' if len(bad) == 1 else 'are paths'} on this machine, which a job on "
                        f"the cluster cannot read; {SHARED_HINT}")
    return out


def _shared(key: str, value: Any, storage: SharedStorage, bad: list[str], missing: list[str]) -> Any:
    if isinstance(value, list):
        return [_shared(f"{key}[{i}]" if len(value) > 1 else key, v, storage, bad, missing) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _shared(f"{key}.{k}", v, storage, bad, missing) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    kind = classify(value)[0]
    if kind == "missing" and not _NAME_KEYS & set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", key)):
        found = storage.find(value)
        if found is None:
            missing.append(f"{key}={value}")
        return found or value
    if kind == "local":
        try:
            return storage.shared_path(key, value)
        except UserError:
            bad.append(f"{key}={value}")
    return value


def require_tracking_uri(uri: str | None, storage: SharedStorage, *, needed: bool,
                         setting: str = "MLFLOW_TRACKING_URI") -> str | None:
    """The MLflow tracking URI to give the job: a server (or database) the cluster reaches, of a scheme MLflow takes
    (:func:`~interlingua.core.runtime.check_store_scheme`, named as ``setting``). ``needed``: the workflow logs to
    MLflow (then a missing or machine-local store is an error; otherwise it is not sent)."""
    from interlingua.core.runtime import check_store_scheme

    if not uri:
        if needed:
            raise UserError("this workflow logs to MLflow, and a job on a cluster cannot use the local SQLite "
                            "default: set MLFLOW_TRACKING_URI (or --tracking-uri) to an MLflow server the cluster "
                            "reaches, e.g. http://mlflow.example.internal:5000")
        return None
    refuse_tracking_uri_credentials(uri)
    check_store_scheme(uri, setting)
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
    """``url`` with any user-info and credential-like query parameters masked (also a scheme-less
    ``user:password@host:port``), fit for messages and metadata."""
    return redact_text(redact_url(url))


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
