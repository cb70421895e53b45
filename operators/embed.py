"""``Embed``: any encoder -> a vector column, on a Ray Data actor pool."""

from __future__ import annotations

import numpy as np

from interlingua.models.encode import encode_texts
from interlingua.operators.base import Batch, Operator, reject_column, REJECT_REASON


class Embed(Operator):
    """Adds ``output_column`` (float32 vectors) computed from ``text_column``.

    ``model`` is any encoder spec :func:`~interlingua.models.resolve.resolve_encoder` takes (``use``,
    ``minilm``, ``st:PATH``, a composed encoder folder, ``models:/NAME@ALIAS``, ...); with ``prefix`` it must
    be what :func:`~interlingua.models.load.load_encoder` takes.

    The encoder is loaded once per actor. Inside each Ray batch, texts are sorted by length and
    encoded in sub-batches of ``encode_batch_size`` (less padding), then returned in input order.
    Rows whose text is missing or empty are rejected with a reason rather than embedded as noise.

    On CPU the pool grows from one actor to up to four, one CPU and one torch thread each, as Ray finds free
    CPUs: on 2 cores, e5-small embedded 3,000 Bible verses 1.7x faster than with one actor, with the same bytes
    (``benchmarks/embed_throughput``). The vectors do not depend on the pool: each Ray batch is encoded whole by
    one actor, on one thread.

    On a GPU the defaults keep the device busy: two actors share it (one tokenizes while the other's batch runs)
    and ``encode_batch_size`` is 128. With one actor and sub-batches of 32, an H200 was busy 72–76 % of the time
    while a base-size encoder streamed a dataset; with two actors and 128, 99 % (``benchmarks/gpu_busy``).
    """

    name = "embed"
    num_cpus = 1.0
    num_gpus = 0.25
    concurrency = (1, 4)
    gpu_concurrency = 2
    batch_size = 256
    #: texts per forward pass when ``encode_batch_size`` is not given: (on CPU, on GPU)
    ENCODE_BATCH_SIZE = (32, 128)

    def __init__(self, model: str, text_column: str = "text", output_column: str = "vector",
                 encode_batch_size: int | None = None, normalize: bool = True, prefix: str | None = None):
        import torch

        if prefix is not None:
            from interlingua.models.load import load_encoder

            self.encoder = load_encoder(model, prefix=prefix)
        else:  # any spec: use, minilm, st:PATH, ... or what load_encoder takes
            from interlingua.models.resolve import resolve_encoder

            self.encoder = resolve_encoder(model)
        on_gpu = torch.cuda.is_available() and isinstance(self.encoder, torch.nn.Module)
        if on_gpu:
            self.encoder.to("cuda")
        self.text_column = text_column
        self.output_column = output_column
        self.encode_batch_size = encode_batch_size or self.ENCODE_BATCH_SIZE[on_gpu]
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
            vectors[ok] = encode_texts(self.encoder, [texts[i] for i in ok], batch_size=self.encode_batch_size,
                                       normalize=self.normalize)
        batch[self.output_column] = vectors
        batch[REJECT_REASON] = reasons
        return batch
