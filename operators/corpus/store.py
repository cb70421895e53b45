"""Versioned corpus store: Parquet shards plus a manifest per version, on any fsspec URL.

Layout under the store root (a local path, ``file://``, ``memory://``, ``s3://``, ...)::

    <root>/<name>/latest                                  text file naming the latest published version
    <root>/<name>/<version>/manifest.json                 written last: its presence means "published"
    <root>/<name>/<version>/data/<shard>.parquet          the shard's rows
    <root>/<name>/<version>/rejects/<shard>.parquet       rows an operator rejected (shard, operator, reason, row)
    <root>/<name>/<version>/_complete/<shard>.json        the shard's completion record (rows, bytes, sha256, counts)

Guarantees:

* **Atomic publish.** Shards land under the version folder first, the manifest is written last
  (temp file + rename on a local disk; a single put on object stores, which is atomic), and only
  then is ``latest`` repointed (same way). Readers resolve ``latest`` -> manifest -> shard files
  and published folders are never written again, so a reader sees a complete old version or a
  complete new one, never a mix.
* **Resume.** The version id is derived from (name, config hash, inputs), so a rerun after a crash
  opens the same unfinished folder. A shard counts as complete only when its data file exists with
  the size its completion record states; a data file without a record (a crash mid-shard) is
  overwritten by the rerun.
* **Nothing disappears silently.** Rejected rows are kept per shard with their operator and
  reason, and counted by reason and by operator in the manifest.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from fsspec import AbstractFileSystem
from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem
from pydantic import ValidationError

from interlingua.operators.corpus.manifest import (
    Manifest,
    PartialInput,
    ShardCompletion,
    ShardRecord,
    VersionSummary,
    config_hash,
    current_code_version,
    sum_counts,
)
from interlingua.operators.corpus.shards import sha256_bytes, validate_shard_id

if TYPE_CHECKING:
    import ray.data

LATEST = "latest"
"""The version name that resolves through the ``latest`` pointer."""

REJECTS_SCHEMA = pa.schema(
    [
        pa.field("shard", pa.string(), nullable=False),
        pa.field("operator", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("row", pa.string(), nullable=False),
    ]
)
"""Rejects table: the shard, the operator that rejected the row, why, and the original row as JSON."""

RejectsInput = pa.Table | Sequence[Mapping[str, Any]] | None
"""Rejects as given to ``write_shard``: a table or dicts with ``operator``, ``reason`` and ``row``
(``row`` a dict, JSON-encoded here, or an already JSON-encoded string); ``shard`` is filled in."""

_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MANIFEST_FILE = "manifest.json"


class CorpusLookupError(LookupError):
    """A corpus name or version that is not published under the store root."""


class CorpusStore:
    """Read and write versioned corpora under one fsspec root URL.

    ``storage_options`` are passed to fsspec (credentials, endpoint, ...).
    """

    def __init__(self, root: str, storage_options: Mapping[str, Any] | None = None) -> None:
        if not isinstance(root, str) or not root.strip():
            raise ValueError(f"root must be a non-empty fsspec URL or path, got {root!r}")
        self.root = root
        fs, root_path = url_to_fs(root, **dict(storage_options or {}))
        self.fs: AbstractFileSystem = fs
        self._root_path: str = root_path.rstrip("/")

    # -- writing ---------------------------------------------------------------------------

    def open_version(self, name: str, config: Mapping[str, Any], inputs: Sequence[str]) -> VersionWriter:
        """Open the version of corpus ``name`` built from ``config`` and ``inputs``.

        The version id is ``v-`` + 12 hex digits of SHA-256 over (name, config hash, inputs in
        order), so reruns with the same arguments reopen the same folder: an unfinished one is
        resumed (see ``VersionWriter.is_complete``), a published one comes back with
        ``writer.published == True`` and its manifest.
        """
        name = _validate_name(name)
        if isinstance(inputs, str) or not all(isinstance(item, str) for item in inputs):
            raise ValueError(f"inputs must be a list of URL strings, got {inputs!r}")
        input_list = list(inputs)
        digest = config_hash(config)
        identity = json.dumps({"name": name, "config_hash": digest, "inputs": input_list})
        version = "v-" + sha256_bytes(identity.encode("utf-8"))[:12]
        existing = self._read_manifest_if_published(name, version)
        return VersionWriter(self, name, version, dict(config), digest, input_list, existing)

    # -- reading ---------------------------------------------------------------------------

    def corpus_names(self) -> list[str]:
        """Names of the corpora with at least one published version, sorted."""
        return [name for name in self._child_dirs(self._root_path) if self.fs.exists(self._latest_path(name))]

    def versions(self, name: str) -> list[str]:
        """Published version ids of ``name``, oldest first."""
        manifests = self._published_manifests(_validate_name(name))
        return [manifest.version for manifest in manifests]

    def latest_version(self, name: str) -> str:
        """The version id the ``latest`` pointer of ``name`` names."""
        name = _validate_name(name)
        try:
            return self.fs.cat_file(self._latest_path(name)).decode("utf-8").strip()
        except FileNotFoundError:
            raise CorpusLookupError(self._unknown_corpus_message(name)) from None

    def manifest(self, name: str, version: str = LATEST) -> Manifest:
        """The manifest of a published version (``"latest"`` follows the pointer)."""
        name = _validate_name(name)
        resolved = self.latest_version(name) if version == LATEST else version
        manifest = self._read_manifest_if_published(name, resolved) if _NAME_PATTERN.match(resolved) else None
        if manifest is None:
            published = ", ".join(self.versions(name)) or "none"
            raise CorpusLookupError(
                f"unknown version {version!r} of corpus {name!r} under {self.root!r}; "
                f"published versions: {published} (or {LATEST!r})"
            )
        return manifest

    def list_versions(self, name: str | None = None) -> list[VersionSummary]:
        """Summaries of every published version (of ``name`` only, if given), by name then age."""
        names = [_validate_name(name)] if name is not None else self.corpus_names()
        summaries = []
        for corpus in names:
            manifests = self._published_manifests(corpus)
            if name is not None and not manifests:
                raise CorpusLookupError(self._unknown_corpus_message(corpus))
            latest = self.latest_version(corpus) if manifests else None
            summaries += [manifest.summary(is_latest=manifest.version == latest) for manifest in manifests]
        return summaries

    def shard_paths(self, name: str, version: str = LATEST) -> list[str]:
        """Filesystem paths (on ``self.fs``) of the version's shard files, in shard order."""
        manifest = self.manifest(name, version)
        version_dir = self._version_dir(manifest.name, manifest.version)
        return [f"{version_dir}/{shard.path}" for shard in manifest.shards]

    def read_table(self, name: str, version: str = LATEST, columns: Sequence[str] | None = None) -> pa.Table:
        """All rows of a published version as one Arrow table, shards in order."""
        manifest = self.manifest(name, version)
        if columns is not None:
            unknown = [column for column in columns if column not in manifest.columns]
            if unknown:
                raise ValueError(
                    f"columns {unknown} are not in {name}/{manifest.version}; "
                    f"available: {list(manifest.columns)}"
                )
        version_dir = self._version_dir(manifest.name, manifest.version)
        tables = [self._read_parquet(f"{version_dir}/{shard.path}", columns) for shard in manifest.shards]
        return pa.concat_tables(tables)

    def read_rejects(self, name: str, version: str = LATEST) -> pa.Table:
        """All rejected rows of a published version (``REJECTS_SCHEMA``), shards in order."""
        manifest = self.manifest(name, version)
        version_dir = self._version_dir(manifest.name, manifest.version)
        tables = [
            self._read_parquet(f"{version_dir}/{shard.rejects_path}", None)
            for shard in manifest.shards
            if shard.rejects_path is not None
        ]
        return pa.concat_tables(tables) if tables else REJECTS_SCHEMA.empty_table()

    def read_ray(self, name: str, version: str = LATEST, columns: Sequence[str] | None = None) -> ray.data.Dataset:
        """A Ray Data dataset over the version's shard files (``ray.data.read_parquet``).

        ``memory://`` stores are per-process, so Ray workers cannot read them: use ``read_table``.
        """
        if "memory" in _protocols(self.fs):
            raise ValueError(f"read_ray cannot read the per-process store {self.root!r}; use read_table")
        import pyarrow.fs as arrow_fs
        import ray.data

        paths = self.shard_paths(name, version)
        filesystem = (
            arrow_fs.LocalFileSystem()
            if isinstance(self.fs, LocalFileSystem)
            else arrow_fs.PyFileSystem(arrow_fs.FSSpecHandler(self.fs))
        )
        return ray.data.read_parquet(paths, filesystem=filesystem, columns=list(columns) if columns else None)

    # -- paths and helpers shared with VersionWriter -----------------------------------------

    def _name_dir(self, name: str) -> str:
        return f"{self._root_path}/{name}"

    def _latest_path(self, name: str) -> str:
        return f"{self._name_dir(name)}/{LATEST}"

    def _version_dir(self, name: str, version: str) -> str:
        return f"{self._name_dir(name)}/{version}"

    def _read_manifest_if_published(self, name: str, version: str) -> Manifest | None:
        try:
            text = self.fs.cat_file(f"{self._version_dir(name, version)}/{_MANIFEST_FILE}")
        except FileNotFoundError:
            return None
        return Manifest.from_json(text)

    def _published_manifests(self, name: str) -> list[Manifest]:
        manifests = [self._read_manifest_if_published(name, child) for child in self._child_dirs(self._name_dir(name))]
        return sorted((m for m in manifests if m is not None), key=lambda m: (m.created_at, m.version))

    def _child_dirs(self, path: str) -> list[str]:
        if not self.fs.exists(path):
            return []
        self.fs.invalidate_cache(path)
        entries = self.fs.ls(path, detail=True)
        return sorted(entry["name"].rstrip("/").rsplit("/", 1)[-1] for entry in entries if entry["type"] == "directory")

    def _read_parquet(self, path: str, columns: Sequence[str] | None) -> pa.Table:
        with self.fs.open(path, "rb") as stream:
            return pq.read_table(stream, columns=list(columns) if columns is not None else None)

    def _unknown_corpus_message(self, name: str) -> str:
        known = ", ".join(self.corpus_names()) or "none"
        return f"no published corpus named {name!r} under {self.root!r}; published corpora: {known}"

    def _write_atomically(self, path: str, data: bytes) -> None:
        """Readers of ``path`` see the old content or ``data``, never a prefix of it."""
        if isinstance(self.fs, LocalFileSystem):
            temporary = f"{path}.tmp-{uuid.uuid4().hex}"
            self.fs.pipe_file(temporary, data)
            os.replace(temporary, path)
        else:  # object stores and memory:// replace an object with one put
            self.fs.pipe_file(path, data)


class VersionWriter:
    """Writes the shards of one corpus version and publishes it. Obtain it from
    ``CorpusStore.open_version``; one writer per version at a time."""

    def __init__(
        self,
        store: CorpusStore,
        name: str,
        version: str,
        config: dict[str, Any],
        config_hash: str,
        inputs: list[str],
        manifest: Manifest | None,
    ) -> None:
        self.name = name
        self.version = version
        self.config = config
        self.config_hash = config_hash
        self.inputs = inputs
        self.manifest = manifest
        self._store = store
        self._fs = store.fs
        self._dir = store._version_dir(name, version)
        self._run_counters: Counter[str] = Counter()
        self._partial_inputs: list[PartialInput] = []

    @property
    def published(self) -> bool:
        """True when this version's manifest exists (published now or by an earlier run)."""
        return self.manifest is not None

    def is_complete(self, shard_id: str) -> bool:
        """True when the shard was fully written (data file plus matching completion record),
        by this run or an earlier one; always True for the shards of a published version."""
        validate_shard_id(shard_id)
        if self.manifest is not None:
            return any(shard.shard_id == shard_id for shard in self.manifest.shards)
        return self._completion(shard_id) is not None

    def completed_shards(self) -> list[str]:
        """Ids of the complete shards, sorted."""
        if self.manifest is not None:
            return [shard.shard_id for shard in self.manifest.shards]
        return sorted(completion.shard.shard_id for completion in self._completions())

    def write_shard(
        self,
        shard_id: str,
        table: pa.Table,
        rejects: RejectsInput = None,
        counters: Mapping[str, int] | None = None,
    ) -> ShardRecord:
        """Write one shard's rows, its rejected rows and its counters, then its completion record.

        ``counters`` (e.g. rows seen / kept per filter) are stored with the shard, so they are
        summed into the manifest correctly even when the run is resumed. Rewriting a shard
        replaces it. Returns the shard's record (rows, bytes, sha256).
        """
        validate_shard_id(shard_id)
        self._require_unpublished("write_shard")
        if not isinstance(table, pa.Table):
            raise TypeError(f"table must be a pyarrow.Table, got {type(table).__name__}")
        rejects_table = _rejects_table(shard_id, rejects)
        shard_counters = _validate_counts(counters or {}, "counters")

        completion_path = self._completion_path(shard_id)
        if self._fs.exists(completion_path):  # the shard is being replaced: unmark it first
            self._fs.rm_file(completion_path)

        data = _parquet_bytes(table)
        self._put(f"data/{shard_id}.parquet", data)
        rejects_path = None
        if rejects_table.num_rows:
            rejects_path = f"rejects/{shard_id}.parquet"
            self._put(rejects_path, _parquet_bytes(rejects_table))

        record = ShardRecord(
            shard_id=shard_id,
            path=f"data/{shard_id}.parquet",
            rows=table.num_rows,
            bytes=len(data),
            sha256=sha256_bytes(data),
            rejects_path=rejects_path,
            reject_rows=rejects_table.num_rows,
        )
        completion = ShardCompletion(
            shard=record,
            columns={field.name: str(field.type) for field in table.schema},
            rejects_by_reason=dict(Counter(rejects_table.column("reason").to_pylist())),
            rejects_by_operator=dict(Counter(rejects_table.column("operator").to_pylist())),
            counters=shard_counters,
        )
        self._fs.makedirs(f"{self._dir}/_complete", exist_ok=True)
        self._store._write_atomically(completion_path, completion.to_json().encode("utf-8"))
        return record

    def add_counters(self, counters: Mapping[str, int]) -> None:
        """Add run-level counts to the manifest's ``counters`` (summed with the shards' counters).

        These live in memory until ``publish``: counts that must survive a resume belong in
        ``write_shard(..., counters=...)``.
        """
        self._require_unpublished("add_counters")
        self._run_counters.update(_validate_counts(counters, "counters"))

    def mark_partial(self, input_url: str, reason: str, offset: int | None = None) -> None:
        """Record that ``input_url`` was read only in part; the manifest lists it and ``partial`` is True."""
        self._require_unpublished("mark_partial")
        self._partial_inputs.append(PartialInput(input=input_url, reason=reason, offset=offset))

    def publish(self, expected_shards: Iterable[str] | None = None) -> Manifest:
        """Write the manifest (last, atomically), then point ``latest`` at this version.

        ``expected_shards`` (the plan's ids) makes publishing refuse while any planned shard is
        incomplete or an unplanned one exists. Publishing an already published version only
        repoints ``latest`` at it and returns its manifest.
        """
        expected = None if expected_shards is None else sorted(validate_shard_id(s) for s in expected_shards)
        if self.manifest is None:
            manifest = self._build_manifest(expected)
            self._store._write_atomically(f"{self._dir}/{_MANIFEST_FILE}", manifest.to_json().encode("utf-8"))
            self.manifest = manifest
        elif expected is not None:
            self._check_expected(expected, self.completed_shards())
        latest_path = self._store._latest_path(self.name)
        self._store._write_atomically(latest_path, f"{self.version}\n".encode("utf-8"))
        return self.manifest

    def _build_manifest(self, expected: list[str] | None) -> Manifest:
        completions = sorted(self._completions(), key=lambda completion: completion.shard.shard_id)
        if expected is not None:
            self._check_expected(expected, [completion.shard.shard_id for completion in completions])
        if not completions:
            raise ValueError(f"cannot publish {self.name}/{self.version}: no shard is complete")
        columns = completions[0].columns
        differing = [c.shard.shard_id for c in completions if list(c.columns.items()) != list(columns.items())]
        if differing:
            raise ValueError(
                f"cannot publish {self.name}/{self.version}: shards {differing} have columns that differ "
                f"from shard {completions[0].shard.shard_id!r} ({columns})"
            )
        return Manifest(
            name=self.name,
            version=self.version,
            created_at=datetime.now(timezone.utc),
            inputs=tuple(self.inputs),
            config=self.config,
            config_hash=self.config_hash,
            code_version=current_code_version(),
            columns=columns,
            shards=tuple(completion.shard for completion in completions),
            total_rows=sum(completion.shard.rows for completion in completions),
            rejects_by_reason=sum_counts(completion.rejects_by_reason for completion in completions),
            rejects_by_operator=sum_counts(completion.rejects_by_operator for completion in completions),
            counters=sum_counts([*(completion.counters for completion in completions), self._run_counters]),
            partial_inputs=tuple(self._partial_inputs),
        )

    def _check_expected(self, expected: list[str], complete: list[str]) -> None:
        missing = sorted(set(expected) - set(complete))
        unplanned = sorted(set(complete) - set(expected))
        if missing or unplanned:
            raise ValueError(
                f"cannot publish {self.name}/{self.version}: {len(missing)} expected shard(s) are not "
                f"complete {missing[:10]} and {len(unplanned)} complete shard(s) are not expected {unplanned[:10]}"
            )

    def _completions(self) -> list[ShardCompletion]:
        completion_dir = f"{self._dir}/_complete"
        if not self._fs.exists(completion_dir):
            return []
        self._fs.invalidate_cache(completion_dir)
        names = [path.rsplit("/", 1)[-1] for path in self._fs.ls(completion_dir, detail=False)]
        shard_ids = [name.removesuffix(".json") for name in names if name.endswith(".json")]
        completions = [self._completion(shard_id) for shard_id in shard_ids]
        return [completion for completion in completions if completion is not None]

    def _completion(self, shard_id: str) -> ShardCompletion | None:
        """The shard's completion record if the shard is complete, else None."""
        try:
            completion = ShardCompletion.from_json(self._fs.cat_file(self._completion_path(shard_id)))
        except (FileNotFoundError, ValidationError):
            return None  # no record, or a torn one: the shard is not complete
        shard = completion.shard
        if shard.shard_id != shard_id or not self._has_size(shard.path, shard.bytes):
            return None
        if shard.rejects_path is not None and not self._fs.exists(f"{self._dir}/{shard.rejects_path}"):
            return None
        return completion

    def _has_size(self, relative_path: str, expected_bytes: int) -> bool:
        try:
            return self._fs.size(f"{self._dir}/{relative_path}") == expected_bytes
        except FileNotFoundError:
            return False

    def _completion_path(self, shard_id: str) -> str:
        return f"{self._dir}/_complete/{shard_id}.json"

    def _put(self, relative_path: str, data: bytes) -> None:
        path = f"{self._dir}/{relative_path}"
        self._fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        self._fs.pipe_file(path, data)

    def _require_unpublished(self, action: str) -> None:
        if self.manifest is not None:
            raise RuntimeError(
                f"{action}: {self.name}/{self.version} is already published and immutable; "
                f"change the config or inputs to build a new version"
            )


def _validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_PATTERN.match(name) or name == LATEST:
        raise ValueError(
            f"corpus name must be letters, digits, '.', '_' or '-' (not starting with punctuation, "
            f"not {LATEST!r}), got {name!r}"
        )
    return name


def _validate_counts(counts: Mapping[str, int], option: str) -> dict[str, int]:
    if not isinstance(counts, Mapping):
        raise ValueError(f"{option} must be a mapping of name to count, got {type(counts).__name__}")
    for key, value in counts.items():
        if not isinstance(key, str) or isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{option} must map names to integer counts >= 0, got {key!r}: {value!r}")
    return dict(counts)


def _rejects_table(shard_id: str, rejects: RejectsInput) -> pa.Table:
    """Normalize ``write_shard``'s rejects to ``REJECTS_SCHEMA`` with ``shard`` filled in."""
    if rejects is None:
        return REJECTS_SCHEMA.empty_table()
    records = rejects.to_pylist() if isinstance(rejects, pa.Table) else list(rejects)
    columns: dict[str, list[str]] = {field: [] for field in REJECTS_SCHEMA.names}
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(f"rejects[{index}] must be a mapping, got {type(record).__name__}")
        for key in ("operator", "reason"):
            if not isinstance(record.get(key), str) or not record[key]:
                raise ValueError(f"rejects[{index}][{key!r}] must be a non-empty string, got {record.get(key)!r}")
        if "row" not in record:
            raise ValueError(f"rejects[{index}] has no 'row' (the original row) in {sorted(record)}")
        if record.get("shard", shard_id) != shard_id:
            raise ValueError(f"rejects[{index}] names shard {record['shard']!r} but is written to {shard_id!r}")
        row = record["row"]
        columns["shard"].append(shard_id)
        columns["operator"].append(record["operator"])
        columns["reason"].append(record["reason"])
        columns["row"].append(row if isinstance(row, str) else json.dumps(row, ensure_ascii=False, default=str))
    return pa.table(columns, schema=REJECTS_SCHEMA)


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def _protocols(fs: AbstractFileSystem) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)
