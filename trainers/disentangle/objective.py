"""L = L_R + L_M + L_L over one step's inputs (Tiyajamorn et al. 2021), each term switchable: the paper's
ablation rows. Inputs are the frozen embeddings of a (source), b (its translation), c (random, a's language),
d (random, b's language), each [B, D], and the language ids of a and b."""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import nn

from interlingua.trainers.disentangle.model import DisentangleModel
from interlingua.trainers.objectives.disentangle_language import LanguageLoss
from interlingua.trainers.objectives.disentangle_meaning import MeaningLoss
from interlingua.trainers.objectives.disentangle_reconstruction import ReconstructionLoss


@dataclass(frozen=True)
class LossTerms:
    """Which terms are on (all by default). ``reconstruction`` = L_R; ``meaning_cross`` = L_M^x;
    ``meaning_mono`` = L_M^m; ``language_mono`` = L_L^m; ``language_id`` = L_L^i."""

    reconstruction: bool = True
    meaning_cross: bool = True
    meaning_mono: bool = True
    language_mono: bool = True
    language_id: bool = True

    def __post_init__(self):
        if not (self.meaning_cross or self.meaning_mono):
            raise ValueError("at least one meaning term (meaning_cross, meaning_mono) must be on: "
                             "without L_M nothing trains the meaning head")

    def enabled(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name)]


class DisentangleObjective(nn.Module):
    def __init__(self, terms: LossTerms = LossTerms(), distance: str = "squared_l2"):
        super().__init__()
        self.settings = terms
        self.reconstruction = ReconstructionLoss(distance) if terms.reconstruction else None
        self.meaning = MeaningLoss(terms.meaning_cross, terms.meaning_mono)
        self.language = (LanguageLoss(terms.language_mono, terms.language_id)
                         if terms.language_mono or terms.language_id else None)

    def terms(self, model: DisentangleModel, a, b, c, d, lang_a: torch.Tensor, lang_b: torch.Tensor) -> dict[str, torch.Tensor]:
        e = torch.cat([a, b, c, d])
        meaning, language, logits = model(e)
        m_a, m_b, m_c, m_d = meaning.chunk(4)
        l_a, l_b, l_c, l_d = language.chunk(4)
        out = {}
        if self.reconstruction is not None:
            out["reconstruction"] = self.reconstruction(e, meaning, language)
        out.update(self.meaning.terms(m_a, m_b, m_c, m_d))
        if self.language is not None:  # MLP_I classifies a and b (the authors' cal_loss), not c, d
            z_a, z_b, _, _ = logits.chunk(4)
            out.update(self.language.terms(l_a, l_b, l_c, l_d, z_a, z_b, lang_a, lang_b))
        return out

    def forward(self, model, a, b, c, d, lang_a, lang_b) -> torch.Tensor:
        return sum(self.terms(model, a, b, c, d, lang_a, lang_b).values())
