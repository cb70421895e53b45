"""The one encoder concept of the project: every encoder (a transformer with pooling, USE, averaged
word vectors, combinations, cached or composed encoders) is a :class:`TextEncoder`."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class TextEncoder(Protocol):
    """``encode(texts)`` returns a float array (len(texts), dim); ``name`` identifies the encoder
    (it keys the embedding cache, so two different encoders must not share it); ``dim`` is the
    embedding dimension.

    Optional: ``identity``, a key that changes exactly when the vectors would (the model's content, not its
    place), or ``source_folder``, the files the encoder was loaded from; the embedding cache keys by them
    (:func:`~interlingua.models.identity.encoder_identity`)."""

    name: str

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalize(x: np.ndarray, eps: float = 1e-12, dtype=np.float64) -> np.ndarray:
    """Rows of ``x`` (n, d) divided by their L2 norm (rows of norm 0 stay 0), computed in ``dtype``. A row with a
    NaN or an infinity is a ``ValueError`` naming it: it would otherwise be ranked, mined or scored as if it were a
    vector (``argmax`` picks a NaN, every comparison with one is false)."""
    x = np.asarray(x, dtype=dtype)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array (n, dim); got shape {x.shape}")
    finite = np.isfinite(x).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        shown = ", ".join(str(int(i)) for i in bad[:5]) + (", …" if len(bad) > 5 else "")
        raise ValueError(f"{len(bad)} of {len(x)} embeddings are not finite (NaN or infinity), rows {shown}: the "
                         "encoder's output overflowed or its weights hold NaN")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, eps)
