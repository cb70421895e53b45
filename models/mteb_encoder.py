"""Any interlingua encoder as an MTEB model: ``mteb.evaluate(MtebEncoder("models:/NAME@champion"), tasks)``.

Implements mteb 2's ``EncoderProtocol`` (``encode(DataLoader, *, task_metadata, hf_split, hf_subset,
prompt_type)``, ``similarity``, ``similarity_pairwise``, ``mteb_model_meta``) and also takes
sentence-transformers style calls (``encode(list_of_texts, prompt_name=..., batch_size=...,
normalize_embeddings=..., convert_to_tensor=...)``). ``mteb`` is an optional extra (``pip install
interlingua[mteb]``): it is imported only for ``mteb_model_meta``.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from interlingua.models.encode import encode_texts
from interlingua.models.protocol import TextEncoder


class MtebEncoder:
    """Wraps a :class:`TextEncoder` (or a spec/URI, loaded with ``resolve_encoder``).

    Args:
        encoder: the encoder, or a spec such as ``models:/NAME@ALIAS``.
        prompts: prompt name -> text prepended to every input. Names may be an MTEB task name, a prompt type
            (``query``/``document``) or ``TASK-query``; the most specific match wins, as in sentence-transformers.
        batch_size: texts per ``encode`` call of the wrapped encoder (default 32).
        normalize_embeddings: unit-length output (default True).
        name, revision: what MTEB records the results under (default: the encoder's name, ``"unknown"``).
    """

    def __init__(self, encoder: TextEncoder | str, *, prompts: dict[str, str] | None = None, batch_size: int = 32,
                 normalize_embeddings: bool = True, name: str | None = None, revision: str | None = None):
        if isinstance(encoder, str):
            from interlingua.models.resolve import resolve_encoder

            encoder = resolve_encoder(encoder)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1; got {batch_size}")
        self.encoder = encoder
        self.prompts = dict(prompts or {})
        self.batch_size = batch_size
        self.normalize_embeddings = normalize_embeddings
        self.name = name or encoder.name
        self.revision = revision or "unknown"

    def encode(self, inputs: Any, *, task_metadata: Any = None, hf_split: str | None = None, hf_subset: str | None = None,
               prompt_type: Any = None, prompt_name: str | None = None, prompt: str | None = None,
               batch_size: int | None = None, normalize_embeddings: bool | None = None,
               convert_to_tensor: bool = False, convert_to_numpy: bool = True, show_progress_bar: bool = False,
               **kwargs: Any):
        """Embeddings (n, dim) of ``inputs``: an MTEB DataLoader of ``{"text": [...]}`` batches, a list of
        texts or one text. ``prompt`` (a literal text) beats ``prompt_name`` beats the task/prompt-type lookup;
        the prompt is prepended before the wrapped encoder's own prefix (if it has one) is applied."""
        single = isinstance(inputs, str)
        texts = [inputs] if single else _texts(inputs)
        if prompt is None:
            prompt = self._prompt(prompt_name, task_metadata, prompt_type)
        size = batch_size or self.batch_size
        normalize = self.normalize_embeddings if normalize_embeddings is None else normalize_embeddings
        # encode_texts passes normalize on: our encoders normalize by default, and normalize_embeddings=False
        # must give their raw vectors, as sentence-transformers does
        parts = [encode_texts(self.encoder, [prompt + t for t in texts[i:i + size]], batch_size=size,
                              normalize=normalize) for i in range(0, len(texts), size)]
        vectors = np.concatenate(parts) if parts else np.zeros((0, self.encoder.dim), dtype=np.float32)
        if single:
            vectors = vectors[0]
        if convert_to_tensor:
            import torch

            return torch.from_numpy(np.ascontiguousarray(vectors))
        return vectors

    def similarity(self, embeddings1, embeddings2):
        """Cosine similarity matrix [n1, n2] (a torch tensor, as sentence-transformers returns)."""
        import torch

        a, b = _as_2d_tensor(embeddings1), _as_2d_tensor(embeddings2)
        return torch.nn.functional.normalize(a, dim=-1) @ torch.nn.functional.normalize(b, dim=-1).T

    def similarity_pairwise(self, embeddings1, embeddings2):
        """Cosine similarity of row i with row i [n]."""
        import torch

        return torch.nn.functional.cosine_similarity(_as_2d_tensor(embeddings1), _as_2d_tensor(embeddings2), dim=-1)

    @property
    def mteb_model_meta(self):
        from mteb.models.model_meta import ModelMeta

        return ModelMeta.create_empty({"name": _meta_name(self.name), "revision": self.revision,
                                       "embed_dim": int(self.encoder.dim), "similarity_fn_name": "cosine",
                                       "framework": ["PyTorch"]})

    def _prompt(self, prompt_name: str | None, task_metadata: Any, prompt_type: Any) -> str:
        if prompt_name is not None:
            if prompt_name not in self.prompts:
                raise ValueError(f"prompt_name {prompt_name!r} is not one of the prompts {sorted(self.prompts)}")
            return self.prompts[prompt_name]
        task = getattr(task_metadata, "name", None)
        kind = getattr(prompt_type, "value", prompt_type)
        task_type = getattr(task_metadata, "type", None)
        for key in (f"{task}-{kind}", task, f"{task_type}-{kind}", task_type, kind):
            if key in self.prompts:
                return self.prompts[key]
        return ""


def _texts(inputs: Any) -> list[str]:
    if isinstance(inputs, Sequence) and (not inputs or isinstance(inputs[0], str)):
        return [str(t) for t in inputs]
    texts: list[str] = []
    for batch in inputs:  # an MTEB DataLoader: dict batches with a "text" column
        if not isinstance(batch, dict) or "text" not in batch:
            raise ValueError("expected a list of texts or batches with a 'text' column "
                             f"(an MTEB DataLoader); got a {type(batch).__name__}")
        texts += [str(t) for t in batch["text"]]
    return texts


def _as_2d_tensor(x):
    import torch

    tensor = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.ascontiguousarray(x))
    return tensor.float().reshape(1, -1) if tensor.ndim == 1 else tensor.float()


def _meta_name(name: str) -> str:
    """MTEB wants ``organization/model``; a URI such as ``models:/enc@champion`` becomes ``interlingua/enc-champion``."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in name.split("models:/")[-1]).strip("-")
    return f"interlingua/{cleaned or 'encoder'}"
