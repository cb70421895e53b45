r"""SimCSE: unsupervised (dropout views) and supervised (NLI triples) contrastive sentence embeddings.

Gao, Yao and Chen 2021, "SimCSE: Simple Contrastive Learning of Sentence Embeddings".

Unsupervised — the same sentences encoded twice with different dropout masks, h_i and h_i':

.. math::

    \ell_i = -\log \frac{e^{\cos(h_i, h_i')/\tau}}{\sum_{j=1}^{N} e^{\cos(h_i, h_j')/\tau}}

Supervised — premise h_i, entailment h_i^+ (positive), contradiction h_i^- (hard negative); every
anchor is scored against all positives and all hard negatives of the batch:

.. math::

    \ell_i = -\log \frac{e^{\cos(h_i, h_i^+)/\tau}}
        {\sum_{j=1}^{N} \left(e^{\cos(h_i, h_j^+)/\tau} + e^{\cos(h_i, h_j^-)/\tau}\right)}

τ = 0.05 in the paper. ``hard_negative_weight`` w (supervised; default 0) multiplies each premise's own
contradiction term by α = e^w (the paper's appendix weighting α^{1[i=j]}; the authors' code adds w to that logit;
α = 1 was best there). Across workers N is the global batch (local anchors, gathered candidates).
Encoding both views (a dropout model in train mode) is the caller's job; with
:func:`interlingua.trainers.gradcache.cached_step` pass the same batch twice as two views.
"""

from __future__ import annotations

from pydantic import Field
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, ObjectiveSetup
from interlingua.trainers.objectives.global_info_nce import global_info_nce
from interlingua.trainers.objectives.options import MIN_TEMPERATURE, Number, require_number, require_temperature


class UnsupervisedSimCSELoss(nn.Module):
    """Unsupervised SimCSE loss.

    Args:
        temperature: τ >= 1e-4 (paper: 0.05).
        group: process group for cross-worker negatives.

    Inputs of ``forward``: ``first_view`` and ``second_view`` [n, D], two dropout encodings of the same
    n sentences. Output: scalar loss, mean over this worker's sentences.
    """

    def __init__(self, temperature: float = 0.05, group: ProcessGroup | None = None) -> None:
        super().__init__()
        self.temperature = require_temperature("temperature", temperature)
        self.group = group

    def forward(self, first_view: Tensor, second_view: Tensor) -> Tensor:
        if first_view.shape != second_view.shape:
            raise ValueError(
                f"first_view {tuple(first_view.shape)} and second_view {tuple(second_view.shape)} "
                "must have the same shape"
            )
        return global_info_nce(first_view, second_view, temperature=self.temperature, group=self.group)


class SupervisedSimCSELoss(nn.Module):
    """Supervised SimCSE loss on NLI triples; the contradiction is the hard negative (optional).

    Args:
        temperature: τ >= 1e-4 (paper: 0.05).
        group: process group for cross-worker negatives.
        hard_negative_weight: w added to the logit of each premise's own contradiction(s) (α = e^w; default 0,
            the paper's main equation; the authors' ``--hard_negative_weight``).

    Inputs of ``forward``: ``premise`` [n, D], ``entailment`` [n, D], optional ``contradiction`` [n, D]
    (or [n, k, D] for k hard negatives per premise). Output: scalar loss, mean over this worker's premises.
    """

    def __init__(self, temperature: float = 0.05, group: ProcessGroup | None = None,
                 hard_negative_weight: float = 0.0) -> None:
        super().__init__()
        self.temperature = require_temperature("temperature", temperature)
        self.hard_negative_weight = require_number("hard_negative_weight", hard_negative_weight)
        self.group = group

    def forward(self, premise: Tensor, entailment: Tensor, contradiction: Tensor | None = None) -> Tensor:
        hard_negatives = triple_hard_negatives(premise, entailment, contradiction)
        return global_info_nce(premise, entailment, hard_negatives, temperature=self.temperature, group=self.group,
                               hard_negative_weight=self.hard_negative_weight)


def triple_hard_negatives(premise: Tensor, entailment: Tensor, contradiction: Tensor | None) -> Tensor | None:
    """Check an NLI triple's shapes; the contradictions as [n, k, D] hard negatives (None without them)."""
    if premise.shape != entailment.shape:
        raise ValueError(
            f"premise {tuple(premise.shape)} and entailment {tuple(entailment.shape)} must have the same shape"
        )
    if contradiction is None:
        return None
    if contradiction.dim() == 2 and contradiction.shape != premise.shape:
        raise ValueError(
            f"contradiction {tuple(contradiction.shape)} must match premise {tuple(premise.shape)} "
            "(or be [n, k, D] for k hard negatives per premise)"
        )
    return contradiction.unsqueeze(1) if contradiction.dim() == 2 else contradiction


class SimCSEOptions(ObjectiveOptions):
    temperature: Number = Field(0.05, ge=MIN_TEMPERATURE, description="softmax temperature τ (paper: 0.05)")


class SupervisedSimCSEOptions(SimCSEOptions):
    hard_negative_weight: Number = Field(
        0.0, description="w added to the logit of each premise's own contradiction (its term weighted by α = e^w; "
                         "0: the paper's equation; the authors' --hard_negative_weight)")


class TemperatureObjective(Objective):
    """An objective whose loss is ``loss_class(temperature, group=...)`` over one text view per column."""

    Options = SimCSEOptions
    loss_class: type[nn.Module]
    contrasts_in_batch = True

    def __init__(self, options: SimCSEOptions, setup: ObjectiveSetup) -> None:
        super().__init__(options, setup)
        self.criterion = self.loss_class(options.temperature, group=setup.group, **self.loss_options(options))

    def loss_options(self, options: SimCSEOptions) -> dict:
        """Keyword arguments of ``loss_class`` beyond the temperature and group, from a subclass's own options."""
        return {}


class UnsupervisedSimCSE(TemperatureObjective):
    """Engine objective ``simcse_unsup``: column ``text``, encoded twice (two dropout views)."""

    name = "simcse_unsup"
    text_columns = ("text", "text")
    loss_class = UnsupervisedSimCSELoss


class SupervisedSimCSE(TemperatureObjective):
    """Engine objective ``simcse_sup``: columns ``premise``, ``entailment``, ``contradiction`` (hard negative)."""

    name = "simcse_sup"
    Options = SupervisedSimCSEOptions
    text_columns = ("premise", "entailment", "contradiction")
    loss_class = SupervisedSimCSELoss

    def loss_options(self, options: SupervisedSimCSEOptions) -> dict:
        return {"hard_negative_weight": options.hard_negative_weight}
