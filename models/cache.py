"""On-disk embedding cache keyed by (the encoder's identity, sha256 of the text).

The identity (:func:`~interlingua.models.identity.encoder_identity`) follows the model's content where the
encoder knows its files, so a model rewritten in place or an alias moved to another version gets new vectors,
and the same model in another folder reuses the old ones.

Layout: ``<root>/<sha256(identity)[:16]>/part-<n>.npz`` each holding ``keys`` (text hashes) and
``vectors``; every ``encode`` call that computes new embeddings appends one part. Parts are read once
when the cache is opened."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Sequence

import numpy as np

from interlingua.core.redact import redact_text
from interlingua.core.safe_load import load_arrays
from interlingua.models.identity import encoder_identity
from interlingua.models.protocol import TextEncoder


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEncoder:
    """Wraps an encoder; texts already embedded (in this or an earlier run) are not re-encoded.
    ``hits`` and ``misses`` count texts served from the cache and texts encoded; ``identity`` is what the
    cache is keyed by (``encoder.txt`` in the cache folder holds the name and the identity)."""

    def __init__(self, encoder: TextEncoder, root: str | Path):
        self.encoder, self.name = encoder, encoder.name
        self.identity = encoder_identity(encoder)
        self.directory = Path(root) / hashlib.sha256(self.identity.encode("utf-8")).hexdigest()[:16]
        self.directory.mkdir(parents=True, exist_ok=True)
        label = redact_text(f"{encoder.name}\n{self.identity}\n")  # for people browsing the cache; never read back
        (self.directory / "encoder.txt").write_text(label, encoding="utf-8")
        self._store: dict[str, np.ndarray] = {}
        for part in sorted(self.directory.glob("part-*.npz")):
            data = load_arrays(str(part))
            self._store.update(zip(data["keys"].tolist(), data["vectors"]))
        self.hits = self.misses = 0

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(k_t for k_t in zip(keys, texts) if k_t[0] not in self._store))
        if missing:
            vectors = np.asarray(self.encoder.encode([t for _, t in missing]), dtype=np.float32)
            new_keys = [k for k, _ in missing]
            self._store.update(zip(new_keys, vectors))
            np.savez(self.directory / f"part-{uuid.uuid4().hex}.npz", keys=np.array(new_keys), vectors=vectors)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._store[k] for k in keys])
