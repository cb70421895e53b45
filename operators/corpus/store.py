"""Versioned corpus store: Parquet shards plus a manifest per version, on any fsspec URL.

Layout under the store root (a local path, ``file://``, ``memory://``, ``s3://``, ...)::

    <root>/<name>/latest                                  text file naming the latest published version
    <root>/<name>/<version>/manifest.json                 provenance, shards with sizes and sha256, counts
    <root>/<name>/<version>/README.md                     dataset card: ``datasets.load_dataset(<version>)``
    <root>/<name>/<version>/data/<shard>.parquet          the shard's rows
    <root>/<name>/<version>/rejects/<shard>.parquet       rows an operator rejected (shard, operator, reason, row)
    <root>/<name>/<version>/<artifact>/...                e.g. fast_align/ parameters, listed in the manifest
    <root>/<name>/_staging/<version>/<writer>/...         private folder of a writer (see version_writer.py)
    <root>/<name>/_pins/<version>                         a pinned version (never pruned)

Guarantees:

* **Immutable, atomic publish.** Writers stage in private folders and publish by one step that fails
  when the version exists (folder rename locally; a lock with a lease plus an exclusive create of the
  manifest on object stores); ``latest`` is repointed afterwards. Readers resolve ``latest`` ->
  manifest -> shard files, so they see a complete old version or a complete new one, never a mix,
  and a published folder is never written again.
* **Resume.** The version id is derived from (name, config hash, inputs and their fingerprints), so a
  rerun after a crash reopens the same version and adopts the shards any earlier writer completed
  (size and SHA-256 checked).
* **Confined, checked reads.** Manifest paths are relative paths inside a version folder (a manifest
  naming ``../x`` or ``/x`` is refused); every read of a published version (``read_table``, ``read_rejects``,
  ``read_ray``, ``to_hf``, export, artifacts, a refresh's reuse) reads only the files its manifest lists and checks
  their size and SHA-256 (``CorruptVersionError``: one line naming the file, with the hint ``interlingua corpus
  verify NAME@VERSION``); ``verify`` checks every file and names each that differs.
* **No symbolic link is followed.** A store may be shared: on a local disk every folder and file below the root
  is listed, written and deleted without following a link (``no_follow``), so a link planted in the store never
  makes a writer write into, or delete, what it points to; a reader refuses a corpus or version folder that is a
  link (``_unlinked_dir``) before it reads the latest pointer, a manifest or a file the manifest lists, and a file
  that is a link when it opens it (``self.fs`` reads no file below the root through a link: ``no_follow.reading_fs``).
* **Nothing disappears silently.** Rejected rows are kept per shard with their operator and
  reason, and counted by reason and by operator in the manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from fsspec import AbstractFileSystem
from fsspec.implementations.local import LocalFileSystem
from pydantic import ValidationError

from interlingua.core.integrity import (  # CorruptVersionError: the store's error, defined in core for every reader
    MANIFEST_MAX_BYTES,
    POINTER_MAX_BYTES,
    CorruptVersionError,
    check_file,
    file_identity,
    file_problem,
    file_size,
    mismatch,
    read_capped,
    read_checked,
)
from interlingua.core.no_follow import StoreFolders, reading_fs
from interlingua.core.parquet_read import read_parquet
from interlingua.core.url_filesystems import url_filesystem
from interlingua.operators.corpus.manifest import (
    InputFingerprint,
    Lineage,
    Manifest,
    VersionSummary,
    config_hash,
)
from interlingua.operators.corpus.shards import sha256_bytes
from interlingua.operators.corpus.version_writer import MANIFEST_FILE, VersionBusyError, VersionWriter

if TYPE_CHECKING:
    import datasets
    import ray.data

LATEST = "latest"
#: Columns that name a row's language(s) in the corpora the workflows write.
LANGUAGE_COLUMNS = ("lang", "src_lang", "tgt_lang")
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
_MANIFEST_FILE = MANIFEST_FILE
IfBusy = Literal["share", "wait", "fail"]


_REFRESH_PROVENANCE: ContextVar[tuple[str, Mapping[str, InputFingerprint], Lineage] | None] = ContextVar(
    "corpus_refresh_provenance", default=None)


@contextmanager
def recording_refresh(name: str, input_fingerprints: Mapping[str, InputFingerprint], lineage: Lineage) -> Iterator[None]:
    """Within the block, ``open_version(name, ...)`` called without a lineage records these fingerprints
    and lineage (in place of fingerprints the workflow took itself): how ``interlingua refresh`` gives
    provenance to workflows that open their version themselves (ease-corpus, amr-corpus). Other corpus
    names are unaffected."""
    token = _REFRESH_PROVENANCE.set((name, dict(input_fingerprints), lineage))
    try:
        yield
    finally:
        _REFRESH_PROVENANCE.reset(token)


class CorpusLookupError(LookupError):
    """A corpus name or version that is not published under the store root."""


#: Checking more bytes than this before a read (``read_ray``, ``verify``) shows a progress bar.
CHECK_PROGRESS_BYTES = 1 << 30


@dataclass(frozen=True)
class FileCheck:
    """One file of a published version as ``CorpusStore.verify`` found it: ``path`` relative to the store root,
    ``status`` ``ok``, ``unchecked`` (its manifest records no SHA-256: an old one; the file is there) or
    ``mismatch``; ``detail`` follows the path in a sentence ("does not match the SHA-256 ...", "is missing")."""

    path: str
    status: Literal["ok", "unchecked", "mismatch"]
    detail: str = ""


class CorpusStore:
    """Read and write versioned corpora under one fsspec root URL.

    ``storage_options`` are passed to fsspec (credentials, endpoint, ...). ``lease_seconds``: how long
    a writer's lease (and the publish lock on object stores) lasts without renewal before another
    writer may take over; ``publish_timeout``: how long a publisher waits for a live lock.
    """

    def __init__(
        self,
        root: str,
        storage_options: Mapping[str, Any] | None = None,
        *,
        lease_seconds: float = 120.0,
        publish_timeout: float = 600.0,
    ) -> None:
        if not isinstance(root, str) or not root.strip():
            raise ValueError(f"root must be a non-empty fsspec URL or path, got {root!r}")
        self.root = root
        fs, root_path = url_filesystem(root, **dict(storage_options or {}))  # an unknown protocol: one line
        self._root_path: str = root_path.rstrip("/")
        self.fs: AbstractFileSystem = reading_fs(fs, self._root_path)  # a file below the root is read through no link
        self._folders = StoreFolders(fs, self._root_path)  # on a local disk, never through a symbolic link
        self.lease_seconds = lease_seconds
        self.publish_timeout = publish_timeout
        # path -> (SHA-256, file_identity) of a local file whose bytes matched that digest, its identity unchanged
        # while they were read: a later read_ray of this store object skips hashing it again while the identity
        # still matches (train: languages(), then read_ray); see _unchanged_since_checked
        self._checked: dict[str, tuple[str, tuple[int, ...]]] = {}

    # -- writing ---------------------------------------------------------------------------

    def open_version(
        self,
        name: str,
        config: Mapping[str, Any],
        inputs: Sequence[str],
        *,
        input_fingerprints: Mapping[str, InputFingerprint] | None = None,
        lineage: Lineage | None = None,
        if_busy: IfBusy = "share",
        wait_timeout: float = 600.0,
    ) -> VersionWriter:
        """Open the version of corpus ``name`` built from ``config`` and ``inputs``.

        The version id is ``v-`` + 12 hex digits of SHA-256 over (name, config hash, inputs in
        order, and ``input_fingerprints`` when given), so reruns with the same arguments reopen the
        same version: an unfinished one is resumed (see ``VersionWriter.is_complete``), a published
        one comes back with ``writer.published == True`` and its manifest. The workflows pass their input
        files' fingerprints (``input_fingerprints.build_fingerprints``): an input rewritten in place gives
        another version.

        Another live writer of the same version: ``if_busy="share"`` works alongside it (its finished
        shards are adopted; the first to publish wins), ``"wait"`` waits until it publishes or its
        lease expires (up to ``wait_timeout`` s), ``"fail"`` raises ``VersionBusyError``.
        """
        name = _validate_name(name)
        if isinstance(inputs, str) or not all(isinstance(item, str) for item in inputs):
            raise ValueError(f"inputs must be a list of URL strings, got {inputs!r}")
        if if_busy not in ("share", "wait", "fail"):
            raise ValueError(f"if_busy must be 'share', 'wait' or 'fail', got {if_busy!r}")
        input_list = list(inputs)
        ambient = _REFRESH_PROVENANCE.get()
        if ambient is not None and ambient[0] == name and lineage is None:  # the refresh's record is the one compared
            input_fingerprints, lineage = ambient[1], ambient[2]
        fingerprints = {url: InputFingerprint.model_validate(fp) for url, fp in (input_fingerprints or {}).items()}
        digest = config_hash(config)
        identity: dict[str, Any] = {"name": name, "config_hash": digest, "inputs": input_list}
        if fingerprints:
            identity["fingerprints"] = {url: fp.model_dump() for url, fp in sorted(fingerprints.items())}
        version = "v-" + sha256_bytes(json.dumps(identity, sort_keys=True).encode("utf-8"))[:12]
        writer = self._writer(name, version, config, digest, input_list, fingerprints, lineage)
        if writer.published or if_busy == "share":
            return writer
        live = writer.live_writers()
        if live and if_busy == "fail":
            self._discard(writer)
            holder = live[0]
            raise VersionBusyError(
                f"{name}/{version} is being written by {holder.get('owner')} (pid {holder.get('pid')} on "
                f"{holder.get('host')}); wait for it (if_busy='wait'), or run again when it has published"
            )
        import time

        deadline = time.monotonic() + wait_timeout
        while live and time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.05, self.lease_seconds / 20)))
            if self._read_manifest_if_published(name, version) is not None:
                self._discard(writer)
                return self._writer(name, version, config, digest, input_list, fingerprints, lineage)
            live = writer.live_writers()
        if live:
            self._discard(writer)
            raise VersionBusyError(f"waited {wait_timeout:.0f} s for the other writer of {name}/{version}; it is still working")
        return writer

    def _writer(self, name, version, config, digest, inputs, fingerprints, lineage) -> VersionWriter:
        existing = self._read_manifest_if_published(name, version)
        return VersionWriter(self, name, version, dict(config), digest, inputs, existing,
                             input_fingerprints=fingerprints, lineage=lineage)

    def _discard(self, writer: VersionWriter) -> None:
        if not writer.published:
            self._folders.remove_tree(writer.staging_dir)

    # -- reading ---------------------------------------------------------------------------

    def root_is_missing(self) -> bool:
        """Whether the root is a folder on a local disk that does not exist. An object store has no folders: a
        prefix with nothing under it is an empty store."""
        return self._folders.local and not self.fs.exists(self._root_path)

    def corpus_names(self) -> list[str]:
        """Names of the corpora with at least one published version, sorted."""
        return self._published_names(self._folders.child_dirs(self._root_path))

    def _published_names(self, folders: Sequence[str]) -> list[str]:
        """The ``folders`` of the root that hold a published corpus (a ``latest`` pointer)."""
        return [name for name in folders if self.fs.exists(self._latest_path(name))]

    def versions(self, name: str) -> list[str]:
        """Published version ids of ``name``, oldest first."""
        manifests = self._published_manifests(_validate_name(name))
        return [manifest.version for manifest in manifests]

    def latest_version(self, name: str) -> str:
        """The version id the ``latest`` pointer of ``name`` names."""
        name = _validate_name(name)
        try:
            data = read_capped(self.fs, f"{self._unlinked_dir(name)}/{LATEST}", POINTER_MAX_BYTES, "latest pointer")
        except FileNotFoundError:
            raise CorpusLookupError(self._unknown_corpus_message(name)) from None
        return data.decode("utf-8", errors="replace").strip()

    def manifest(self, name: str, version: str = LATEST) -> Manifest:
        """The manifest of a published version (``"latest"`` follows the pointer)."""
        name = _validate_name(name)
        resolved = self.latest_version(name) if version == LATEST else version
        manifest = self._read_manifest_if_published(name, resolved) if _NAME_PATTERN.match(resolved) else None
        if manifest is None and version == LATEST:
            from interlingua.core.console import printable

            published = ", ".join(self.versions(name)) or "none"
            raise CorpusLookupError(
                f"the latest pointer of corpus {name!r} under {self.root!r} names {printable(resolved[:80])!r}, which is "
                f"not a published version of {name!r} (the pointer is damaged); published versions: {published} "
                "(hint: read one by its id)")
        if manifest is None:
            published = ", ".join(self.versions(name)) or "none"
            raise CorpusLookupError(
                f"unknown version {version!r} of corpus {name!r} under {self.root!r}; "
                f"published versions: {published} (or {LATEST!r})"
            )
        return manifest

    def list_versions(self, name: str | None = None, problems: list[str] | None = None) -> list[VersionSummary]:
        """Summaries of every published version (of ``name`` only, if given), by name then age. With ``problems``
        (a list) and no ``name``, a version whose manifest is refused (:class:`CorruptVersionError`), or a corpus
        whose folder is, is left out and the reason appended there: one damaged version of a shared store hides
        neither the other versions of its corpus nor the other corpora. A symbolic link at the root named like a
        corpus is refused (:class:`StoreLinkError`), as pin and prune refuse it."""
        names = [_validate_name(name)] if name is not None else self._listed_names()
        collect = problems if name is None else None
        summaries = []
        for corpus in names:
            try:
                manifests = self._published_manifests(corpus, collect)
            except CorruptVersionError as error:
                if collect is None:
                    raise
                collect.append(f"corpus {corpus!r} left out: {error}")
                continue
            if name is not None and not manifests:
                raise CorpusLookupError(self._unknown_corpus_message(corpus))
            latest = self.latest_version(corpus) if manifests else None
            summaries += [manifest.summary(is_latest=manifest.version == latest) for manifest in manifests]
        return summaries

    def _listed_names(self) -> list[str]:
        """What ``list_versions`` lists: the published corpora and every symbolic link at the root named like one,
        whose listing is then refused (the no-follow opener raises :class:`StoreLinkError` naming it), never skipped."""
        folders, links = self._folders.child_dirs_and_links(self._root_path)  # one listing of the root
        return sorted({*self._published_names(folders), *(link for link in links if _NAME_PATTERN.match(link))})

    def shard_paths(self, name: str, version: str = LATEST) -> list[str]:
        """Filesystem paths (on ``self.fs``) of the version's shard files, in shard order (a shard
        reused by reference lives in the folder of the version that wrote it)."""
        manifest = self.manifest(name, version)
        return [self._file_path(manifest.name, manifest.version, shard) for shard in manifest.shards]

    def read_table(self, name: str, version: str = LATEST, columns: Sequence[str] | None = None) -> pa.Table:
        """All rows of a published version as one Arrow table, shards in order; each shard file's
        SHA-256 is checked against the manifest (``CorruptVersionError`` when it differs)."""
        manifest = self.manifest(name, version)
        if columns is not None:
            unknown = [column for column in columns if column not in manifest.columns]
            if unknown:
                raise ValueError(
                    f"columns {unknown} are not in {name}/{manifest.version}; "
                    f"available: {list(manifest.columns)}"
                )
        tables = [
            self._read_checked(self._file_path(manifest.name, manifest.version, shard), shard.sha256, columns,
                               size=shard.bytes, manifest=manifest)
            for shard in manifest.shards
        ]
        return pa.concat_tables(tables)

    def languages(self, name: str, version: str = LATEST) -> list[str]:
        """The distinct values of the version's language columns (``lang``, ``src_lang``, ``tgt_lang``), sorted;
        [] for a corpus without them."""
        manifest = self.manifest(name, version)
        columns = [c for c in LANGUAGE_COLUMNS if c in manifest.columns]
        if not columns:
            return []
        table = self.read_table(manifest.name, manifest.version, columns=columns)
        return sorted({str(v) for c in columns for v in table.column(c).unique().to_pylist() if v})

    def read_rejects(self, name: str, version: str = LATEST) -> pa.Table:
        """All rejected rows of a published version (``REJECTS_SCHEMA``), shards in order; each file's SHA-256 is
        checked (an old manifest that records none: read unchecked, as ``verify`` says)."""
        manifest = self.manifest(name, version)
        tables = [
            self._read_checked(self._file_path(manifest.name, manifest.version, shard, shard.rejects_path),
                               shard.rejects_sha256, None, manifest=manifest)
            for shard in manifest.shards
            if shard.rejects_path is not None
        ]
        return pa.concat_tables(tables) if tables else REJECTS_SCHEMA.empty_table()

    def verify(self, name: str, version: str = LATEST, *,
               on_file: Callable[[FileCheck], object] | None = None) -> Manifest:
        """Check every file the manifest names (shards, rejects, artifacts) against its size and SHA-256;
        ``on_file`` gets each file's :class:`FileCheck` as it is checked (a progress bar above 1 GiB). Raise
        ``CorruptVersionError`` naming each file that differs; a file whose manifest records no SHA-256 (an old
        manifest's rejects) is ``unchecked``, not an error."""
        manifest = self.manifest(name, version)
        files = self._manifest_files(manifest)
        problems: list[FileCheck] = []
        with self._checking(manifest, sum(size or 0 for _, _, size, _ in files)) as progress:
            for label, path, size, sha256 in files:
                if sha256 is None:
                    problem = mismatch(file_size(self.fs, path), size)
                    check = FileCheck(label, "unchecked", "has no SHA-256 in its manifest (an older interlingua "
                                                          "wrote it)") if problem is None else None
                else:
                    problem = file_problem(self.fs, path, size, sha256, progress)
                    check = FileCheck(label, "ok") if problem is None else None
                if check is None:
                    check = FileCheck(label, "mismatch", problem)
                    problems.append(check)
                if on_file is not None:
                    on_file(check)
        if problems:
            listed = "; ".join(f"{check.path} {check.detail}" for check in problems)
            raise CorruptVersionError(f"{len(problems)} of the {len(files)} files of "
                                      f"{manifest.name}@{manifest.version} do not match its manifest: {listed}")
        return manifest

    def read_ray(self, name: str, version: str = LATEST, columns: Sequence[str] | None = None) -> ray.data.Dataset:
        """A Ray Data dataset over the version's shard files (``ray.data.read_parquet`` of the files its manifest
        lists, nothing else); every shard's size and SHA-256 are checked first, once per file (a progress bar when
        that is more than 1 GiB): ``CorruptVersionError`` when one differs. A shard on a local disk that this store
        object already checked (``read_table``, ``languages``) is not hashed again while its device, inode, size,
        mtime and ctime are those it had when its checked bytes were read; a file rewritten or replaced since gets a
        new ctime or inode and is hashed again. The window is the one every check-then-read has: bytes changed
        after this check (or a rewrite within the file system's ctime granularity of the first read) reach the Ray
        read tasks, which read the files themselves.

        ``memory://`` stores are per-process, so Ray workers cannot read them: use ``read_table``.

        The dataset keeps the shards' order (``preserve_order``): parallel read tasks finish in any order, and a
        seeded ``random_shuffle`` or a split over the blocks would otherwise differ from run to run.
        """
        if "memory" in _protocols(self.fs):
            raise ValueError(f"read_ray cannot read the per-process store {self.root!r}; use read_table")
        import pyarrow.fs as arrow_fs
        import ray.data

        manifest = self.manifest(name, version)
        paths = [self._file_path(manifest.name, manifest.version, shard) for shard in manifest.shards]
        records = dict(zip(paths, manifest.shards))  # a file listed twice is hashed once
        records = {path: shard for path, shard in records.items()
                   if not self._unchanged_since_checked(path, shard.sha256)}  # this store object hashed it already
        with self._checking(manifest, sum(shard.bytes for shard in records.values())) as progress:
            for path, shard in records.items():
                before = file_identity(self.fs, path)
                check_file(self.fs, path, shard.bytes, shard.sha256, manifest.name, manifest.version, progress)
                self._remember_checked(path, shard.sha256, before)
        filesystem = (
            arrow_fs.LocalFileSystem()
            if isinstance(self.fs, LocalFileSystem)
            else arrow_fs.PyFileSystem(arrow_fs.FSSpecHandler(self.fs))
        )
        dataset = ray.data.read_parquet(paths, filesystem=filesystem, columns=list(columns) if columns else None)
        dataset.context.execution_options.preserve_order = True
        return dataset

    def to_hf(self, name: str, version: str = LATEST) -> datasets.DatasetDict:
        """The version as a ``datasets.DatasetDict``: ``train`` (the rows) and ``rejects``."""
        import datasets
        from datasets.table import InMemoryTable

        manifest = self.manifest(name, version)
        info = datasets.DatasetInfo(description=f"{manifest.name} {manifest.version} (interlingua corpus store)")
        return datasets.DatasetDict(
            {
                "train": datasets.Dataset(InMemoryTable(self.read_table(name, manifest.version)), info=info),
                "rejects": datasets.Dataset(InMemoryTable(self.read_rejects(name, manifest.version)), info=info),
            }
        )

    # -- pins, retention ---------------------------------------------------------------------

    def pin(self, name: str, version: str) -> str:
        """Pin a published version (``latest`` resolves to its id): it is never pruned. Returns the id.

        The pin file is written beside and renamed over (``_write_atomically``): a symbolic link put where it
        belongs is replaced, never written through."""
        manifest = self.manifest(name, version)
        pin_dir = f"{self._name_dir(manifest.name)}/_pins"
        self._folders.makedirs(pin_dir)
        self._write_atomically(f"{pin_dir}/{manifest.version}", b"pinned\n")
        return manifest.version

    def unpin(self, name: str, version: str) -> None:
        path = f"{self._name_dir(_validate_name(name))}/_pins/{version}"
        if _NAME_PATTERN.match(version):
            self._folders.remove_file(path)

    def pins(self, name: str) -> list[str]:
        """Pinned version ids of ``name``, sorted. A pin that is a symbolic link is refused (:class:`StoreLinkError`
        naming it), never skipped: prune would delete the version it pins."""
        pin_dir = f"{self._name_dir(_validate_name(name))}/_pins"
        for link in self._folders.child_dirs_and_links(pin_dir)[1]:
            if _NAME_PATTERN.match(link):
                self._folders.refuse_links(f"{pin_dir}/{link}")
        return [n for n in self._folders.files(pin_dir) if _NAME_PATTERN.match(n)]

    def prune(self, name: str, keep_last: int, protected: Sequence[str] = (), dry_run: bool = False) -> dict[str, Any]:
        """Delete published versions of ``name`` beyond the ``keep_last`` newest, except those that
        ``latest``, a pin, ``protected`` (e.g. versions registered models were trained on) or a kept
        version's reused shards (``stored_in``) refer to. Returns ``{"deleted", "kept": {version: reason}}``."""
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1:
            raise ValueError(f"keep_last must be an integer >= 1, got {keep_last!r}")
        manifests = self._published_manifests(_validate_name(name))
        reasons: dict[str, str] = {}
        for manifest in manifests[-keep_last:]:
            reasons[manifest.version] = f"one of the last {keep_last}"
        if manifests:
            reasons[self.latest_version(name)] = "latest"
        for version in self.pins(name):
            reasons[version] = "pinned"
        for version in protected:
            reasons.setdefault(version, "referenced by a registered model")
        by_version = {m.version: m for m in manifests}
        changed = True
        while changed:  # versions holding files that kept versions reference are kept too
            changed = False
            for version in list(reasons):
                manifest = by_version.get(version)
                for item in [*(manifest.shards if manifest else ()), *(manifest.artifacts if manifest else ())]:
                    if item.stored_in is not None and item.stored_in not in reasons:
                        reasons[item.stored_in] = f"holds files of {version}"
                        changed = True
        deleted = [m.version for m in manifests if m.version not in reasons]
        if not dry_run:
            for version in deleted:  # the manifest first: a half-deleted folder is never a published version
                self._folders.remove_file(f"{self._version_dir(name, version)}/{_MANIFEST_FILE}")
                self._folders.remove_tree(self._version_dir(name, version))
        return {"deleted": deleted, "kept": {v: reasons[v] for v in by_version if v in reasons}}

    # -- paths and helpers shared with VersionWriter -----------------------------------------

    def _name_dir(self, name: str) -> str:
        return f"{self._root_path}/{name}"

    def _latest_path(self, name: str) -> str:
        return f"{self._name_dir(name)}/{LATEST}"

    def _version_dir(self, name: str, version: str) -> str:
        return f"{self._name_dir(name)}/{version}"

    def _staging_root(self, name: str, version: str) -> str:
        return f"{self._name_dir(name)}/_staging/{version}"

    def _file_path(self, name: str, version: str, record: Any, relative: str | None = None) -> str:
        """Where a manifest's file lives: its own version folder, or the one named by ``stored_in`` (neither read
        through a link: :meth:`_unlinked_dir`)."""
        holder = record.stored_in or version
        return f"{self._unlinked_dir(name, holder)}/{relative or record.path}"

    def _unlinked_dir(self, name: str, version: str | None = None) -> str:
        """The folder of corpus ``name`` (of its ``version`` when given) that a reader is about to read from, checked
        first: :class:`StoreLinkError` naming the link when it, or the corpus's folder, is a symbolic link. Every read
        of the store (the latest pointer, a manifest, the files it lists) goes through here, so show, diff, verify,
        export and the workflows' reads refuse a linked folder as list, pin, prune and writes do."""
        folder = self._name_dir(name) if version is None else self._version_dir(name, version)
        self._folders.refuse_links(folder)
        return folder

    def _point_latest(self, name: str, version: str) -> None:
        self._write_atomically(self._latest_path(name), f"{version}\n".encode("utf-8"))

    def _read_manifest_if_published(self, name: str, version: str) -> Manifest | None:
        path = f"{self._unlinked_dir(name, version)}/{_MANIFEST_FILE}"
        try:
            text = read_capped(self.fs, path, MANIFEST_MAX_BYTES, "manifest")
        except FileNotFoundError:
            return None
        try:
            manifest = Manifest.from_json(text)
        except ValidationError as error:
            problems = "; ".join(_validation_problem(problem) for problem in error.errors()[:3])
            raise CorruptVersionError(f"refusing the manifest {path}: {problems}") from None
        if manifest.name != name or manifest.version != version:
            raise CorruptVersionError(f"refusing the manifest {path}: it names {manifest.name}/{manifest.version}")
        return manifest

    def _published_manifests(self, name: str, problems: list[str] | None = None) -> list[Manifest]:
        """The manifests of the versions of ``name``, oldest first. A symbolic link in the corpus's folder named like a
        version is read too, so its manifest read refuses it (:meth:`_unlinked_dir`), never skips it: list and prune
        name a linked version folder as they name a linked corpus folder. A damaged manifest
        (:class:`CorruptVersionError`) is refused, or, with ``problems`` (a list), its version left out and the
        reason appended there."""
        folders, links = self._folders.child_dirs_and_links(self._name_dir(name))  # one listing
        manifests = []
        for child in sorted(c for c in (*folders, *links) if _NAME_PATTERN.match(c)):
            try:
                manifests.append(self._read_manifest_if_published(name, child))
            except CorruptVersionError as error:
                if problems is None:
                    raise
                problems.append(f"version {name}/{child} left out: {error}")
        return sorted((m for m in manifests if m is not None), key=lambda m: (m.created_at, m.version))

    def _read_checked(self, path: str, sha256: str | None, columns: Sequence[str] | None, *, size: int | None = None,
                      manifest: Manifest | None = None) -> pa.Table:
        """The Parquet file at ``path`` whose bytes (those parsed) match ``size`` and ``sha256`` (None: an old
        manifest's rejects, read unchecked), else ``CorruptVersionError`` naming it, for ``manifest``'s version (by
        default the one whose folder holds the file)."""
        name, version = (manifest.name, manifest.version) if manifest is not None else self._holder(path)
        before = file_identity(self.fs, path)
        data = read_checked(self.fs, path, size, sha256, name, version)
        self._remember_checked(path, sha256, before)
        return read_parquet(data, columns)

    def _remember_checked(self, path: str, sha256: str | None, before: tuple[int, ...] | None) -> None:
        """Record that ``path`` (identity ``before``, taken before its bytes were read) matched ``sha256``, unless its
        identity changed while it was read, or it has none (not on a local disk) or no digest."""
        if sha256 is not None and before is not None and file_identity(self.fs, path) == before:
            self._checked[path] = (sha256, before)

    def _unchanged_since_checked(self, path: str, sha256: str | None) -> bool:
        """Whether this store object checked ``path`` against ``sha256`` and the file still has the identity
        (device, inode, size, mtime, ctime) it had then: a file replaced or rewritten since is hashed again."""
        return sha256 is not None and self._checked.get(path) == (sha256, file_identity(self.fs, path))

    def _holder(self, path: str) -> tuple[str, str]:
        """``(name, version)`` of the version folder that holds ``path``."""
        parts = path[len(self._root_path):].strip("/").split("/")
        return (parts[0], parts[1]) if len(parts) > 2 else (path, "?")

    def _manifest_files(self, manifest: Manifest) -> list[tuple[str, str, int | None, str | None]]:
        """``(path relative to the root, path on fs, size, sha256)`` of every file the manifest names: shards and
        their rejects (no recorded size), then artifacts."""
        files = []
        for shard in manifest.shards:
            for relative, size, sha256 in ((shard.path, shard.bytes, shard.sha256),
                                           (shard.rejects_path, None, shard.rejects_sha256)):
                if relative is not None:
                    files.append((f"{manifest.name}/{shard.stored_in or manifest.version}/{relative}",
                                  self._file_path(manifest.name, manifest.version, shard, relative), size, sha256))
        files += [(f"{manifest.name}/{item.stored_in or manifest.version}/{item.path}",
                   self._file_path(manifest.name, manifest.version, item), item.bytes, item.sha256)
                  for item in manifest.artifacts]
        return files

    @contextmanager
    def _checking(self, manifest: Manifest, total_bytes: int) -> Iterator[Callable[[int], object] | None]:
        """A progress callback (bytes hashed) on a bar when ``total_bytes`` is worth one, else None."""
        if total_bytes < CHECK_PROGRESS_BYTES:
            yield None
            return
        from interlingua.core.progress import progress_bar

        with progress_bar(total=total_bytes, desc=f"checking {manifest.name}@{manifest.version}", unit="B",
                          unit_scale=True, unit_divisor=1024) as bar:
            yield bar.update

    def _unknown_corpus_message(self, name: str) -> str:
        known = ", ".join(self.corpus_names()) or "none"
        return f"no published corpus named {name!r} under {self.root!r}; published corpora: {known}"

    def _write_atomically(self, path: str, data: bytes) -> None:
        """Readers of ``path`` see the old content or ``data``, never a prefix of it (on a local disk a file beside
        it renamed over it: a symbolic link at ``path`` is replaced, never written through)."""
        self._folders.write_atomically(path, data)


def _validate_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_PATTERN.match(name) or name == LATEST:
        raise ValueError(
            f"corpus name must be letters, digits, '.', '_' or '-' (not starting with punctuation, "
            f"not {LATEST!r}), got {name!r}"
        )
    return name


def _validation_problem(problem: Mapping[str, Any]) -> str:
    """One problem pydantic found in a manifest: ``field.path: what is wrong``, or what is wrong alone when it
    concerns the whole file (invalid JSON, totals that disagree with the shards), which has no field to name."""
    field = ".".join(map(str, problem["loc"]))
    what = problem["msg"].removeprefix("Value error, ")
    return f"{field}: {what}" if field else what


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
    """The table as Parquet (zstd). An empty table is written with no row group: ``write_table`` writes one of
    0 rows, which Hugging Face ``datasets`` refuses ("BatchSize must be greater than 0"), failing
    ``load_dataset`` on a version with a shard whose rows were all rejected."""
    sink = pa.BufferOutputStream()
    if table.num_rows == 0:
        pq.ParquetWriter(sink, table.schema, compression="zstd").close()
    else:
        pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def _protocols(fs: AbstractFileSystem) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)
