"""The manifest of a corpus version and the per-shard completion record it is built from.

A version folder holds one Parquet file per shard, an optional rejects file per shard, one
completion record per finished shard, and, once published, ``manifest.json``. The manifest is
the only thing readers trust: it names every shard file with its row count, byte size and
SHA-256 checksum, and says where the version came from (inputs, config and its hash, code
version) and what was set aside (reject counts by reason and by operator) or counted on the way
(free ``counters``, e.g. a filter funnel).
"""

from __future__ import annotations

import hashlib
import re
import importlib.metadata
import json
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_SHA256_HEX = r"^[0-9a-f]{64}$"
_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_VERSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def confined_path(path: str) -> str:
    """``path`` unchanged when it is a relative path inside a version folder, else ValueError.

    Every segment is letters, digits, '.', '_' or '-' (not '.' or '..'), so a manifest cannot name
    ``../../x.parquet``, an absolute path, a URL or a backslash path: readers never leave the folder.
    """
    segments = path.split("/") if isinstance(path, str) else []
    if not segments or any(not _SEGMENT.match(s) or s in (".", "..") for s in segments):
        raise ValueError(f"path {path!r} is not a relative path inside the version folder")
    return path


def version_name(name: str | None) -> str | None:
    """``name`` unchanged when it can be a version folder name (or None), else ValueError."""
    if name is not None and (not isinstance(name, str) or not _VERSION_NAME.match(name)):
        raise ValueError(f"{name!r} is not a version name")
    return name


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CodeVersion(_Frozen):
    """The code that produced a version: the installed interlingua version and, when the
    package is run from a git checkout, the commit it was at."""

    package_version: str
    git_commit: str | None = None


class StoredFile(_Frozen):
    """A file of a version: ``path`` relative to the folder of version ``stored_in`` (None: this
    version's own folder; another version of the same corpus when the file is reused by reference)."""

    path: str
    bytes: int = Field(ge=0)
    sha256: str = Field(pattern=_SHA256_HEX)
    stored_in: str | None = None

    _confined = field_validator("path")(confined_path)
    _version = field_validator("stored_in")(version_name)


class ShardRecord(_Frozen):
    """One published shard. Paths are relative to the folder of version ``stored_in`` (None: this
    version's folder), never outside it.

    ``reused_from`` names the version a shard was taken over from unchanged (incremental refresh);
    ``input`` the input URL it was built from (when the workflow plans shards per input);
    ``counters`` and reject counts are the shard's own, so a refresh can sum reused and new shards;
    ``annotations`` are workflow facts about the shard (e.g. which fast_align parameters aligned it).
    """

    shard_id: str
    path: str
    rows: int = Field(ge=0)
    bytes: int = Field(ge=0)
    sha256: str = Field(pattern=_SHA256_HEX)
    rejects_path: str | None = None
    reject_rows: int = Field(default=0, ge=0)
    rejects_sha256: str | None = Field(default=None, pattern=_SHA256_HEX)
    stored_in: str | None = None
    reused_from: str | None = None
    input: str | None = None
    counters: dict[str, int] = Field(default_factory=dict)
    rejects_by_reason: dict[str, int] = Field(default_factory=dict)
    rejects_by_operator: dict[str, int] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @field_validator("path", "rejects_path")
    @classmethod
    def _confined(cls, path: str | None) -> str | None:
        return None if path is None else confined_path(path)

    _versions = field_validator("stored_in", "reused_from")(version_name)


class InputFingerprint(_Frozen):
    """What an input looked like when a version was built: size plus the store's change marker
    (ETag, else modification time) or, where the store offers neither, the content's SHA-256."""

    size: int = Field(ge=0)
    etag: str | None = None
    mtime: str | None = None
    sha256: str | None = None

    def same_as(self, other: "InputFingerprint") -> bool | None:
        """Whether ``other`` records the same file state: False when the sizes or the markers both carry
        differ, True when a marker both carry is equal, None when they carry none in common (a version
        made before refreshes recorded content hashes: its modification time against a SHA-256)."""
        if self.size != other.size:
            return False
        for marker in ("sha256", "etag", "mtime"):
            mine, theirs = getattr(self, marker), getattr(other, marker)
            if mine is not None and theirs is not None:
                return mine == theirs
        return None


class Lineage(_Frozen):
    """How a version came from its parent (``interlingua refresh``).

    ``mode``: ``incremental`` (unchanged inputs' shards reused), ``full`` (built from every input),
    ``new-line`` (the refresh spec's config hash differs from the parent's: a new line of versions).
    ``spec_config_hash``: hash of the workflow config the refresh ran (its inputs left out). Inputs are
    URLs; ``counters`` are the counts of the steps this refresh ran (its written shards only; filled in
    at publish, as are the shard counts).
    """

    parent: str | None = None
    spec_config_hash: str | None = Field(default=None, pattern=_SHA256_HEX)
    mode: Literal["incremental", "full", "new-line"] = "full"
    inputs_added: tuple[str, ...] = ()
    inputs_changed: tuple[str, ...] = ()
    inputs_removed: tuple[str, ...] = ()
    inputs_unchanged: tuple[str, ...] = ()
    shards_reused: int = Field(default=0, ge=0)
    shards_written: int = Field(default=0, ge=0)
    counters: dict[str, int] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()

    _version = field_validator("parent")(version_name)


class ShardCompletion(_Frozen):
    """What a finished shard leaves behind next to its data file: the shard record plus the
    shard's column types, reject counts and counters, so that publishing (possibly in a later,
    resumed run) can aggregate them without re-reading the data."""

    shard: ShardRecord
    columns: dict[str, str]
    rejects_by_reason: dict[str, int] = Field(default_factory=dict)
    rejects_by_operator: dict[str, int] = Field(default_factory=dict)
    counters: dict[str, int] = Field(default_factory=dict)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str | bytes) -> ShardCompletion:
        return cls.model_validate_json(text)


class VersionSummary(_Frozen):
    """One line of ``corpus list``: a published version at a glance."""

    name: str
    version: str
    created_at: datetime
    total_rows: int
    num_shards: int
    total_rejects: int
    is_latest: bool
    partial: bool = False  # built from inputs read only in part (``Manifest.partial_inputs``)


class PartialInput(_Frozen):
    """An input that was read only in part (a truncated or corrupt archive) and published anyway because the
    workflow was told to (``allow_truncated_inputs``): which input, why, and where reading stopped."""

    input: str
    reason: str
    offset: int | None = None  # byte offset in the (compressed) file where reading stopped, when known

    def describe(self) -> str:
        """``input (reason; reading stopped at byte N)``: how ``corpus show`` and the dataset card name it."""
        stopped = "" if self.offset is None else f"; reading stopped at byte {self.offset}"
        return f"{self.input} ({self.reason}{stopped})"


class Manifest(_Frozen):
    """The published description of one corpus version (see the module docstring).

    Invariants checked on construction and on ``from_json``: ``total_rows`` is the sum of the
    shards' rows, and the reject counts by reason and by operator both sum to the shards'
    reject rows.
    """

    format_version: Literal[1] = 1
    name: str
    version: str
    created_at: datetime
    inputs: tuple[str, ...]
    config: dict[str, Any]
    config_hash: str = Field(pattern=_SHA256_HEX)
    code_version: CodeVersion
    columns: dict[str, str]
    shards: tuple[ShardRecord, ...]
    total_rows: int = Field(ge=0)
    rejects_by_reason: dict[str, int]
    rejects_by_operator: dict[str, int]
    counters: dict[str, int]
    input_fingerprints: dict[str, InputFingerprint] = Field(default_factory=dict)
    artifacts: tuple[StoredFile, ...] = ()
    lineage: Lineage | None = None
    partial_inputs: tuple[PartialInput, ...] = ()  # non-empty: a partial version, built from truncated inputs

    _names = field_validator("name", "version")(version_name)

    @property
    def partial(self) -> bool:
        return bool(self.partial_inputs)

    def partial_note(self) -> str:
        """Which inputs a partial version was built from only in part, one line (``corpus show``, the dataset card);
        "" for a whole version."""
        if not self.partial_inputs:
            return ""
        described = "; ".join(partial.describe() for partial in self.partial_inputs)
        return f"{len(self.partial_inputs)} input(s) read only in part (allow_truncated_inputs): {described}"

    @model_validator(mode="after")
    def _totals_match_shards(self) -> Manifest:
        shard_rows = sum(shard.rows for shard in self.shards)
        if self.total_rows != shard_rows:
            raise ValueError(f"total_rows={self.total_rows} but the shards hold {shard_rows} rows")
        reject_rows = self.total_rejects
        for field in ("rejects_by_reason", "rejects_by_operator"):
            counted = sum(getattr(self, field).values())
            if counted != reject_rows:
                raise ValueError(f"{field} sums to {counted} but the shards hold {reject_rows} rejects")
        return self

    @property
    def total_rejects(self) -> int:
        return sum(shard.reject_rows for shard in self.shards)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        return cls.model_validate_json(text)

    def summary(self, is_latest: bool = False) -> VersionSummary:
        return VersionSummary(
            name=self.name,
            version=self.version,
            created_at=self.created_at,
            total_rows=self.total_rows,
            num_shards=len(self.shards),
            total_rejects=self.total_rejects,
            is_latest=is_latest,
            partial=self.partial,
        )


def sum_counts(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Key-wise sum of count dicts, keys sorted (for stable manifests)."""
    total: Counter[str] = Counter()
    for mapping in counts:
        total.update(mapping)
    return dict(sorted(total.items()))


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the config's canonical JSON (sorted keys, no whitespace).

    Raises ValueError when the config is not JSON-serializable (pass a pydantic config as
    ``model.model_dump(mode="json")``).
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping of JSON values, got {type(config).__name__}")
    try:
        canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"config must be JSON-serializable: {error}") from error
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def current_code_version() -> CodeVersion:
    """The installed interlingua version plus the git commit of its source tree, if any."""
    try:
        package_version = importlib.metadata.version("interlingua")
    except importlib.metadata.PackageNotFoundError:
        package_version = "unknown"
    return CodeVersion(package_version=package_version, git_commit=_git_commit(Path(__file__).parent))


def _git_commit(directory: Path) -> str | None:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = result.stdout.strip()
    return commit if result.returncode == 0 and commit else None
