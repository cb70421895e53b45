"""The line ``interlingua promote`` prints for its decision (no registry needed)."""

import math

from interlingua.cluster.promotion import ModelVersionRef, PromotionResult, decide
from interlingua.workflows.commands.promote import outcome_line


def _result(holder_scores, *, moved: bool, dry_run: bool = False) -> PromotionResult:
    holder = ModelVersionRef("enc", "1") if holder_scores is not None else None
    decision = decide({"a": 50.0}, holder_scores, margin=0.0)
    return PromotionResult(ModelVersionRef("enc", "2"), "champion", holder, decision, "", moved, dry_run)


def test_a_first_promotion_says_once_that_the_alias_had_no_holder():
    """It said "(was no holder): first promotion: the alias has no holder"."""
    first = _result(None, moved=True)
    assert outcome_line(first, "champion", dry_run=False) == (
        "promoted: models:/enc/2 now holds @champion: first promotion: the alias has no holder")
    assert outcome_line(_result(None, moved=False, dry_run=True), "champion", dry_run=True) == (
        "dry run: @champion would move to models:/enc/2: first promotion: the alias has no holder")
    nan = PromotionResult(ModelVersionRef("enc", "2"), "champion", None, decide({"a": math.nan}, None, margin=0.0),
                          "", False, False)
    assert outcome_line(nan, "champion", dry_run=False).startswith("not promoted: @champion stays without a holder: ")


def test_a_promotion_over_a_holder_names_it():
    assert outcome_line(_result({"a": 40.0}, moved=True), "champion", dry_run=False).startswith(
        "promoted: models:/enc/2 now holds @champion (was models:/enc/1): ")
    assert outcome_line(_result({"a": 60.0}, moved=False), "champion", dry_run=False).startswith(
        "not promoted: @champion stays on models:/enc/1: ")
