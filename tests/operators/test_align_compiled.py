"""The compiled aligner (numba decoder + symmetrization) equals the NumPy reference link for link."""

import random
from pathlib import Path

import numpy as np
import pytest

from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner, align_reference
from interlingua.operators.align.fast_align_decoder import DirectionalModel
from interlingua.operators.align.fast_align_training import FastAlignParameters, FastAlignSettings, learn_fast_align
from interlingua.operators.align.lexical_table import LexicalTable
from interlingua.operators.align.pharaoh import format_pharaoh
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS

BIBLE = Path(__file__).resolve().parents[2] / ".interlingua" / "assets" / "bible" / "bible-en-es.parquet"


def random_table(rng: np.random.Generator, vocabulary: tuple[str, ...], entries: int) -> LexicalTable:
    stride = len(vocabulary) + 1
    e = rng.integers(1, stride, entries)
    f = rng.integers(1, stride, entries)
    keys = np.unique(e * stride + f)
    # few distinct values, so equal scores (ties) are common
    probabilities = rng.choice([0.5, 0.25, 0.125, 0.3, 1e-3], keys.size)
    return LexicalTable(vocabulary, keys, probabilities)


def random_parameters(seed: int, favor_diagonal: bool, use_null: bool) -> FastAlignParameters:
    rng = np.random.default_rng(seed)
    vocabulary = ("<eps>",) + tuple(f"w{k}" for k in range(40))
    settings = FastAlignSettings(favor_diagonal=favor_diagonal, no_null_word=not use_null)
    models = [DirectionalModel(random_table(rng, vocabulary, 600), float(rng.uniform(0.1, 14)), favor_diagonal, 0.08, use_null)
              for _ in range(2)]
    return FastAlignParameters(models[0], models[1], settings)


def random_pairs(seed: int, count: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    words = [f"w{k}" for k in range(40)] + ["unknown", "|||", "<eps>"]
    sources = [[rng.choice(words) for _ in range(rng.randint(0, 12))] for _ in range(count)]
    targets = [[rng.choice(words) for _ in range(rng.randint(0, 12))] for _ in range(count)]
    return sources, targets


def assert_same_links(parameters, sources, targets, symmetrization, tension_override=None, aligner=None):
    expected = align_reference(parameters, sources, targets, symmetrization, tension_override)
    aligner = aligner or BidirectionalAligner(parameters, symmetrization, tension_override)
    forward, reverse, symmetrized = aligner.align_pharaoh(sources, targets)
    assert forward == [format_pharaoh(p.forward, by_target=True) for p in expected]
    assert reverse == [format_pharaoh(p.reverse) for p in expected]
    assert symmetrized == [format_pharaoh(p.symmetrized) for p in expected]
    pairs = aligner.align(sources, targets)
    assert [(p.forward, p.reverse, p.symmetrized) for p in pairs] == [(p.forward, p.reverse, p.symmetrized) for p in expected]


@pytest.mark.parametrize("favor_diagonal,use_null", [(True, True), (False, True), (True, False), (False, False)])
def test_random_tables_and_pairs_equal_the_reference(favor_diagonal, use_null):
    parameters = random_parameters(7, favor_diagonal, use_null)
    sources, targets = random_pairs(3, 150)
    for symmetrization in SYMMETRIZATIONS:
        assert_same_links(parameters, sources, targets, symmetrization)
    assert_same_links(parameters, sources, targets, "grow-diag-final-and", tension_override=4.0)


def test_learned_parameters_on_real_pairs_equal_the_reference(tmp_path):
    if not BIBLE.exists():
        pytest.skip("Bible asset missing (interlingua assets bible)")
    import pyarrow.parquet as pq

    table = pq.read_table(BIBLE).slice(0, 400).to_pydict()
    sources = [str(s).split() for s in table["en"]]
    targets = [str(t).split() for t in table["es"]]
    parameters = learn_fast_align(zip(sources, targets), str(tmp_path))
    # two batches share one prior cache: the second one reuses shapes computed by the first
    aligner = BidirectionalAligner(parameters)
    assert_same_links(parameters, sources[:200], targets[:200], "grow-diag-final-and", aligner=aligner)
    assert_same_links(parameters, sources, targets, "grow-diag-final-and", aligner=aligner)
    assert_same_links(parameters, sources, targets, "intersect")
