"""Numeric options of the losses and of the objectives' typed options: bools, NaN and ±inf are refused with the
option named (an infinite temperature gives the constant loss log n with zero gradient; a bool was read as 1.0)."""

from __future__ import annotations


import pytest
import torch

from interlingua.trainers.objectives.amr_retrofit import AMRRetrofitLoss, AMRRetrofitOptions
from interlingua.trainers.objectives.contrastive import info_nce
from interlingua.trainers.objectives.ease import EASELoss, EASEOptions
from interlingua.trainers.objectives.explicit_alignment import ContrastiveAlignmentLoss, ExplicitAlignmentOptions
from interlingua.trainers.objectives.options import MIN_TEMPERATURE
from interlingua.trainers.objectives.simcse import SimCSEOptions, SupervisedSimCSELoss, UnsupervisedSimCSELoss
from interlingua.trainers.objectives.translation_ranking import TranslationRankingLoss, TranslationRankingOptions

#: Refused values: an infinite temperature gives cos/inf = 0 for every candidate (the loss log n, its gradient 0); an
#: infinite or NaN margin gives a NaN loss; a bool is not a number even where Python would read True as 1.
BAD = [(float("inf"), "must be a finite number, got inf"), (float("-inf"), "must be a finite number, got -inf"),
       (float("nan"), "must be a finite number, got nan"), (True, "must be a number, got True")]


@pytest.mark.parametrize(("value", "message"), BAD)
@pytest.mark.parametrize("name", ["temperature", "margin"])
def test_info_nce_refuses(name, value, message):
    with pytest.raises(ValueError, match=f"{name} {message}"):
        info_nce(torch.randn(2, 3), torch.randn(2, 3), **{name: value})


@pytest.mark.parametrize(("value", "message"), BAD)
@pytest.mark.parametrize(("build", "name"), [
    (lambda v: TranslationRankingLoss(temperature=v), "temperature"),
    (lambda v: TranslationRankingLoss(margin=v), "margin"),
    (lambda v: UnsupervisedSimCSELoss(v), "temperature"),
    (lambda v: SupervisedSimCSELoss(v), "temperature"),
    (lambda v: AMRRetrofitLoss(v), "temperature"),
    (lambda v: EASELoss(entity_temperature=v), "entity_temperature"),
    (lambda v: EASELoss(simcse_temperature=v), "simcse_temperature"),
    (lambda v: EASELoss(simcse_weight=v), "simcse_weight"),
    (lambda v: EASELoss(entity_weight=v), "entity_weight"),
    (lambda v: ContrastiveAlignmentLoss(4, temperature=v), "temperature"),
    (lambda v: ContrastiveAlignmentLoss(4, regularization_weight=v), "regularization_weight"),
])
def test_loss_classes_refuse(build, name, value, message):
    with pytest.raises(ValueError, match=f"{name} {message}"):
        build(value)


@pytest.mark.parametrize(("value", "message"), BAD)
@pytest.mark.parametrize(("options", "name"), [
    (TranslationRankingOptions, "temperature"), (TranslationRankingOptions, "margin"), (SimCSEOptions, "temperature"),
    (AMRRetrofitOptions, "temperature"), (ExplicitAlignmentOptions, "temperature"),
    (ExplicitAlignmentOptions, "regularization_weight"), (ExplicitAlignmentOptions, "orthogonality_beta"),
    (EASEOptions, "temperature"), (EASEOptions, "ease_lambda"), (EASEOptions, "ease_entity_weight"),
])
def test_options_refuse(options, name, value, message):
    required = {"entity_vectors": "vectors.txt"} if options is EASEOptions else {}
    if options is ExplicitAlignmentOptions and name == "orthogonality_beta":
        required["method"] = "linear"
    with pytest.raises(ValueError, match=f"{name} {message}"):
        options(**required, **{name: value})


def test_options_still_take_numbers_written_as_text_and_ints():
    assert TranslationRankingOptions(temperature="0.1", margin=0).temperature == 0.1
    assert TranslationRankingOptions(temperature=1).temperature == 1.0
    with pytest.raises(ValueError, match="greater than or equal to 0.0001"):
        TranslationRankingOptions(temperature=0)
    for text in ("inf", "-Infinity", "nan", "1e999"):  # YAML/CLI text: the same message as a float
        with pytest.raises(ValueError, match=f"margin must be a finite number, got '{text}'"):
            TranslationRankingOptions(margin=text)
    with pytest.raises(ValueError, match="margin = 'wide': Input should be a valid number"):  # other text: pydantic's
        TranslationRankingOptions(margin="wide")


TEMPERATURE_OPTIONS = [TranslationRankingOptions, SimCSEOptions, AMRRetrofitOptions, ExplicitAlignmentOptions,
                       EASEOptions]
TEMPERATURE_LOSSES = [
    lambda v: info_nce(torch.randn(2, 3), torch.randn(2, 3), temperature=v),
    lambda v: TranslationRankingLoss(temperature=v), lambda v: UnsupervisedSimCSELoss(v),
    lambda v: SupervisedSimCSELoss(v), lambda v: AMRRetrofitLoss(v), lambda v: EASELoss(entity_temperature=v),
    lambda v: EASELoss(simcse_temperature=v), lambda v: ContrastiveAlignmentLoss(4, temperature=v),
]


@pytest.mark.parametrize("value", [1e-40, 5e-5, 0.0])
@pytest.mark.parametrize("build", TEMPERATURE_LOSSES)
def test_a_temperature_below_the_floor_is_refused(build, value):
    """1e-40 passed the old "> 0" check and gave a NaN loss (1/τ overflows float32); the floor is MIN_TEMPERATURE."""
    with pytest.raises(ValueError, match=r"temperature must be a number >= 0.0001 \(a softmax temperature\)"):
        build(value)


@pytest.mark.parametrize("options", TEMPERATURE_OPTIONS)
def test_option_fields_share_the_floor(options):
    required = {"entity_vectors": "vectors.txt"} if options is EASEOptions else {}
    assert options(**required, temperature=MIN_TEMPERATURE).temperature == MIN_TEMPERATURE
    with pytest.raises(ValueError, match="temperature = 1e-40: Input should be greater than or equal to 0.0001"):
        options(**required, temperature=1e-40)


def test_the_floor_gives_a_finite_loss_and_gradient():
    """At the floor the loss and its gradient stay finite (the NaN came from 1/τ overflowing, far below it)."""
    anchors = torch.randn(4, 8, requires_grad=True)
    loss = info_nce(anchors, torch.randn(4, 8), temperature=MIN_TEMPERATURE)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(anchors.grad).all()
