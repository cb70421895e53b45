"""The promotion rule and the candidate URI checks (no registry needed)."""

import pytest

from interlingua.cluster.promotion import decide, format_decision, parse_version_uri, primary_scores
from interlingua.core.errors import UserError
from interlingua.evaluation.tasks.records import Measurement


def test_first_promotion_is_a_stated_decision():
    decision = decide({"a": 50.0, "b": 10.0}, None, margin=1.0)
    assert decision.promote and decision.reason == "first promotion: the alias has no holder"
    assert decision.candidate_mean == 30.0 and decision.holder_mean is None
    assert "(no holder)" in format_decision(decision, "cand", None)


def test_better_mean_and_no_task_worse_beyond_margin_promotes():
    decision = decide({"a": 80.0, "b": 59.5}, {"a": 70.0, "b": 60.0}, margin=1.0)
    assert decision.promote
    assert [r.delta for r in decision.rows] == [10.0, -0.5]
    assert decision.candidate_mean == pytest.approx(69.75) and decision.holder_mean == pytest.approx(65.0)


def test_one_task_worse_beyond_margin_blocks_despite_a_better_mean():
    decision = decide({"a": 95.0, "b": 58.0}, {"a": 70.0, "b": 60.0}, margin=1.0)
    assert not decision.promote
    assert "worst b: -2.00" in decision.reason


def test_margin_is_inclusive_and_equal_means_do_not_promote():
    assert decide({"a": 71.0, "b": 59.0}, {"a": 70.0, "b": 60.0}, margin=1.0).promote is False  # equal means
    assert decide({"a": 71.5, "b": 59.0}, {"a": 70.0, "b": 60.0}, margin=1.0).promote is True   # -1.0 is within
    assert decide({"a": 71.5, "b": 59.0}, {"a": 70.0, "b": 60.0}, margin=0.99).promote is False


def test_rule_rejects_mismatched_tasks_and_negative_margin():
    with pytest.raises(ValueError, match="different tasks"):
        decide({"a": 1.0}, {"b": 1.0}, margin=0)
    for margin in (-1, float("nan"), float("inf")):  # nan: "worse by more than nan" was never true, every gate passed
        with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
            decide({"a": 10.0, "b": 95.0}, {"a": 50.0, "b": 40.0}, margin=margin)


@pytest.mark.parametrize(("argv", "message"), [
    (["--margin", "nan"], "--margin must be a finite number >= 0; got nan"),
    (["--alias", "bad alias"], r"--alias: 'bad alias' is not a registry alias: use letters and digits \(any script\), "
                               r"'_' and '-', 1 to 255"),
    (["--alias", "v1.2"], "--alias: 'v1.2' is not a registry alias: use letters and digits"),
    (["--alias", "V3"], "reserved by the MLflow registry"),
])
def test_promote_cli_refuses_a_bad_margin_or_alias_before_evaluating(argv, message, monkeypatch, tmp_path):
    """An invalid alias was evaluated for a minute, recorded as 'promoted' on the version, and then refused by
    MLflow when set (exit 1, "not promoted"); --margin nan passed every gate."""
    import argparse

    from interlingua.core.errors import UserError
    from interlingua.workflows.commands import promote as promote_command

    monkeypatch.setattr("interlingua.evaluation.runner.select_tasks", lambda *a: pytest.fail("tasks were selected"))
    parser = argparse.ArgumentParser()
    promote_command.add_arguments(parser)
    base = {"--alias": "champion", "--margin": "0"}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value
    args = parser.parse_args(["models:/enc/1", "--tasks", "bible_retrieval", "--pack", str(tmp_path / "none"),
                              *[item for pair in base.items() for item in pair]])
    with pytest.raises(UserError, match=message):
        promote_command.run(args)


def test_primary_scores_average_the_primary_metric_over_seeds():
    ms = [Measurement("m", "t", "en-es", "accuracy", s, v, True) for s, v in ((1, 10.0), (2, 20.0))]
    ms += [Measurement("m", "t", "en-es", "alignment", 1, 99.0, False), Measurement("other", "t", "en-es", "accuracy", 1, 5.0, True)]
    assert primary_scores(ms, "m") == {"t/en-es": 15.0}


@pytest.mark.parametrize("uri", ["models:/enc@champion", "models:/enc", "runs:/abc/model", "models:/enc/latest", "enc/3"])
def test_candidate_must_name_one_registered_version(uri):
    with pytest.raises(UserError, match="models:/NAME/VERSION"):
        parse_version_uri(uri)


def test_version_uri_parts():
    ref = parse_version_uri("models:/team/enc/12")
    assert (ref.name, ref.version, ref.uri) == ("team/enc", "12", "models:/team/enc/12")


NAN = float("nan")


@pytest.mark.parametrize(("candidate", "holder", "reason"), [
    ({"a": NAN}, {"a": 90.0}, "the candidate scored NaN on task a"),            # "mean nan > 90" passed
    ({"a": 95.0, "b": NAN}, {"a": 90.0, "b": 1.0}, "the candidate scored NaN on task b"),
    ({"a": 95.0}, {"a": NAN}, "the holder scored NaN on task a"),                # "95 > nan" passed
    ({"a": NAN}, None, "the candidate scored NaN on task a"),                    # a nan first promotion
    ({"a": float("inf")}, {"a": 1.0}, "the candidate scored inf on task a"),
])
def test_a_score_that_is_not_a_finite_number_never_promotes(candidate, holder, reason):
    decision = decide(candidate, holder, margin=0.5)
    assert decision.promote is False
    assert decision.reason == reason
