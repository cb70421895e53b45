"""An encoder whose ``encode`` runs the :class:`~interlingua.operators.embed.Embed` operator on Ray.

Wrapped in :class:`~interlingua.models.cache.CachedEncoder`, it is how workflows compute embeddings once:
texts already in the cache are not sent to Ray again, and each ``encode`` call that embeds new texts adds one
cache part, so a long encoding run in pieces (``chunk`` texts each) resumes where it stopped."""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from interlingua.operators.runner import run_operator


class OperatorEmbedEncoder:
    """``encode(texts)`` -> (n, dim) float32 computed by ``Embed(model=spec, normalize=...)`` actors.

    ``name`` is ``embed:<spec>`` (``:raw`` appended without normalization); ``identity`` is the same with the
    model's content identity in place of the spec (:func:`~interlingua.models.identity.model_identity`): it keys
    the embedding cache. Asking for it resolves an alias (``models:/NAME@ALIAS``) to the version it names then,
    and the actors load that version. A text the operator rejects (empty) is an error naming it: callers filter
    empty texts first."""

    def __init__(self, spec: str, *, normalize: bool = True, encode_batch_size: int | None = None, ray_batch_size: int = 256,
                 address: str | None = None):
        self.spec, self.normalize, self.address = spec, normalize, address
        self.encode_batch_size, self.ray_batch_size = encode_batch_size, ray_batch_size
        self.name = f"embed:{spec}" + ("" if normalize else ":raw")
        self._dim: int | None = None

    @functools.cached_property
    def identity(self) -> str:
        from interlingua.models.identity import model_identity
        from interlingua.models.load import pin_registry_uri

        if self.spec.startswith("models:/") and "@" in self.spec:
            # the identity and the vectors come from one version, even if the alias moves meanwhile
            self.spec = pin_registry_uri(self.spec)  # an outage exits 69, the rest 2
        return f"embed:{model_identity(self.spec)}" + ("" if self.normalize else ":raw")

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise ValueError(f"{self.name}: dim is known after the first encode call")
        return self._dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import ray

        from interlingua.core.runtime import init_ray
        from interlingua.operators.base import REJECT_REASON
        from interlingua.operators.embed import Embed

        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        init_ray(self.address)  # only when there is something to encode: a fully cached run never starts Ray
        dataset = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
        out = run_operator(dataset, Embed, {"model": self.spec, "normalize": self.normalize,
                                             "encode_batch_size": self.encode_batch_size},
                           batch_size=self.ray_batch_size)
        rows = out.take_all()
        rows.sort(key=lambda r: r["row"])
        bad = [r for r in rows if r.get(REJECT_REASON)]
        if bad:
            raise ValueError(f"{self.name}: {len(bad)} texts rejected ({bad[0][REJECT_REASON]}), "
                             f"e.g. row {bad[0]['row']}: {texts[bad[0]['row']]!r}")
        vectors = np.stack([np.asarray(r["vector"], dtype=np.float32) for r in rows])
        self._dim = int(vectors.shape[1])
        return vectors


def encode_in_chunks(encoder, texts: Sequence[str], chunk: int,
                     progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """``encoder.encode`` over ``chunk`` texts at a time (each chunk is one cache part), concatenated."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1; got {chunk}")
    texts = list(texts)
    parts = []
    for start in range(0, len(texts), chunk):
        parts.append(np.asarray(encoder.encode(texts[start:start + chunk]), dtype=np.float32))
        if progress:
            progress(min(start + chunk, len(texts)), len(texts))
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
