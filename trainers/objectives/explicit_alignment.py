r"""Explicit word-alignment objectives of Wu & Dredze 2020, "Do Explicit Alignments Robustly Improve
Multilingual Encoders?" (EMNLP). All take the contextual vectors of aligned word pairs: x_i is the
source word (its first subword), y_i its aligned target word, i = 1..n (one-to-one links, identical
words dropped — the alignment operator's job).

**Linear mapping** (encoder frozen; :class:`LinearAlignmentMapping`): W maps the target language into the
source's space (English, in a ``bitext-corpus`` built from English), as in Wang et al. 2019 and the authors'
implementation (``linear_loss`` of shijie-wu/crosslingual-nlp),

.. math:: L = \frac1n \sum_i \lVert x_i - W y_i \rVert_2^2,

with, after each optimizer step, the orthogonality update of Conneau et al. 2018 (MUSE)
W ← (1 + β) W − β (W Wᵀ) W, β = 0.01.

**L2 alignment** (encoder trained; :class:`L2AlignmentLoss`, after Cao et al. 2020):

.. math:: L = \frac1n \sum_i \lVert x_i - y_i \rVert_2^2 + \lambda \lVert \theta - \theta^{(0)} \rVert_2,

the regulariser keeping the encoder parameters θ (all trainable tensors, flattened into one vector) near their
pretrained values θ⁽⁰⁾. It is the Euclidean norm, not its square, as in the authors' implementation
(``l2_param_reg`` of shijie-wu/crosslingual-nlp, λ = 1 in their scripts); its gradient at θ = θ⁽⁰⁾ is taken as 0.

**Contrastive alignment** (:class:`ContrastiveAlignmentLoss`): a learned head g(h) = W₂ ReLU(W₁ h)
(D → D → 128, no biases, as in SimCLR's head and the authors' code; discarded after training), z = g(·),
sim = cos/τ. The same parameter regulariser can be added (``regularization_weight``; the authors' scripts use
λ = 1 for the contrastive runs too, our default for them is 0).

* weak: negatives from the *other* language only — for x_i the candidates are y_1..y_n (and for y_i
  the candidates are x_1..x_n when ``symmetric``): InfoNCE with in-batch negatives;
* strong: negatives from *both* languages — for each of the 2n vectors the candidates are the other
  2n − 1 vectors (NT-Xent, Chen et al. 2020), the positive being its aligned partner.

Across workers the candidates are the global batch. Every worker returns its share of the global mean
(its mean over its n_r pairs times W·n_r/N, :func:`interlingua.trainers.distributed.gather.share_of_global_mean`;
workers hold different numbers of word pairs), so the gradient averaging of DeepSpeed gives the mean over all
N pairs; the parameter regulariser is added unscaled on every worker.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field, model_validator
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from interlingua.models.token_vectors import check_layer, parse_pairs, parse_words, select_pairs
from interlingua.trainers.distributed.gather import batch_layout, gather_with_grad, scaled, share_of_global_mean
from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, ObjectiveSetup, ViewMaker, Views
from interlingua.trainers.objectives.global_info_nce import global_info_nce
from interlingua.trainers.objectives.options import (
    MIN_TEMPERATURE, Number, require_choice, require_non_negative, require_positive, require_temperature)


def _require_pairs(source: Tensor, target: Tensor) -> None:
    if source.dim() != 2 or source.shape != target.shape:
        raise ValueError(
            f"source {tuple(source.shape)} and target {tuple(target.shape)} must both be [n, D] word vectors"
        )


class LinearAlignmentMapping(nn.Module):
    """Linear map W (identity at start) from target to source word vectors, kept near-orthogonal.

    Args:
        dim: vector dimension D.
        orthogonality_beta: β of the orthogonality update (0 disables it).

    ``forward(source [n, D], target [n, D])`` returns the mean squared L2 distance of x_i and W y_i (this
    worker's share of the global mean over ``group``: times W·n_r/N);
    call :meth:`orthogonalize_` after every optimizer step; ``map(vectors)`` applies W (to target vectors).
    """

    def __init__(self, dim: int, orthogonality_beta: float = 0.01, group: ProcessGroup | None = None) -> None:
        super().__init__()
        require_positive("dim", dim)
        self.orthogonality_beta = require_non_negative("orthogonality_beta", orthogonality_beta)
        self.weight = nn.Parameter(torch.eye(int(dim)))
        self.group = group

    def map(self, vectors: Tensor) -> Tensor:
        return vectors @ self.weight.T

    def forward(self, source: Tensor, target: Tensor) -> Tensor:
        _require_pairs(source, target)
        mean = (source - self.map(target)).pow(2).sum(dim=1).mean()
        return share_of_global_mean(mean, source.shape[0], self.group)

    @torch.no_grad()
    def orthogonalize_(self) -> None:
        """W ← (1 + β) W − β (W Wᵀ) W (Conneau et al. 2018)."""
        beta = self.orthogonality_beta
        weight = self.weight
        weight.copy_((1 + beta) * weight - beta * (weight @ weight.T) @ weight)


class ParameterAnchor(nn.Module):
    """A frozen copy θ⁽⁰⁾ of a model's trainable parameters; :meth:`penalty` is ‖θ − θ⁽⁰⁾‖₂, the Euclidean norm of
    the difference over all of them (one vector), with gradient 0 where θ = θ⁽⁰⁾."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self._model = [model]  # a list so the model is not registered as a submodule of the loss
        self.names = [name for name, parameter in model.named_parameters() if parameter.requires_grad]
        for index, name in enumerate(self.names):
            self.register_buffer(f"pretrained_{index}", model.get_parameter(name).detach().clone())

    def squared_distance(self) -> Tensor:
        """Σ_k ‖θ_k − θ_k⁽⁰⁾‖², the square of :meth:`penalty`."""
        model = self._model[0]
        terms: Iterable[Tensor] = (
            (model.get_parameter(name) - getattr(self, f"pretrained_{index}")).pow(2).sum()
            for index, name in enumerate(self.names)
        )
        return torch.stack(list(terms)).sum()

    def penalty(self) -> Tensor:
        squared = self.squared_distance()
        moved = squared > 0
        # sqrt's gradient is infinite at 0 (and 0 x inf = NaN): take the root only where the model has moved.
        return torch.where(moved, torch.where(moved, squared, torch.ones_like(squared)).sqrt(), torch.zeros_like(squared))


def add_anchor_penalty(loss: Tensor, anchor: ParameterAnchor | None, regularization_weight: float) -> Tensor:
    """``loss + λ ‖θ − θ⁽⁰⁾‖₂`` (``loss`` itself without an anchor or with λ = 0)."""
    if anchor is None or regularization_weight == 0:
        return loss
    return loss + regularization_weight * anchor.penalty()


class L2AlignmentLoss(nn.Module):
    """Mean squared L2 distance of aligned word vectors + λ × ‖θ − θ⁽⁰⁾‖₂, the distance of the encoder to its
    pretrained values.

    Args:
        anchor: :class:`ParameterAnchor` made from the encoder before training (None: no regulariser).
        regularization_weight: λ >= 0.
        group: process group whose workers' pairs make the global mean (None: world).

    ``forward(source [n, D], target [n, D])`` returns a scalar: the mean over this worker's pairs times W·n_r/N
    (its share of the global mean). The regulariser is added on every worker; data-parallel averaging leaves it
    unchanged.
    """

    def __init__(self, anchor: ParameterAnchor | None = None, regularization_weight: float = 1.0,
                 group: ProcessGroup | None = None) -> None:
        super().__init__()
        self.anchor = anchor
        self.group = group
        self.regularization_weight = require_non_negative("regularization_weight", regularization_weight)

    def forward(self, source: Tensor, target: Tensor) -> Tensor:
        _require_pairs(source, target)
        mean = share_of_global_mean((source - target).pow(2).sum(dim=1).mean(), source.shape[0], self.group)
        return add_anchor_penalty(mean, self.anchor, self.regularization_weight)


class CosineHead(nn.Sequential):
    """Projection head g(h) = W₂ ReLU(W₁ h), D → D → 128 without biases (SimCLR's head, as in the authors' code),
    used only during alignment training."""

    def __init__(self, dim: int, hidden_dim: int | None = None, output_dim: int = 128) -> None:
        require_positive("dim", dim)
        require_positive("output_dim", output_dim)
        hidden = int(hidden_dim or dim)
        super().__init__(nn.Linear(int(dim), hidden, bias=False), nn.ReLU(), nn.Linear(hidden, int(output_dim), bias=False))


class ContrastiveAlignmentLoss(nn.Module):
    """Weak or strong contrastive word alignment through a learned cosine head.

    Args:
        dim: word-vector dimension D (the head is D → D → 128).
        strength: "weak" (negatives from the other language) or "strong" (both languages).
        temperature: τ >= 1e-4 (MIN_TEMPERATURE).
        symmetric: weak only — also rank source words for each target word, and average.
        group: process group for cross-worker negatives.
        anchor: optional :class:`ParameterAnchor` of the encoder; its penalty λ ‖θ − θ⁽⁰⁾‖₂ is added.
        regularization_weight: λ >= 0 of that penalty.

    ``forward(source [n, D], target [n, D])`` returns this worker's share of the mean loss over every worker's
    pairs (its own mean scaled by W·n_r/N, see :func:`~interlingua.trainers.distributed.gather.share_of_global_mean`),
    plus the penalty.
    """

    def __init__(
        self,
        dim: int,
        strength: str = "strong",
        temperature: float = 0.1,
        symmetric: bool = True,
        group: ProcessGroup | None = None,
        anchor: ParameterAnchor | None = None,
        regularization_weight: float = 0.0,
    ) -> None:
        super().__init__()
        self.strength = require_choice("strength", strength, ("weak", "strong"))
        self.temperature = require_temperature("temperature", temperature)
        self.symmetric = bool(symmetric)
        self.group = group
        self.head = CosineHead(dim)
        self.anchor = anchor
        self.regularization_weight = require_non_negative("regularization_weight", regularization_weight)

    def forward(self, source: Tensor, target: Tensor) -> Tensor:
        _require_pairs(source, target)
        source_z, target_z = self.head(source), self.head(target)
        if self.strength == "weak":
            loss = global_info_nce(
                source_z, target_z, temperature=self.temperature, symmetric=self.symmetric, group=self.group
            )
        else:
            loss = self._strong(source_z, target_z)
        return add_anchor_penalty(loss, self.anchor, self.regularization_weight)

    def _strong(self, source_z: Tensor, target_z: Tensor) -> Tensor:
        """NT-Xent over the 2M gathered vectors [X; Y], self excluded, positive = aligned partner."""
        local = source_z.shape[0]
        offset, weight = batch_layout(local, source_z.device, self.group)
        all_source = F.normalize(gather_with_grad(source_z, self.group), dim=-1)
        all_target = F.normalize(gather_with_grad(target_z, self.group), dim=-1)
        total = all_source.shape[0]
        candidates = torch.cat([all_source, all_target])
        rows = torch.arange(offset, offset + local, device=source_z.device)
        anchors = torch.cat([all_source[rows], all_target[rows]])
        own_rows = torch.cat([rows, rows + total])
        partner_rows = torch.cat([rows + total, rows])
        logits = anchors @ candidates.T / self.temperature
        self_mask = F.one_hot(own_rows, 2 * total).bool()
        logits = logits.masked_fill(self_mask, float("-inf"))
        loss = F.cross_entropy(logits, partner_rows)
        return scaled(loss, weight)


# -- explicit alignment on the training engine ---------------------------------------------------------------

MAPPING_FILE = "alignment_mapping.npz"  # linear method: W (and the layer it maps), next to the encoder
MAPPING_DIRECTION = "target_to_source"  # saved with W; files without it hold the source -> target map of older versions
ALIGNMENT_METHODS = ("linear", "l2", "weak", "strong")


class ExplicitAlignmentOptions(ObjectiveOptions):
    method: Literal["linear", "l2", "weak", "strong"] = Field(
        "strong", description="linear: orthogonal map W, encoder frozen | l2: L2 + parameter anchor | "
                              "weak / strong: contrastive with the D-D-128 cosine head")
    align_layer: int | None = Field(None, ge=0, description="hidden layer whose word vectors are aligned "
                                                            "(1..N; 0: embeddings); null: the last")
    temperature: Number = Field(0.1, ge=MIN_TEMPERATURE, description="weak/strong: softmax temperature τ")
    symmetric: bool = Field(True, description="weak: also rank source words for each target word")
    regularization_weight: Number | None = Field(
        None, ge=0, description="λ of the parameter anchor λ‖θ − θ⁽⁰⁾‖₂ (l2, weak, strong); null: 1 for l2 (as in the "
                                "authors' L2 script), 0 for weak / strong (their scripts use 1 for these too)")
    orthogonality_beta: Number = Field(0.01, ge=0, description="linear: β of W ← (1+β)W − β(WWᵀ)W after each step")
    src_tokens_column: str = Field("src_tokens", description="source words (space-joined string or list)")
    tgt_tokens_column: str = Field("tgt_tokens", description="target words (space-joined string or list)")
    pairs_column: str = Field("subword_pairs", description="first-subword position pairs recorded by bitext-corpus")

    @model_validator(mode="after")
    def _used_by_the_method(self) -> "ExplicitAlignmentOptions":
        """An option set away from its default that the chosen method never reads is a mistake (a run would ignore
        it). Defaults pass, so a dumped config (every field written out) validates again."""
        used_by = {"temperature": ("weak", "strong"), "symmetric": ("weak",), "orthogonality_beta": ("linear",),
                   "regularization_weight": ("l2", "weak", "strong")}
        unused = [key for key, methods in used_by.items() if self.method not in methods
                  and getattr(self, key) != type(self).model_fields[key].default]
        if unused:
            raise ValueError(f"method {self.method} does not use {', '.join(unused)} (" + "; ".join(
                f"{key}: {'/'.join(used_by[key])}" for key in unused) + ")")
        return self


class ExplicitAlignment(Objective):
    """Engine objective ``explicit_alignment`` (Wu & Dredze 2020) on a ``bitext-corpus`` version made with a
    ``subword_tokenizer`` (the encoder's): the hidden states of layer ``align_layer`` at the first subwords of
    aligned words (``subword_pairs``, positions in the pre-split words tokenized with special tokens and no
    prompt). A pair with a position past the sequence after truncation (``align_pairs_beyond_length``) or not
    at a word start (``align_pairs_not_word_start``) is dropped and counted; ``align_pairs`` counts the pairs
    trained on. Methods: ``linear`` (encoder frozen, :class:`LinearAlignmentMapping` orthogonalised after each
    step, W saved as ``alignment_mapping.npz``), ``l2`` (:class:`L2AlignmentLoss` with a
    :class:`ParameterAnchor` on the encoder), ``weak`` / ``strong`` (:class:`ContrastiveAlignmentLoss`, head
    D → D → 128 initialised from ``ObjectiveSetup.seed`` alone, so identical on every worker, and discarded after
    training; the anchor too when ``regularization_weight`` > 0)."""

    name = "explicit_alignment"
    Options = ExplicitAlignmentOptions
    counter_names = ("align_pairs", "align_pairs_beyond_length", "align_pairs_not_word_start")
    supports_zero3 = False  # the head / map / anchor are used outside the engine's forward

    def __init__(self, options: ExplicitAlignmentOptions, setup: ObjectiveSetup) -> None:
        super().__init__(options, setup)
        self.token_layer = options.align_layer
        self.trains_encoder = options.method != "linear"
        if options.method == "linear":
            self.criterion = LinearAlignmentMapping(setup.dim, orthogonality_beta=options.orthogonality_beta,
                                                    group=setup.group)
        else:
            weight = options.regularization_weight
            if weight is None:
                weight = 1.0 if options.method == "l2" else 0.0
            anchor = ParameterAnchor(setup.encoder) if weight > 0 else None
            if options.method == "l2":
                self.criterion = L2AlignmentLoss(anchor, regularization_weight=weight, group=setup.group)
            else:  # the head is drawn from setup.seed alone: the same on every worker, whatever the global RNG
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(setup.seed)
                    self.criterion = ContrastiveAlignmentLoss(setup.dim, strength=options.method,
                                                              temperature=options.temperature,
                                                              symmetric=options.symmetric, group=setup.group,
                                                              anchor=anchor, regularization_weight=weight)

    @classmethod
    def columns(cls, options: ExplicitAlignmentOptions) -> tuple[str, ...]:
        return (options.src_tokens_column, options.tgt_tokens_column, options.pairs_column)

    @classmethod
    def check_model(cls, options: ExplicitAlignmentOptions, model_config: Callable[[], Any]) -> None:
        layers = getattr(model_config(), "num_hidden_layers", None)
        if layers is None:
            raise ValueError("explicit_alignment reads hidden layers, but the encoder's config has no num_hidden_layers")
        check_layer(options.align_layer, int(layers))

    def views(self, batch: Mapping[str, Any], make: ViewMaker) -> Views:
        o = self.options
        source = make.words([parse_words(cell) for cell in batch[o.src_tokens_column]])
        target = make.words([parse_words(cell) for cell in batch[o.tgt_tokens_column]])
        selected = select_pairs(source, target, [parse_pairs(cell) for cell in batch[o.pairs_column]])
        if not selected.kept:
            raise ValueError(f"no usable word pair in this batch of {len(selected.source)} rows "
                             f"({selected.beyond_length} beyond the training length, {selected.not_word_start} not "
                             f"at a word start): is {o.pairs_column!r} from the encoder's tokenizer, and max_length "
                             f"long enough?")
        return Views([source.at(selected.source), target.at(selected.target)],
                     counters={"align_pairs": selected.kept, "align_pairs_beyond_length": selected.beyond_length,
                               "align_pairs_not_word_start": selected.not_word_start})

    def after_step(self) -> None:
        if isinstance(self.criterion, LinearAlignmentMapping):
            self.criterion.orthogonalize_()

    def negatives_per_anchor(self, global_batch: int) -> int:
        return 0  # word-level: see the align_pairs counter

    def progress_note(self, negatives: int, counters: dict[str, int]) -> str:
        """The aligned word pairs the step trained on (all workers): its unit, not sentence negatives (none)."""
        return f"{counters.get('align_pairs', 0)} aligned word pairs"

    def save(self, folder: str | os.PathLike) -> list[str]:
        if not isinstance(self.criterion, LinearAlignmentMapping):
            return []  # l2 changes the encoder only; the contrastive head is discarded (as in the paper)
        np.savez(os.path.join(folder, MAPPING_FILE), weight=self.criterion.weight.detach().float().cpu().numpy(),
                 layer=np.asarray(-1 if self.token_layer is None else self.token_layer),
                 direction=np.asarray(MAPPING_DIRECTION))
        return [MAPPING_FILE]
