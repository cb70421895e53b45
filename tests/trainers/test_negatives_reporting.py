"""What the step line and the ``negatives_per_anchor`` metric claim of an objective's negatives: the in-batch
softmax objectives count theirs; a loss of pairs alone (the README's ``Pull``, a squared distance) claims none."""

from __future__ import annotations

import pytest

from interlingua.trainers.engine.train_loop import batch_note
from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, ObjectiveSetup, Views
from interlingua.trainers.objectives.ease import EASE
from interlingua.trainers.objectives.simcse import (
    SimCSEOptions, SupervisedSimCSE, SupervisedSimCSEOptions, UnsupervisedSimCSE)
from interlingua.trainers.objectives.translation_ranking import TranslationRanking, TranslationRankingOptions

GLOBAL_BATCH = 8


class PullOptions(ObjectiveOptions):
    scale: float = 1.0


class Pull(Objective):
    """The README's example objective (not registered here): each source pulled to its target, no negatives."""

    name, Options = "test_readme_pull", PullOptions

    @classmethod
    def columns(cls, options):
        return ("src", "tgt")

    def views(self, batch, make):
        return Views([make.text(list(batch["src"])), make.text(list(batch["tgt"]))])

    def loss(self, embeddings):
        return (self.options.scale * embeddings[0] - embeddings[1]).pow(2).sum(1).mean()


def _note(objective: Objective) -> str:
    return batch_note(GLOBAL_BATCH, objective.progress_note(objective.negatives_per_anchor(GLOBAL_BATCH), {}))


def test_a_loss_of_pairs_alone_claims_no_negatives():
    """Pull's step line said "7 negatives/anchor" (the in-batch softmax's count) though its loss has none."""
    pull = Pull(PullOptions(), ObjectiveSetup(encoder=None))
    assert pull.negatives_per_anchor(GLOBAL_BATCH) == 0
    assert _note(pull) == f"effective batch {GLOBAL_BATCH}"


@pytest.mark.parametrize("objective, negatives", [
    (TranslationRanking(TranslationRankingOptions(), ObjectiveSetup(encoder=None)), GLOBAL_BATCH - 1),
    (TranslationRanking(TranslationRankingOptions(hard_negatives=True), ObjectiveSetup(encoder=None)),
     2 * GLOBAL_BATCH - 1),
    (UnsupervisedSimCSE(SimCSEOptions(), ObjectiveSetup(encoder=None)), GLOBAL_BATCH - 1),
    (SupervisedSimCSE(SupervisedSimCSEOptions(), ObjectiveSetup(encoder=None)), 2 * GLOBAL_BATCH - 1),
    (EASE.__new__(EASE), 2 * GLOBAL_BATCH - 1),  # only its declarations are read
], ids=["translation_ranking", "translation_ranking+hard", "simcse_unsup", "simcse_sup", "ease"])
def test_in_batch_softmax_objectives_count_their_negatives(objective, negatives):
    assert objective.negatives_per_anchor(GLOBAL_BATCH) == negatives
    assert _note(objective) == f"effective batch {GLOBAL_BATCH}, {negatives} negatives/anchor"
