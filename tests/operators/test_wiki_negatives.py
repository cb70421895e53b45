"""Hard negatives (same P31 type, not on the page) and deterministic sampling caps."""

import itertools

import numpy as np
import pytest
from interlingua.operators.wiki.hard_negatives import NO_CANDIDATE, NO_TYPE, HardNegativeSampler
from interlingua.operators.wiki.sampling_caps import capped_mask, pair_priority

TYPES = {
    "Q1": ("city",),
    "Q2": ("city",),
    "Q3": ("city",),
    "Q4": ("city", "capital"),
    "Q10": ("person",),
    "Q11": ("person",),
    "Q20": ("capital",),
}


def test_negatives_share_a_type_and_avoid_the_page():
    sampler = HardNegativeSampler(TYPES, TYPES, k=1, seed=7)
    page = {"Q1", "Q2", "Q10"}
    for i in range(200):
        (negative,), reason = sampler.sample("Q1", page, f"pair-{i}")
        assert reason is None
        assert negative not in page and negative != "Q1"
        assert set(TYPES[negative]) & set(TYPES["Q1"])
        assert negative in {"Q3", "Q4"}


def test_random_type_is_chosen_when_an_entity_has_several():
    sampler = HardNegativeSampler(TYPES, TYPES, k=1, seed=0)
    drawn = {sampler.sample("Q4", {"Q4"}, f"k{i}")[0][0] for i in range(100)}
    assert drawn == {"Q1", "Q2", "Q3", "Q20"}


def test_draws_are_deterministic_and_k_distinct():
    first = HardNegativeSampler(TYPES, TYPES, k=2, seed=3)
    second = HardNegativeSampler(reversed(list(TYPES)), TYPES, k=2, seed=3)
    for i in range(50):
        negatives, _ = first.sample("Q1", set(), f"p{i}")
        assert negatives == second.sample("Q1", set(), f"p{i}")[0]
        assert len(set(negatives)) == 2
    assert any(
        first.sample("Q1", set(), f"p{i}")[0]
        != HardNegativeSampler(TYPES, TYPES, k=2, seed=4).sample("Q1", set(), f"p{i}")[0]
        for i in range(50)
    )


def test_no_candidate_and_no_type_are_reported():
    sampler = HardNegativeSampler(TYPES, TYPES, k=1, seed=0)
    assert sampler.sample("Q10", {"Q11"}, "x") == ([], NO_CANDIDATE)
    assert sampler.sample("Q99", set(), "x") == ([], NO_TYPE)
    assert HardNegativeSampler(TYPES, TYPES, k=5).sample("Q1", set(), "x") == ([], NO_CANDIDATE)
    untyped = HardNegativeSampler(["A", "B"], {}, k=1, untyped=True)
    assert untyped.sample("A", set(), "x") == (["B"], None)
    with pytest.raises(ValueError, match="k"):
        HardNegativeSampler(TYPES, TYPES, k=0)


def test_caps_match_a_brute_force_reference():
    rng = np.random.default_rng(0)
    langs = rng.choice(["en", "bg"], size=300).astype(object)
    entities = rng.choice([f"Q{i}" for i in range(8)], size=300).astype(object)
    priorities = np.array([pair_priority(1, f"pair{i}") for i in range(300)], dtype=np.int64)
    mask = capped_mask(langs, entities, priorities, per_entity=20, per_language=60)
    order = sorted(range(300), key=lambda i: priorities[i])
    per_entity = {}
    survivors = []
    for i in order:
        per_entity[entities[i]] = per_entity.get(entities[i], 0) + 1
        if per_entity[entities[i]] <= 20:
            survivors.append(i)
    expected = set()
    for _lang, group in itertools.groupby(
        sorted(survivors, key=lambda i: (langs[i], priorities[i])), key=lambda i: langs[i]
    ):
        expected |= set(list(group)[:60])
    assert set(np.flatnonzero(mask)) == expected
    assert mask.sum() == 120


def test_caps_are_validated_and_priority_is_stable():
    assert pair_priority(0, "a") == pair_priority(0, "a") != pair_priority(1, "a")
    with pytest.raises(ValueError, match="per_entity"):
        capped_mask(np.array(["en"]), np.array(["Q1"]), np.array([1]), 0, 1)


def test_an_entity_type_with_nothing_left_never_drops_a_pair_another_type_can_serve():
    types = {"E": ("rare", "common"), "R": ("rare",), "C1": ("common",), "C2": ("common",)}
    sampler = HardNegativeSampler(types, types, k=1, seed=0)
    for i in range(100):  # the only other "rare" entity is on the page: "common" must be chosen every time
        (negative,), reason = sampler.sample("E", {"R"}, f"p{i}")
        assert reason is None and negative in {"C1", "C2"}
    assert sampler.sample("E", {"R", "C1", "C2"}, "x") == ([], NO_CANDIDATE)


def test_k_negatives_may_come_from_the_union_of_the_entity_types():
    types = {"E": ("a", "b"), "A1": ("a",), "B1": ("b",), "X": ("c",)}
    sampler = HardNegativeSampler(types, types, k=2, seed=1)
    negatives, reason = sampler.sample("E", set(), "p")
    assert reason is None and sorted(negatives) == ["A1", "B1"]
    assert HardNegativeSampler(types, types, k=3).sample("E", set(), "p") == ([], NO_CANDIDATE)


def test_negatives_are_only_kept_entities_and_never_on_the_page():
    types = {f"Q{i}": ("city",) for i in range(40)}
    kept = [f"Q{i}" for i in range(20)]  # Q20.. are typed but not linked often enough
    sampler = HardNegativeSampler(kept, types, k=3, seed=5)
    page = {f"Q{i}" for i in range(0, 20, 2)}
    for i in range(200):
        negatives, reason = sampler.sample("Q1", page, f"pair{i}")
        assert reason is None and len(set(negatives)) == 3
        assert not set(negatives) & (page | {"Q1"}) and set(negatives) <= set(kept)


def test_untyped_negatives_come_from_the_pairs_own_language():
    # titles as ids: English ids bare, German ids "dewiki:"-prefixed, as the titles catalog mints them
    english, german = ["Paris", "Rome", "Berlin", "Madrid"], ["dewiki:Paris", "dewiki:Rom", "dewiki:Berlin"]
    kept = english + german + ["Oslo"]  # Oslo: kept, but no pair of either language links it here
    sampler = HardNegativeSampler(kept, {}, k=1, seed=2, untyped=True, language_entities={"en": english, "de": german})
    seen = {"en": set(), "de": set()}
    for i in range(200):
        (negative,), reason = sampler.sample("Paris", {"Paris", "Rome"}, f"en{i}", "en")
        assert reason is None and negative in {"Berlin", "Madrid"}  # English, not on the page, not Paris
        seen["en"].add(negative)
        (negative,), reason = sampler.sample("dewiki:Paris", {"dewiki:Rom"}, f"de{i}", "de")
        assert reason is None and negative == "dewiki:Berlin"
        seen["de"].add(negative)
    assert seen == {"en": {"Berlin", "Madrid"}, "de": {"dewiki:Berlin"}}
    # the page check bites within the language: German candidates exhausted although English ones remain
    assert sampler.sample("dewiki:Paris", {"dewiki:Rom", "dewiki:Berlin"}, "x", "de") == ([], NO_CANDIDATE)
    assert sampler.sample("Paris", set(), "x", "fr") == ([], NO_CANDIDATE)  # a language with no entities
    with pytest.raises(ValueError, match="per language.*lang="):
        sampler.sample("Paris", set(), "x")  # no language: refused, not every pair dropped as without candidates
    two = HardNegativeSampler(kept, {}, k=2, seed=2, untyped=True, language_entities={"en": english, "de": german})
    negatives, reason = two.sample("Paris", {"Rome"}, "y", "en")
    assert reason is None and sorted(negatives) == ["Berlin", "Madrid"]
