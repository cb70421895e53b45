"""Versioned corpus store: Parquet shards + manifest per version on any fsspec URL.

Publishing is atomic (shards, then the manifest, then the ``latest`` pointer), reruns resume at
shard granularity, and rejected rows are kept and counted. See ``store`` for the layout.
"""

from interlingua.operators.corpus.manifest import (
    CodeVersion,
    Manifest,
    ShardCompletion,
    ShardRecord,
    VersionSummary,
    config_hash,
)
from interlingua.operators.corpus.shards import ShardSpec, plan_shards, sha256_bytes, sha256_file
from interlingua.operators.corpus.store import (
    LATEST,
    REJECTS_SCHEMA,
    CorpusLookupError,
    CorpusStore,
    VersionWriter,
)

__all__ = [
    "LATEST",
    "REJECTS_SCHEMA",
    "CodeVersion",
    "CorpusLookupError",
    "CorpusStore",
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
