"""``Embed``: any encoder -> a vector column, on a Ray Data actor pool."""

from __future__ import annotations

import numpy as np

from interlingua.operators.base import Batch, Operator, reject_column, REJECT_REASON


class Embed(Operator):
    """Adds ``output_column`` (float32 vectors) computed from ``text_column``.

    The encoder is loaded once per actor. Inside each Ray batch, texts are sorted by length and
    encoded in sub-batches of ``encode_batch_size`` (less padding), then returned in input order.
    Rows whose text is missing or empty are rejected with a reason rather than embedded as noise.
    """

    name = "embed"
    num_cpus = 1.0
    num_gpus = 0.25
    concurrency = 1
    batch_size = 256

    def __init__(self, model: str, text_column: str = "text", output_column: str = "vector",
                 encode_batch_size: int = 32, normalize: bool = True, prefix: str | None = None):
        from interlingua.models.load import load_encoder

        import torch

        self.encoder = load_encoder(model, prefix=prefix)
        if torch.cuda.is_available():
            self.encoder.to("cuda")
        self.text_column = text_column
        self.output_column = output_column
        self.encode_batch_size = encode_batch_size
        self.normalize = normalize

    def __call__(self, batch: Batch) -> Batch:
        if self.text_column not in batch:
            raise KeyError(f"embed: input has no column {self.text_column!r}; columns: {sorted(batch)}")
        texts = batch[self.text_column]
        n = len(texts)
        reasons = batch.get(REJECT_REASON, reject_column(n)).copy()
        ok = [i for i in range(n) if not reasons[i] and isinstance(texts[i], str) and texts[i].strip()]
        for i in set(range(n)) - set(ok):
            reasons[i] = reasons[i] or "embed: empty or missing text"
        vectors = np.zeros((n, self.encoder.dim), dtype=np.float32)
        if ok:
            vectors[ok] = self.encoder.encode([texts[i] for i in ok], batch_size=self.encode_batch_size,
                                              normalize=self.normalize)
        batch[self.output_column] = vectors
        batch[REJECT_REASON] = reasons
        return batch
