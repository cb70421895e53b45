"""Versioned corpus store: Parquet shards + manifest per version on any fsspec URL.

Writers stage privately and publish atomically (a version, once published, never changes), reruns resume at
shard granularity, and rejected rows are kept and counted. See ``store`` for the layout.
"""

from interlingua.operators.corpus.manifest import (
    CodeVersion,
    InputFingerprint,
    Lineage,
    Manifest,
    ShardCompletion,
    ShardRecord,
    StoredFile,
    VersionSummary,
    config_hash,
)
from interlingua.operators.corpus.shards import ShardSpec, plan_shards, sha256_bytes, sha256_file
from interlingua.operators.corpus.store import (
    LATEST,
    REJECTS_SCHEMA,
    CorpusLookupError,
    CorpusStore,
    CorruptVersionError,
)
from interlingua.operators.corpus.version_writer import VersionBusyError, VersionWriter

__all__ = [
    "LATEST",
    "REJECTS_SCHEMA",
    "CodeVersion",
    "CorpusLookupError",
    "CorpusStore",
    "CorruptVersionError",
    "InputFingerprint",
    "Lineage",
    "StoredFile",
    "VersionBusyError",
    "Manifest",
    "ShardCompletion",
    "ShardRecord",
    "ShardSpec",
    "VersionSummary",
    "VersionWriter",
    "config_hash",
    "plan_shards",
    "sha256_bytes",
    "sha256_file",
]
