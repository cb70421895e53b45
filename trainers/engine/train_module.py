"""The module DeepSpeed wraps: the encoder plus the objective (whose own parameters — an entity table, a head,
a linear map — are then trained, all-reduced and checkpointed with the encoder's), and the per-batch view
builder the objective uses.

``forward(features)`` dispatches on the feature dict, so every view is a dict of tensors with batch dim 0
(which GradCache splits): token positions (``token_positions``) -> hidden states of the objective's
``token_layer`` at those positions; ``"<module>/input"`` -> the objective's submodule ``<module>``; anything
else (tokenizer output) -> the encoder's pooled sentence embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from interlingua.models.token_vectors import TOKEN_POSITIONS, TokenizedWords, token_vectors, tokenize_words
from interlingua.trainers.engine.compile_encoder import compile_encoder_blocks

MODULE_INPUT = "/input"


class TrainModule(nn.Module):
    def __init__(self, encoder: nn.Module, objective: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.objective = objective

    def forward(self, features: dict[str, Tensor]) -> Tensor:
        if TOKEN_POSITIONS in features:
            return token_vectors(self.encoder.transformer, features, self.objective.token_layer)
        modules = [key for key in features if key.endswith(MODULE_INPUT)]
        if modules:
            if len(features) != 1:
                raise ValueError(f"a module view holds one '<module>{MODULE_INPUT}' tensor, got keys {sorted(features)}")
            return self.objective.get_submodule(modules[0][: -len(MODULE_INPUT)])(features[modules[0]])
        return self.encoder(features)


class EngineViews:
    """The :class:`~interlingua.trainers.objectives.base.ViewMaker` of one worker: tensors on ``device``."""

    def __init__(self, encoder, device: torch.device, max_length: int) -> None:
        self.encoder = encoder
        self.device = device
        self.max_length = max_length

    def text(self, texts: Sequence[str]) -> dict[str, Tensor]:
        return {k: v.to(self.device) for k, v in self.encoder.tokenize(list(texts)).items()}

    def words(self, words: Sequence[Sequence[str]]) -> TokenizedWords:
        return tokenize_words(self.encoder.tokenizer, words, self.max_length).to(self.device)

    def module(self, name: str, inputs: Tensor) -> dict[str, Tensor]:
        return {name + MODULE_INPUT: inputs.to(self.device)}


class SideStreamViews(EngineViews):
    """:class:`EngineViews` whose text views go through :func:`copy_on_side_stream` on CUDA (a candidate the training
    loop does not use yet, measured by ``benchmarks/engine_mfu --side-stream-copy``), so their copy overlaps the
    running step's kernels instead of queueing between them on the default stream. The consumer stream is the
    device's current stream in the thread that builds this object (the step's), captured here. Word and module views,
    and every view on other devices, are made as :class:`EngineViews` makes them."""

    def __init__(self, encoder, device: torch.device, max_length: int) -> None:
        super().__init__(encoder, device, max_length)
        self.copy_stream = self.consumer_stream = None
        if device.type == "cuda":
            self.copy_stream = torch.cuda.Stream(device)
            self.consumer_stream = torch.cuda.current_stream(device)

    def text(self, texts: Sequence[str]) -> dict[str, Tensor]:
        if self.copy_stream is None:
            return super().text(texts)
        tokens = self.encoder.tokenize(list(texts))
        return copy_on_side_stream(tokens, self.device, self.copy_stream, self.consumer_stream)


def copy_on_side_stream(tensors: dict[str, Tensor], device: torch.device, copy_stream,
                        consumer_stream=None) -> dict[str, Tensor]:
    """``tensors`` copied to ``device`` from pinned memory on ``copy_stream``; returns once the copy is done (the
    calling thread waits, not the device). Each copy is recorded on ``consumer_stream`` when given, so the caching
    allocator does not hand its memory to a later copy while that stream's queued kernels still read it."""
    with torch.cuda.stream(copy_stream):
        copied = {k: v.pin_memory().to(device, non_blocking=True) for k, v in tensors.items()}
    copy_stream.synchronize()
    if consumer_stream is not None:
        for tensor in copied.values():
            tensor.record_stream(consumer_stream)
    return copied


def prepare_encoder(encoder, config) -> str | None:
    """Apply the config's encoder settings before the engine is built: ``freeze_embeddings`` (the word-embedding
    matrix stops training) and ``compile_encoder``.

    Compiling is in place, one layer of the stack at a time (:mod:`~interlingua.trainers.engine.compile_encoder`):
    parameter names, the state dict and checkpoints stay those of the plain module; only the layers' forward and
    the matching backward run as generated kernels. Sequence lengths that change from batch to batch are marked
    dynamic after the first change, so a run recompiles a few times at its start, not every step. Returns what was
    compiled (``"12 x XLMRobertaLayer"``), or None."""
    if config.freeze_embeddings:
        encoder.transformer.get_input_embeddings().weight.requires_grad_(False)
    if config.compile_encoder:
        return compile_encoder_blocks(encoder.transformer)
    return None


def count_tokens(views: Sequence[dict[str, Tensor]]) -> int:
    """Real (non-padding) tokens the encoder reads for these views."""
    return int(sum(int(v["attention_mask"].sum()) for v in views if "attention_mask" in v))
