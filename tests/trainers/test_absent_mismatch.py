"""ABSent's mismatch (false) pairs are (x_i, y_j) with i != j as parallel pairs: a batch drawn with replacement
never gives the discriminator a true translation labelled false."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from interlingua.trainers.absent import train as absent_train
from interlingua.trainers.absent.train import AbsentSettings, mismatch_partners, train_absent
from interlingua.trainers.objectives.absent_discriminator import PairDiscriminatorLoss

TRUE_PAIR = 100.0


class TranslationOracle(torch.nn.Module):
    """A pair discriminator that knows the answer: logit TRUE_PAIR where y == x (the test's translations)."""

    def __init__(self, in_dim, hidden=()):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(1))

    def forward(self, *parts):
        same = torch.zeros(len(parts[0]))
        if len(parts) == 2 and parts[0].shape == parts[1].shape:
            same = (parts[0] == parts[1]).all(-1).float() * TRUE_PAIR
        return same + self.bias + 0.0 * torch.cat(parts, dim=-1).sum(-1)


@pytest.mark.parametrize("variant", ["absent", "uni-sent"])
def test_no_mismatch_pair_is_a_true_translation(variant, monkeypatch):
    mismatch_logits = []

    class Recording(PairDiscriminatorLoss):
        def forward(self, real, fake, mismatch=None):
            if mismatch is not None:
                mismatch_logits.append(mismatch.detach())
            return super().forward(real, fake, mismatch)

    monkeypatch.setattr(absent_train, "Discriminator", TranslationOracle)
    monkeypatch.setattr(absent_train, "PairDiscriminatorLoss", Recording)
    x_parallel = np.eye(4, dtype=np.float32)[:2]  # two parallel pairs, drawn 16 times a step: many repeats
    x_unpaired = np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32)
    settings = AbsentSettings(variant=variant, batch_size=16, epochs=2, hidden=(8,), seed=3)
    train_absent(x_parallel, x_parallel.copy(), x_unpaired, x_unpaired[::-1].copy(), settings)
    logits = torch.cat(mismatch_logits)
    assert len(logits) == 2 * 2 * 16 * (2 if variant == "absent" else 1)  # epochs x steps x batch x directions
    assert (logits < TRUE_PAIR / 2).all(), f"{int((logits >= TRUE_PAIR / 2).sum())} true translations labelled false"


def test_partners_are_other_pairs_every_one_reachable_and_seeded():
    drawn = np.random.default_rng(0).integers(0, 5, size=2000)
    partners = mismatch_partners(drawn, 5, np.random.default_rng(7))
    assert (partners != drawn).all() and ((0 <= partners) & (partners < 5)).all()
    assert all(set(partners[drawn == i]) == set(range(5)) - {i} for i in range(5))
    assert (mismatch_partners(drawn, 5, np.random.default_rng(7)) == partners).all()
    with pytest.raises(ValueError, match="at least 2"):
        mismatch_partners(np.zeros(3, dtype=np.int64), 1, np.random.default_rng(0))
