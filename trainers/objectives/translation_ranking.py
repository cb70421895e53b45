r"""Translation ranking on bitext (dual encoder, in-batch negatives, both directions).

For a batch of translation pairs (x_i, y_i) with sentence embeddings u_i = f(x_i), v_i = f(y_i):

.. math::

    L_{x \to y} = -\frac{1}{N} \sum_i \log \frac{e^{(\cos(u_i, v_i) - m)/\tau}}
        {e^{(\cos(u_i, v_i) - m)/\tau} + \sum_{j \ne i} e^{\cos(u_i, v_j)/\tau}},
    \qquad L = \tfrac12 (L_{x \to y} + L_{y \to x})

(one direction only with ``symmetric=False``). Across workers the negatives are the global batch
(:func:`interlingua.trainers.objectives.global_info_nce.global_info_nce`).

With hard negatives (``hard_negatives: true``, column ``neg``: one target-language text w_i per pair, e.g. mined by
the ``hard-negatives`` workflow), the x → y direction also ranks every w_j of the batch below v_i, as in Guo et al.
2018: the denominator gains :math:`\sum_j e^{\cos(u_i, w_j)/\tau}`. The y → x direction is unchanged.

References: Guo et al. 2018, "Effective Parallel Corpus Mining using Bilingual Sentence Embeddings"
(translation ranking task); Yang et al. 2019, "Improving Multilingual Sentence Embedding using
Bi-directional Dual Encoder with Additive Margin Softmax" (both directions, additive margin m; they
report m = 0.3 as a good value; the default here is 0, the plain ranking loss).
"""

from __future__ import annotations

from pydantic import Field
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, ObjectiveSetup
from interlingua.trainers.objectives.global_info_nce import global_info_nce
from interlingua.trainers.objectives.options import MIN_TEMPERATURE, Number, require_non_negative, require_temperature


class TranslationRankingLoss(nn.Module):
    """Bidirectional in-batch translation ranking loss.

    Args:
        temperature: τ >= 1e-4 (logits are cos/τ).
        margin: additive margin m >= 0 on the positive cosine.
        symmetric: rank in both directions (source→target and target→source) and average.
        group: process group for cross-worker negatives (default: world; none when not distributed).

    Inputs of ``forward``: ``source`` [n, D] and ``target`` [n, D] embeddings of this worker's pairs; optional
    ``negative`` [n, D], one hard-negative target per pair, ranked below the positive by every source of the batch.
    Output: scalar loss, mean over this worker's pairs.
    """

    def __init__(
        self,
        temperature: float = 0.05,
        margin: float = 0.0,
        symmetric: bool = True,
        group: ProcessGroup | None = None,
    ) -> None:
        super().__init__()
        self.temperature = require_temperature("temperature", temperature)
        self.margin = require_non_negative("margin", margin)
        self.symmetric = bool(symmetric)
        self.group = group

    def forward(self, source: Tensor, target: Tensor, negative: Tensor | None = None) -> Tensor:
        if source.shape != target.shape:
            raise ValueError(f"source {tuple(source.shape)} and target {tuple(target.shape)} must have the same shape")
        if negative is not None and negative.shape != target.shape:
            raise ValueError(f"negative {tuple(negative.shape)} must have the shape of target {tuple(target.shape)} "
                             "(one hard negative per pair)")
        return global_info_nce(
            source,
            target,
            None if negative is None else negative.unsqueeze(1),
            temperature=self.temperature,
            symmetric=self.symmetric,
            margin=self.margin,
            group=self.group,
        )


class TranslationRankingOptions(ObjectiveOptions):
    temperature: Number = Field(0.05, ge=MIN_TEMPERATURE, description="softmax temperature τ (logits are cos/τ)")
    margin: Number = Field(0.0, ge=0, description="additive margin m on the positive cosine")
    symmetric: bool = Field(True, description="rank in both directions and average")
    hard_negatives: bool = Field(False, description="read column neg (one hard-negative target per pair, e.g. from "
                                                    "the hard-negatives workflow) and rank it below the positive")


class TranslationRanking(Objective):
    """Engine objective ``translation_ranking``: columns ``src``, ``tgt`` (and ``neg`` with ``hard_negatives``), one
    text view each."""

    name = "translation_ranking"
    Options = TranslationRankingOptions
    text_columns = ("src", "tgt")
    contrasts_in_batch = True

    @classmethod
    def columns(cls, options: TranslationRankingOptions) -> tuple[str, ...]:
        return (*cls.text_columns, "neg") if options.hard_negatives else cls.text_columns

    def __init__(self, options: TranslationRankingOptions, setup: ObjectiveSetup) -> None:
        super().__init__(options, setup)
        self.text_columns = self.columns(options)
        self.criterion = TranslationRankingLoss(options.temperature, margin=options.margin,
                                                symmetric=options.symmetric, group=setup.group)
