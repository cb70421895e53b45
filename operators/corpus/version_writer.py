"""Writing one corpus version: a private staging folder per writer, then one atomic publish.

Layout of a version being written (``<writer>`` = host-pid-random, unique per ``open_version``)::

    <root>/<name>/_staging/<version>/<writer>/_writer.json          the writer's lease (owner, expires_at)
    <root>/<name>/_staging/<version>/<writer>/data/<shard>.parquet
    <root>/<name>/_staging/<version>/<writer>/rejects/<shard>.parquet
    <root>/<name>/_staging/<version>/<writer>/_complete/<shard>.json  completion record (written last)
    <root>/<name>/_staging/<version>/<writer>/_artifacts/<folder>.json + <folder>/...   e.g. fast_align/

Publishing moves the staged files into ``<root>/<name>/<version>/`` by one step that fails when the
version exists: on a local disk ``os.rename`` of the staging folder (refused when the target is a
non-empty folder); elsewhere, under a lock file with an owner and a lease (``lease.py``), a copy of the
staged files and an exclusive create of ``manifest.json``. The loser of a race gets the winner's
manifest back and drops its staging; a published folder is never written again.

Resume: a writer asks ``is_complete(shard)``; a shard another writer (a crashed run, or one working
now) completed is adopted after its size and SHA-256 are checked (hard link on a local disk, a copy
elsewhere), so reruns continue where any earlier run stopped.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from fsspec.implementations.local import LocalFileSystem
from pydantic import ValidationError

from interlingua.core.integrity import (
    POINTER_MAX_BYTES,
    RECORD_MAX_BYTES,
    OversizedFileError,
    read_capped,
)
from interlingua.core.no_follow import StoreLinkError
from interlingua.core.processes import process_alive
from interlingua.operators.corpus import lease as leases
from interlingua.operators.corpus.dataset_card import CARD_FILE, dataset_card
from interlingua.operators.corpus.manifest import (
    InputFingerprint,
    Lineage,
    Manifest,
    PartialInput,
    ShardCompletion,
    ShardRecord,
    StoredFile,
    confined_path,
    current_code_version,
    sum_counts,
)
from interlingua.operators.corpus.shards import sha256_bytes, validate_shard_id

if TYPE_CHECKING:
    from interlingua.operators.corpus.store import CorpusStore

MANIFEST_FILE = "manifest.json"
LEASE_FILE = "_writer.json"

logger = logging.getLogger(__name__)


class VersionBusyError(RuntimeError):
    """Another live writer is building the same version and the caller asked not to share."""


def new_writer_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class VersionWriter:
    """Writes the shards of one corpus version in a private staging folder and publishes it.
    Obtain it from ``CorpusStore.open_version``."""

    def __init__(
        self,
        store: CorpusStore,
        name: str,
        version: str,
        config: dict[str, Any],
        config_hash: str,
        inputs: list[str],
        manifest: Manifest | None,
        input_fingerprints: Mapping[str, InputFingerprint] | None = None,
        lineage: Lineage | None = None,
        writer_id: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.config = config
        self.config_hash = config_hash
        self.inputs = inputs
        self.input_fingerprints = dict(input_fingerprints or {})
        self.lineage = lineage
        self.manifest = manifest
        self.writer_id = writer_id or new_writer_id()
        self.lost_race = False
        """True when another writer published this version first (``publish`` returned its manifest)."""
        self._store = store
        self._fs = store.fs
        self._folders = store._folders  # on a local disk, never through a symbolic link
        self._local = isinstance(store.fs, LocalFileSystem)
        self._version_dir = store._version_dir(name, version)
        self._staging_root = store._staging_root(name, version)
        self._dir = f"{self._staging_root}/{self.writer_id}"
        self._run_counters: Counter[str] = Counter()
        self._partial_inputs: list[PartialInput] = []
        self._lease_renewed = 0.0
        self._checked_files: set[tuple[str, int, str]] = set()
        if manifest is None:
            self._replace_staging_links()
            self._renew_writer_lease(force=True)

    # -- state --------------------------------------------------------------------------------

    @property
    def published(self) -> bool:
        """True when this version's manifest exists (published now or by an earlier run)."""
        return self.manifest is not None

    @property
    def staging_dir(self) -> str:
        """This writer's private folder (on ``store.fs``) while the version is unpublished."""
        return self._dir

    def is_complete(self, shard_id: str) -> bool:
        """True when the shard is fully written (data file plus matching completion record) in this
        writer's staging, or in another writer's (then adopted after its checksum is verified);
        always True for the shards of a published version."""
        validate_shard_id(shard_id)
        if self.manifest is not None:
            return any(shard.shard_id == shard_id for shard in self.manifest.shards)
        return self._completion(self._dir, shard_id) is not None or self._adopt(shard_id)

    def completed_shards(self) -> list[str]:
        """Ids of the complete shards (this writer's and those adopted from other writers), sorted."""
        if self.manifest is not None:
            return [shard.shard_id for shard in self.manifest.shards]
        candidates = set(self._completion_ids(self._dir))
        for other in self._other_writer_dirs():
            candidates.update(self._completion_ids(other))
        return sorted(shard_id for shard_id in candidates if self.is_complete(shard_id))

    def live_writers(self) -> list[dict[str, Any]]:
        """Other writers of this version whose lease has not expired (owner, host, pid, expires_at)."""
        paths = [f"{other}/{LEASE_FILE}" for other in self._other_writer_dirs()]
        return [info for info, path in ((self._read_json(path), path) for path in paths) if _is_live(info, path)]

    # -- writing ------------------------------------------------------------------------------

    def write_shard(
        self,
        shard_id: str,
        table: pa.Table,
        rejects: Any = None,
        counters: Mapping[str, int] | None = None,
        *,
        input: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> ShardRecord:
        """Write one shard's rows, its rejected rows and its counters, then its completion record.

        ``counters`` (e.g. rows seen / kept per filter) are stored with the shard, so they are
        summed into the manifest correctly even when the run is resumed. ``input`` names the input
        the shard was built from (incremental refresh reuses shards per input); ``annotations`` are
        free string facts about the shard. Rewriting a shard replaces it. Returns its record.
        """
        from interlingua.operators.corpus.store import _parquet_bytes, _rejects_table, _validate_counts

        validate_shard_id(shard_id)
        self._require_unpublished("write_shard")
        if not isinstance(table, pa.Table):
            raise TypeError(f"table must be a pyarrow.Table, got {type(table).__name__}")
        rejects_table = _rejects_table(shard_id, rejects)
        shard_counters = _validate_counts(counters or {}, "counters")
        self._renew_writer_lease()

        # the shard may be being replaced: unmark it first
        self._folders.remove_file(self._completion_path(self._dir, shard_id))

        data = _parquet_bytes(table)
        self._put(f"data/{shard_id}.parquet", data)
        rejects_path = rejects_sha = None
        if rejects_table.num_rows:
            rejects_path = f"rejects/{shard_id}.parquet"
            rejects_data = _parquet_bytes(rejects_table)
            rejects_sha = sha256_bytes(rejects_data)
            self._put(rejects_path, rejects_data)
        by_reason = dict(sorted(Counter(rejects_table.column("reason").to_pylist()).items()))
        by_operator = dict(sorted(Counter(rejects_table.column("operator").to_pylist()).items()))
        record = ShardRecord(
            shard_id=shard_id,
            path=f"data/{shard_id}.parquet",
            rows=table.num_rows,
            bytes=len(data),
            sha256=sha256_bytes(data),
            rejects_path=rejects_path,
            reject_rows=rejects_table.num_rows,
            rejects_sha256=rejects_sha,
            input=input,
            counters=shard_counters,
            rejects_by_reason=by_reason,
            rejects_by_operator=by_operator,
            annotations=dict(annotations or {}),
        )
        columns = {field.name: str(field.type) for field in table.schema}
        self._write_completion(record, columns)
        return record

    def reuse_shard(self, shard: ShardRecord, source: Manifest) -> ShardRecord:
        """Take over a published shard of another version of this corpus, unchanged, without copying
        its bytes: a hard link on a local disk, else a reference (``stored_in``) to the folder that
        holds it. Its checksum is re-checked whenever the new version is read."""
        self._require_unpublished("reuse_shard")
        if source.name != self.name or shard not in source.shards:
            raise ValueError(f"shard {shard.shard_id!r} is not a shard of {self.name}/{source.version}")
        self._renew_writer_lease()
        holder = shard.stored_in or source.version
        record = shard.model_copy(update={"reused_from": source.version, "stored_in": holder})
        if self._local:
            for relative in (shard.path, shard.rejects_path):
                if relative is not None:
                    self._link(f"{self._store._version_dir(self.name, holder)}/{relative}", f"{self._dir}/{relative}")
            record = record.model_copy(update={"stored_in": None})
        self._write_completion(record, dict(source.columns))
        return record

    def add_artifact(self, folder: str, local_dir: str) -> list[StoredFile]:
        """Keep the files of ``local_dir`` (flat) in the version under ``folder/`` (e.g. fast_align
        parameters), each recorded in the manifest with its size and SHA-256."""
        self._require_unpublished("add_artifact")
        confined_path(folder)
        records = []
        for file_name in sorted(os.listdir(local_dir)):
            with open(os.path.join(local_dir, file_name), "rb") as handle:
                data = handle.read()
            relative = confined_path(f"{folder}/{file_name}")
            self._put(relative, data)
            records.append(StoredFile(path=relative, bytes=len(data), sha256=sha256_bytes(data)))
        self._write_artifact_record(folder, records)
        return records

    def reuse_artifact(self, folder: str, source: Manifest) -> list[StoredFile]:
        """Take over ``folder/`` of a published version of this corpus: hard links on a local disk,
        else a server-side copy (artifacts are small; a folder that tools read must stay whole). Each file's size
        and SHA-256 are checked against ``source``'s manifest first (``CorruptVersionError`` naming it)."""
        self._require_unpublished("reuse_artifact")
        files = [f for f in source.artifacts if f.path.split("/", 1)[0] == folder]
        if source.name != self.name or not files:
            raise ValueError(f"{source.name}/{source.version} has no artifact folder {folder!r}")
        for item in files:
            path = self._store._file_path(self.name, source.version, item)
            self._check_published(path, item, source)
            self._copy_or_link(path, f"{self._dir}/{item.path}")
        records = [item.model_copy(update={"stored_in": None}) for item in files]
        self._write_artifact_record(folder, records)
        return records

    def artifact_files(self, folder: str) -> list[tuple[StoredFile, str]]:
        """``(record, path on store.fs)`` of each file of ``folder/`` in this version (published: its size and
        SHA-256 checked against the manifest, ``CorruptVersionError`` naming one that differs; staged by this writer;
        or adopted from another writer after checking sizes and checksums); [] when absent."""
        confined_path(folder)
        if self.manifest is not None:
            files = [f for f in self.manifest.artifacts if f.path.split("/", 1)[0] == folder]
            paths = [(f, self._store._file_path(self.name, self.version, f)) for f in files]
            for record, path in paths:
                self._check_published(path, record, self.manifest)
            return paths
        records = self._artifact_record(self._dir, folder)
        if records is None:
            for other in self._other_writer_dirs():
                found = self._artifact_record(other, folder)
                if found is not None and all(self._verified(other, f) for f in found):
                    for item in found:
                        if item.stored_in is None:
                            self._copy_or_link(f"{other}/{item.path}", f"{self._dir}/{item.path}")
                    self._write_artifact_record(folder, found)
                    records = found
                    break
        return [(f, self._staged_file_path(f)) for f in records or []]

    def add_counters(self, counters: Mapping[str, int]) -> None:
        """Add run-level counts to the manifest's ``counters`` (summed with the shards' counters).

        These live in memory until ``publish``: counts that must survive a resume belong in
        ``write_shard(..., counters=...)``.
        """
        from interlingua.operators.corpus.store import _validate_counts

        self._require_unpublished("add_counters")
        self._run_counters.update(_validate_counts(counters, "counters"))

    # -- publishing ---------------------------------------------------------------------------

    def mark_partial(self, input_url: str, reason: str, offset: int | None = None) -> None:
        """Record that ``input_url`` was read only in part; the manifest lists it and ``partial`` is True."""
        self._require_unpublished("mark_partial")
        self._partial_inputs.append(PartialInput(input=input_url, reason=reason, offset=offset))

    def publish(self, expected_shards: Iterable[str] | None = None) -> Manifest:
        """Publish the staged version by one atomic step that fails if the version exists, then
        point ``latest`` at it.

        ``expected_shards`` (the plan's ids) makes publishing refuse while any planned shard is
        incomplete or an unplanned one exists. When another writer published this version first,
        its manifest is returned (``lost_race`` is set) and this writer's staging is removed.
        Publishing an already published version only repoints ``latest`` at it.
        """
        expected = None if expected_shards is None else sorted(validate_shard_id(s) for s in expected_shards)
        if self.manifest is not None:
            if expected is not None:
                self._check_expected(expected, self.completed_shards())
            self._store._point_latest(self.name, self.version)
            return self.manifest
        if expected is not None:
            for shard_id in expected:
                self.is_complete(shard_id)  # adopt what other writers finished meanwhile
        manifest = self._build_manifest(expected)
        winner = self._publish_by_rename(manifest) if self._local else self._publish_under_lock(manifest)
        self.manifest = winner
        if winner is manifest:
            self._store._point_latest(self.name, self.version)
        else:
            self.lost_race = True
            self._remove_dir(self._dir)
        self._remove_stale_staging()
        return winner

    def _publish_by_rename(self, manifest: Manifest) -> Manifest:
        self._put(CARD_FILE, dataset_card(manifest).encode("utf-8"))
        self._put(MANIFEST_FILE, manifest.to_json().encode("utf-8"))
        self._folders.remove_file(f"{self._dir}/{LEASE_FILE}")
        try:
            self._folders.rename_dir(self._dir, self._version_dir)
        except OSError as error:
            existing = self._store._read_manifest_if_published(self.name, self.version)
            if existing is None:
                raise RuntimeError(
                    f"cannot publish {self.name}/{self.version}: {self._version_dir} exists without a manifest "
                    f"({error.strerror}); it is not a published version (left by an older interlingua?) — remove it"
                ) from error
            return existing
        return manifest

    def _publish_under_lock(self, manifest: Manifest) -> Manifest:
        lock_path = f"{self._store._name_dir(self.name)}/_locks/{self.version}.lock"
        self._folders.makedirs(lock_path.rsplit("/", 1)[0])

        def published() -> Manifest | None:
            return self._store._read_manifest_if_published(self.name, self.version)

        lease = leases.acquire(self._fs, lock_path, self.writer_id, self._store.lease_seconds,
                               self._store.publish_timeout, give_up=lambda: published() is not None)
        if lease is None:
            return published()
        try:
            existing = published()
            if existing is not None:
                return existing
            own = [f for f in manifest.shards if f.stored_in is None]
            files = [(f.path, f.sha256) for f in own]
            files += [(f.rejects_path, f.rejects_sha256) for f in own if f.rejects_path is not None]
            files += [(f.path, f.sha256) for f in manifest.artifacts if f.stored_in is None]
            renewed = time.monotonic()
            for relative, _sha in files:
                if time.monotonic() - renewed > lease.seconds / 3:
                    lease.renew()
                    renewed = time.monotonic()
                lease.check()
                target = f"{self._version_dir}/{relative}"
                self._fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
                self._fs.copy(f"{self._dir}/{relative}", target)
            self._fs.pipe_file(f"{self._version_dir}/{CARD_FILE}", dataset_card(manifest).encode("utf-8"))
            lease.check()
            if not leases.create_exclusive(self._fs, f"{self._version_dir}/{MANIFEST_FILE}", manifest.to_json().encode("utf-8")):
                return published() or manifest
        finally:
            lease.release()
        self._fs.rm(self._dir, recursive=True)
        return manifest

    def _build_manifest(self, expected: list[str] | None) -> Manifest:
        completions = sorted(self._completions(self._dir), key=lambda completion: completion.shard.shard_id)
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
        shards = tuple(completion.shard for completion in completions)
        artifacts = []
        for folder in self._artifact_folders(self._dir):
            artifacts += self._artifact_record(self._dir, folder) or []
        lineage = self.lineage
        if lineage is not None:
            written = [shard for shard in shards if shard.reused_from is None]
            lineage = lineage.model_copy(update={
                "shards_reused": len(shards) - len(written), "shards_written": len(written),
                "counters": sum_counts([*(shard.counters for shard in written), self._run_counters])})
        return Manifest(
            name=self.name,
            version=self.version,
            created_at=datetime.now(timezone.utc),
            inputs=tuple(self.inputs),
            config=self.config,
            config_hash=self.config_hash,
            code_version=current_code_version(),
            columns=columns,
            shards=shards,
            total_rows=sum(shard.rows for shard in shards),
            rejects_by_reason=sum_counts(_reasons(completion) for completion in completions),
            rejects_by_operator=sum_counts(_operators(completion) for completion in completions),
            counters=sum_counts([*(_counters(completion) for completion in completions), self._run_counters]),
            input_fingerprints=self.input_fingerprints,
            artifacts=tuple(artifacts),
            lineage=lineage,
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

    def _remove_dir(self, path: str, attempts: int = 5) -> None:
        """Remove ``path`` and everything in it while another writer may be removing it too (a losing writer
        drops its own staging as the winner drops it as stale): files vanishing underneath are not errors. On a
        local disk a symbolic link is removed itself, never followed."""
        for _ in range(attempts):
            try:
                self._folders.remove_tree(path)
                return
            except FileNotFoundError:
                continue  # the other remover got there first; look again

    def _remove_stale_staging(self) -> None:
        """After the version exists, other writers' staging is useless: drop those whose lease expired. The
        version is published by now: a folder that cannot be cleaned up is a warning, not an error."""
        try:
            for other in self._other_writer_dirs():
                lease_path = f"{other}/{LEASE_FILE}"
                if not _is_live(self._read_json(lease_path), lease_path):
                    self._remove_dir(other)
        except StoreLinkError as error:
            logger.warning("left the staging of %s/%s as it is: %s", self.name, self.version, error)
            return
        try:
            if not self._folders.child_dirs(self._staging_root) and not self._folders.files(self._staging_root):
                self._folders.remove_empty_dir(self._staging_root)
        except (OSError, StoreLinkError):
            pass  # another writer created its folder meanwhile (or it is gone already)

    def _replace_staging_links(self) -> None:
        """A symbolic link where the staging folders belong (``_staging``, ``_staging/<version>``) is removed (the
        link, not what it points to) and a folder made in its place, with a warning: a writer never writes into,
        lists or deletes through it. A link at the corpus folder itself is refused (``StoreLinkError``)."""
        for path in (self._staging_root.rsplit("/", 1)[0], self._staging_root):
            target = self._folders.unlink_if_link(path)
            if target is not None:
                logger.warning("%s was a symbolic link (to %s), which the corpus store never follows; the link is "
                               "removed and a folder made in its place", path, target)

    # -- completion records, adoption ---------------------------------------------------------

    def _write_completion(self, record: ShardRecord, columns: dict[str, str]) -> None:
        completion = ShardCompletion(shard=record, columns=columns)
        path = self._completion_path(self._dir, record.shard_id)
        self._folders.makedirs(path.rsplit("/", 1)[0])
        self._store._write_atomically(path, completion.to_json().encode("utf-8"))

    def _completions(self, staging: str) -> list[ShardCompletion]:
        completions = [self._completion(staging, shard_id) for shard_id in self._completion_ids(staging)]
        return [completion for completion in completions if completion is not None]

    def _completion_ids(self, staging: str) -> list[str]:
        names = self._folders.files(f"{staging}/_complete")
        return [name.removesuffix(".json") for name in names if name.endswith(".json")]

    def _completion(self, staging: str, shard_id: str, verify: bool = False) -> ShardCompletion | None:
        """The shard's completion record in ``staging`` if the shard is complete there, else None
        (``verify``: also check the files' SHA-256, for shards written by another writer)."""
        try:
            completion = ShardCompletion.from_json(read_capped(self._fs, self._completion_path(staging, shard_id),
                                                               RECORD_MAX_BYTES, "shard completion record"))
        except (FileNotFoundError, ValidationError, ValueError):
            return None  # no record, or a torn or oversized one (CorruptVersionError): the shard is not complete
        shard = completion.shard
        if shard.shard_id != shard_id:
            return None
        data = StoredFile(path=shard.path, bytes=shard.bytes, sha256=shard.sha256, stored_in=shard.stored_in)
        if not self._has_size(staging, data) or (verify and not self._verified(staging, data)):
            return None
        if shard.rejects_path is not None:
            rejects_location = self._location(staging, shard.rejects_path, shard.stored_in)
            if not self._fs.exists(rejects_location):
                return None
            if verify and shard.rejects_sha256 is not None and self._sha256(rejects_location) != shard.rejects_sha256:
                return None
        return completion

    def _adopt(self, shard_id: str) -> bool:
        for other in self._other_writer_dirs():
            completion = self._completion(other, shard_id, verify=True)
            if completion is None:
                continue
            shard = completion.shard
            try:
                if shard.stored_in is None:
                    for relative in (shard.path, shard.rejects_path):
                        if relative is not None:
                            self._copy_or_link(f"{other}/{relative}", f"{self._dir}/{relative}")
            except StoreLinkError as error:  # a link planted in another writer's folder: not adopted
                logger.warning("not adopting shard %s from %s: %s", shard_id, other, error)
                continue
            except FileNotFoundError:  # that writer's folder went meanwhile (it published, or was cleaned up)
                continue
            self._write_completion(shard, completion.columns)
            return True
        return False

    def _other_writer_dirs(self) -> list[str]:
        """Other writers' folders (on a local disk, real folders: a symbolic link is not one)."""
        return [f"{self._staging_root}/{child}" for child in self._folders.child_dirs(self._staging_root)
                if child != self.writer_id]

    # -- artifacts ------------------------------------------------------------------------------

    def _write_artifact_record(self, folder: str, records: list[StoredFile]) -> None:
        path = f"{self._dir}/_artifacts/{folder}.json"
        self._folders.makedirs(path.rsplit("/", 1)[0])
        data = json.dumps([record.model_dump() for record in records], indent=2).encode("utf-8")
        self._store._write_atomically(path, data)

    def _artifact_record(self, staging: str, folder: str) -> list[StoredFile] | None:
        try:
            raw = json.loads(read_capped(self._fs, f"{staging}/_artifacts/{folder}.json", RECORD_MAX_BYTES,
                                         "artifact record"))
            records = [StoredFile.model_validate(item) for item in raw]
        except (FileNotFoundError, ValueError, ValidationError, TypeError):
            return None
        return records if all(self._has_size(staging, record) for record in records) else None

    def _artifact_folders(self, staging: str) -> list[str]:
        names = self._folders.files(f"{staging}/_artifacts")
        return sorted(name.removesuffix(".json") for name in names if name.endswith(".json"))

    def _staged_file_path(self, record: StoredFile) -> str:
        return self._location(self._dir, record.path, record.stored_in)

    # -- file helpers ---------------------------------------------------------------------------

    def _location(self, staging: str, relative: str, stored_in: str | None) -> str:
        if stored_in is None:
            return f"{staging}/{relative}"
        return f"{self._store._version_dir(self.name, stored_in)}/{relative}"

    def _has_size(self, staging: str, record: StoredFile) -> bool:
        """The file is there with the recorded size (on a local disk: a regular file, reached through no link)."""
        location = self._location(staging, record.path, record.stored_in)
        if self._local:
            return self._folders.regular_file_size(location) == record.bytes
        try:
            return self._fs.size(location) == record.bytes
        except FileNotFoundError:
            return False

    def _verified(self, staging: str, record: StoredFile) -> bool:
        try:
            return self._sha256(self._location(staging, record.path, record.stored_in)) == record.sha256
        except FileNotFoundError:
            return False

    def _check_published(self, path: str, record: StoredFile, manifest: Manifest) -> None:
        """Raise ``CorruptVersionError`` unless the published file matches ``record`` of ``manifest`` (checked once
        per writer: the parameters are read by several steps of one build)."""
        from interlingua.core.integrity import check_file

        key = (path, record.bytes, record.sha256)
        if key not in self._checked_files:
            check_file(self._fs, path, record.bytes, record.sha256, manifest.name, manifest.version)
            self._checked_files.add(key)

    def _sha256(self, path: str) -> str:
        from interlingua.operators.corpus.shards import sha256_file

        return sha256_file(self._fs, path)

    def _copy_or_link(self, source: str, target: str) -> None:
        if self._local:
            self._link(source, target)
        else:
            self._fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            self._fs.copy(source, target)

    def _link(self, source: str, target: str) -> None:
        """Hard link (no bytes copied); replaces whatever ``target`` was. A ``source`` that is a symbolic link is
        refused, and no folder on either path is reached through one."""
        self._folders.hard_link(source, target)

    def _completion_path(self, staging: str, shard_id: str) -> str:
        return f"{staging}/_complete/{shard_id}.json"

    def _put(self, relative_path: str, data: bytes) -> None:
        # what was there is removed first (it may be a hard link into a published version, or a symbolic link):
        # never written through; on a local disk no folder on the way is a symbolic link
        path = f"{self._dir}/{relative_path}"
        if not self._local:
            self._fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        self._folders.write(path, data)

    def _read_json(self, path: str) -> dict[str, Any]:
        """A writer lease; {} when it is missing, torn or not a lease (one larger than 4 KiB: with a warning)."""
        try:
            value = json.loads(read_capped(self._fs, path, POINTER_MAX_BYTES, "writer lease"))
        except OversizedFileError as error:
            logger.warning("%s: treated as no lease", error)
            return {}
        except (FileNotFoundError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def _renew_writer_lease(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._lease_renewed < self._store.lease_seconds / 4:
            return
        info = {"owner": self.writer_id, "host": socket.gethostname(), "pid": os.getpid(),
                "expires_at": now + self._store.lease_seconds}
        self._put(LEASE_FILE, json.dumps(info).encode("utf-8"))
        self._lease_renewed = now

    def _require_unpublished(self, action: str) -> None:
        if self.manifest is not None:
            raise RuntimeError(
                f"{action}: {self.name}/{self.version} is already published and immutable; "
                f"change the config or inputs to build a new version"
            )


def _is_live(lease: Mapping[str, Any], path: str = "a writer's folder") -> bool:
    """A writer lease that has not expired and, on this host, whose process still exists. A malformed one (an
    ``expires_at`` that is not a finite number, a pid that is not a process id) is treated as expired, with a
    warning: another writer's folder is anybody's to write in a shared store."""
    if not lease:
        return False
    expires = leases.expiry(dict(lease), path)
    if expires is None or expires < time.time():
        return False
    pid = lease.get("pid")
    if lease.get("host") == socket.gethostname() and isinstance(pid, int) and not isinstance(pid, bool):
        if pid <= 0:  # os.kill(0 or -1, 0) asks about a process group or every process
            logger.warning("%s holds a malformed lease (pid %r): treated as expired", path, pid)
            return False
        try:
            return process_alive(pid)
        except (ValueError, OSError) as error:  # a pid too large for a process id
            logger.warning("%s holds a malformed lease (pid %r: %s): treated as expired", path, pid, error)
            return False
    return True


def _reasons(completion: ShardCompletion) -> Mapping[str, int]:
    return completion.shard.rejects_by_reason or completion.rejects_by_reason


def _operators(completion: ShardCompletion) -> Mapping[str, int]:
    return completion.shard.rejects_by_operator or completion.rejects_by_operator


def _counters(completion: ShardCompletion) -> Mapping[str, int]:
    return completion.shard.counters or completion.counters
