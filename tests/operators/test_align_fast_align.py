"""fast_align learning (systran-align), table reading, directional decoding against a brute-force
reference of fast_align's model, and agreement with systran_align's own aligner."""

import dataclasses
import math
import random
from ctypes import c_uint32

import numpy as np
import pytest

from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner, align_reference
from interlingua.operators.align.fast_align_decoder import DirectionalModel, decode_directional, diagonal_partition, to_ids
from interlingua.operators.align.fast_align_training import FastAlignParameters, FastAlignSettings, learn_fast_align, learned_tensions
from interlingua.operators.align.lexical_table import UNSEEN_PROBABILITY, LexicalTable, read_systran_table
from interlingua.operators.align.pharaoh import parse_pharaoh

LEXICON = {"the": "das", "house": "haus", "is": "ist", "small": "klein", "big": "gross", "book": "buch",
           "a": "ein", "old": "alt", "green": "gruen", "car": "auto", "red": "rot", "man": "mann"}


def synthetic_corpus(n: int, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    words = sorted(LEXICON)
    pairs = []
    for _ in range(n):
        src = [rng.choice(words) for _ in range(rng.randint(2, 8))]
        tgt = [LEXICON[w] for w in src]
        if len(tgt) > 3 and rng.random() < 0.3:  # local reordering
            k = rng.randrange(len(tgt) - 1)
            tgt[k], tgt[k + 1] = tgt[k + 1], tgt[k]
        pairs.append((src, tgt))
    return pairs


def varied_corpus(n: int, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    """Pairs of 1-25 source words whose targets drop some words, insert function words and swap neighbours, so source
    and target lengths differ (both ways)."""
    rng = random.Random(seed)
    lexicon = {f"e{k}": f"f{k}" for k in range(60)}
    words = sorted(lexicon)
    pairs = []
    for _ in range(n):
        src = [rng.choice(words) for _ in range(rng.randint(1, 25))]
        tgt = []
        for word in src:
            r = rng.random()
            if r >= 0.1:
                tgt.append(lexicon[word])
            if r > 0.8:
                tgt.append(rng.choice(["la", "de", "que", "el"]))
        tgt = tgt or ["x"]
        if len(tgt) > 3 and rng.random() < 0.5:
            k = rng.randrange(len(tgt) - 1)
            tgt[k], tgt[k + 1] = tgt[k + 1], tgt[k]
        pairs.append((src, tgt))
    return pairs


def learn_with_systran(pairs, directory: str, settings: FastAlignSettings = FastAlignSettings()) -> FastAlignParameters:
    """systran-align's learner on one OpenMP thread: fast_align increments its counts without locks, so on several
    threads updates are lost at random and no two runs give the same tables."""
    from threadpoolctl import threadpool_limits

    import systran_align  # noqa: F401  (its OpenMP runtime loaded, so the limit reaches it)

    with threadpool_limits(1, user_api="openmp"):
        return learn_fast_align(pairs, directory, settings, learner="systran")


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("fast_align"))
    corpus = synthetic_corpus(300)
    parameters = learn_fast_align(corpus + [([], ["leer"])], directory, FastAlignSettings(iterations=5))
    return directory, parameters, corpus


def brute_force_viterbi(model: DirectionalModel, cond: list[int], pred: list[int]) -> list[tuple[int, int]]:
    """fast_align's output loop written out cell by cell (Z summed directly, not in closed form)."""
    n, m, p0, lam = len(cond), len(pred), model.prob_align_null, model.tension
    t = lambda e, f: float(model.table.lookup(np.array([e]), np.array([f]))[0])
    links = []
    for j in range(1, m + 1):
        z = sum(math.exp(-lam * abs(i / n - j / m)) for i in range(1, n + 1))
        best_i, best_p = 0, p0 * t(model.table.null_id, pred[j - 1])
        for i in range(1, n + 1):
            p = (1 - p0) * math.exp(-lam * abs(i / n - j / m)) / z * t(cond[i - 1], pred[j - 1])
            if p > best_p:
                best_i, best_p = i, p
        if best_i:
            links.append((best_i - 1, j - 1))
    return links


def fast_align_compute_z(i, m, n, alpha):
    """fast_align's ``DiagonalAlignment::ComputeZ`` written out with its ``unsigned`` ints as 32-bit C ints and libm's
    exp / pow (CPython's math module calls them)."""
    split = float(i) * n / m
    floor = c_uint32(int(split)).value
    ceil = c_uint32(floor + 1).value
    ratio = math.exp(-alpha / n)
    num_top = c_uint32(n - floor).value
    ezt = ezb = 0.0
    if num_top:
        ezt = math.exp(-abs(ceil / n - i / m) * alpha) * (1.0 - math.pow(ratio, num_top)) / (1.0 - ratio)
    if floor:
        ezb = math.exp(-abs(floor / n - i / m) * alpha) * (1.0 - math.pow(ratio, floor)) / (1.0 - ratio)
    return ezb + ezt


def fast_align_dlog_z(i, m, n, alpha):
    """fast_align's ``ComputeDLogZ`` likewise: its Z call swaps m and n (so its ``num_top`` wraps for i > n)."""
    def series(a_1, g_1, r, d, count):  # arithmetico_geometric_series
        g_np1 = g_1 * math.pow(r, count)
        a_n = d * c_uint32(count - 1).value + a_1
        return (a_n * g_np1 - a_1 * g_1) / (r - 1) - d * (g_np1 - g_1 * r) / ((r - 1) * (r - 1))

    z = fast_align_compute_z(i, n, m, alpha)
    floor = c_uint32(int(float(i) * n / m)).value
    ceil = c_uint32(floor + 1).value
    ratio, d = math.exp(-alpha / n), -1.0 / n
    num_top = c_uint32(n - floor).value
    pct = pcb = 0.0
    if num_top:
        feature = -abs(ceil / n - i / m)
        pct = series(feature, math.exp(feature * alpha), ratio, d, num_top)
    if floor:
        feature = -abs(floor / n - i / m)
        pcb = series(feature, math.exp(feature * alpha), ratio, d, floor)
    return (pct + pcb) / z


def fast_align_viterbi(model: DirectionalModel, cond: list[int], pred: list[int]) -> list[tuple[int, int]]:
    """fast_align's output loop bit for bit: its prior ``exp(Feature * tension) / (ComputeZ / (1 - p0))`` with libm's
    exp and pow, scores ``t * prior``, the best position by a strict ``>`` from NULL on (ties: the earlier one)."""
    n, m, p0, lam = len(cond), len(pred), model.prob_align_null, model.tension
    t = lambda e, f: float(model.table.lookup(np.array([e]), np.array([f]))[0])
    links = []
    for j in range(m):
        best_i, best_p = 0, t(model.table.null_id, pred[j]) * p0
        az = fast_align_compute_z(j + 1, m, n, lam) / (1.0 - p0)
        for i in range(1, n + 1):
            p = t(cond[i - 1], pred[j]) * (math.exp(-abs(i / n - (j + 1) / m) * lam) / az)
            if p > best_p:
                best_i, best_p = i, p
        if best_i:
            links.append((best_i - 1, j))
    return links


def test_diagonal_partition_is_the_sum_of_the_unnormalized_prior():
    for n, m, lam in [(1, 1, 4.0), (5, 7, 4.0), (9, 3, 0.7), (12, 12, 14.0)]:
        for j in range(1, m + 1):
            direct = sum(math.exp(-lam * abs(i / n - j / m)) for i in range(1, n + 1))
            assert diagonal_partition(j, m, n, lam) == pytest.approx(direct, rel=1e-12)


def test_learning_saves_tables_and_tensions(learned):
    directory, parameters, _ = learned
    forward = read_systran_table(f"{directory}/forward.bin")
    assert "<eps>" in forward.vocabulary and "house" in forward.vocabulary and "haus" in forward.vocabulary
    ids = forward.word_ids
    assert forward.lookup(np.array([ids["house"]]), np.array([ids["haus"]]))[0] > 0.5
    assert forward.lookup(np.array([ids["house"]]), np.array([ids["house"]]))[0] == UNSEEN_PROBABILITY
    assert 0.1 <= parameters.forward.tension <= 14 and 0.1 <= parameters.reverse.tension <= 14
    loaded = FastAlignParameters.load(directory)  # the unpruned tables it keeps too
    assert loaded.forward.tension == parameters.forward.tension
    assert np.array_equal(loaded.reverse.table.keys, parameters.unpruned.reverse.table.keys)


def test_decoder_equals_brute_force_reference(learned):
    _, parameters, corpus = learned
    sentences = corpus[:60] + [(["the", "unknownword", "house"], ["das", "haus", "neu"])]
    for model, (cond_side, pred_side) in ((parameters.forward, (0, 1)), (parameters.reverse, (1, 0))):
        cond = to_ids(model.table, [p[cond_side] for p in sentences])
        pred = to_ids(model.table, [p[pred_side] for p in sentences])
        fast = decode_directional(model, cond, pred)
        for c, p, links in zip(cond, pred, fast):
            assert sorted(links) == sorted(brute_force_viterbi(model, list(c), list(p)))


def test_ties_go_to_the_earlier_position_as_in_fast_align(learned):
    """Target positions 6, 8, 10 of 46 lie halfway between two of 23 source positions with the same t(haus | house):
    fast_align keeps the earlier one. NumPy's exp of the two exponents (one ulp apart) differed, libm's does not, so
    with NumPy's exp the later position won (3-6 4-8 5-10)."""
    import systran_align

    directory, parameters, _ = learned
    sources, targets = [["house"] * 23], [["haus"] * 46]
    model = dataclasses.replace(parameters.forward, tension=4.0)
    ids = model.table.word_ids
    expected = fast_align_viterbi(model, [ids["house"]] * 23, [ids["haus"]] * 46)
    assert {(2, 6), (3, 8), (4, 10)} <= set(expected) and not {(3, 6), (4, 8), (5, 10)} & set(expected)
    forward, _, symmetrized = BidirectionalAligner(parameters, tension_override=4.0).align_pharaoh(sources, targets)
    assert set(parse_pharaoh(forward[0])) == set(expected)
    assert set(align_reference(parameters, sources, targets, tension_override=4.0)[0].forward) == set(expected)
    theirs = systran_align.Aligner(f"{directory}/forward.bin", f"{directory}/reverse.bin").align_batch(sources, targets)
    assert set(parse_pharaoh(symmetrized[0])) == set(map(tuple, theirs[0]["alignments"]))


def test_prior_values_are_libm_exp_where_numpy_exp_differs():
    """The cached prior equals fast_align's expression with libm's exp bit for bit, also where NumPy's exp differs:
    exp(-0.08695652173913049) is 0.916716952025486372880... (correctly rounded 0.9167169520254864, libm's), NumPy's
    AVX-512 kernel gives 0.9167169520254863 (about 5 % of these values differ in the last bit on such CPUs)."""
    from interlingua.operators.align.compiled_decoder import DiagonalPriorCache

    tension, p0 = 4.0, 0.08
    cache = DiagonalPriorCache(DirectionalModel(LexicalTable.uninitialized(("<eps>",)), tension), conditioning_major=True)
    shapes = [(23, 46)] + [(n, m) for n in range(1, 25) for m in range(1, 25)]
    offsets = cache.offsets_for(np.array([n for n, _ in shapes]), np.array([m for _, m in shapes]))
    for (n, m), at in zip(shapes, offsets.tolist()):
        expected = [math.exp(-abs(i / n - j / m) * tension) / (fast_align_compute_z(j, m, n, tension) / (1.0 - p0))
                    for i in range(1, n + 1) for j in range(1, m + 1)]
        assert cache.values[at:at + n * m].tolist() == expected
    at = int(offsets[0]) + (3 - 1) * 46 + (7 - 1)  # source position 3 of 23, target position 7 of 46
    assert cache.values[at] == 0.9167169520254864 / (fast_align_compute_z(7, 46, 23, tension) / (1.0 - p0))


def test_matches_systran_aligner_with_its_default_tension(learned):
    # systran_align.Aligner symmetrizes with grow-diag-final-and and decodes with tension 4.0.
    import systran_align

    directory, parameters, corpus = learned
    theirs = systran_align.Aligner(f"{directory}/forward.bin", f"{directory}/reverse.bin").align_batch(
        [s for s, _ in corpus], [t for _, t in corpus])
    ours = BidirectionalAligner(parameters, "grow-diag-final-and", tension_override=4.0).align(
        [s for s, _ in corpus], [t for _, t in corpus])
    same = sum(set(map(tuple, t["alignments"])) == o.symmetrized for t, o in zip(theirs, ours))
    assert same / len(corpus) >= 0.95


@pytest.mark.parametrize("iterations", [1, 2])
@pytest.mark.parametrize("learner", ["interlingua", "systran"])
def test_one_or_two_iterations_align_as_systran_aligner(tmp_path, learner, iterations):
    # fast_align -I 1 never normalizes: t(f | e) is 1e-9 for every pair, the links come from the prior alone
    # (systran-align's table then holds zeroed counts, which its Aligner reads as 1e-9); -I 2 normalizes once and
    # optimizes no tension, so the learned tension is Aligner's 4.0 in both
    import systran_align

    corpus = synthetic_corpus(120)
    sources, targets = [s for s, _ in corpus], [t for _, t in corpus]
    reference = learn_fast_align(corpus, str(tmp_path / "systran"), FastAlignSettings(iterations=iterations), learner="systran")
    theirs = [set(map(tuple, r["alignments"])) for r in systran_align.Aligner(
        str(tmp_path / "systran" / "forward.bin"), str(tmp_path / "systran" / "reverse.bin")).align_batch(sources, targets)]
    parameters = reference if learner == "systran" else learn_fast_align(
        corpus, str(tmp_path / "ours"), FastAlignSettings(iterations=iterations), learner=learner)
    assert (parameters.forward.tension, parameters.reverse.tension) == (4.0, 4.0)
    ours = BidirectionalAligner(parameters).align(sources, targets)
    same = [o.symmetrized == t for o, t in zip(ours, theirs)]
    if iterations == 1:
        assert all(same) and all(len(o.symmetrized) >= min(len(s), len(t)) for o, s, t in zip(ours, sources, targets))
        assert parameters.forward.table.keys.size == parameters.reverse.table.keys.size == 0
    else:
        assert sum(same) / len(corpus) >= 0.95
    reference_links = align_reference(parameters, sources, targets)
    assert [(o.forward, o.reverse, o.symmetrized) for o in ours] == [(r.forward, r.reverse, r.symmetrized) for r in reference_links]


def test_empty_side_gives_empty_alignment(learned):
    _, parameters, _ = learned
    result = BidirectionalAligner(parameters).align([[], ["the"]], [["das"], []])
    assert [(r.forward, r.reverse, r.symmetrized) for r in result] == [([], [], set()), ([], [], set())]


def test_learned_tensions_from_the_log():
    log = ("  1  model al-feat: -0.1 (tension=4)\n     final tension: 3.5\n     final tension: 2.25\n"
           "conditional probabilities: f.bin\nITERATION 1\n     final tension: 7\nconditional probabilities: b.bin\n")
    assert learned_tensions(log, 4.0, "f.bin", "b.bin") == (2.25, 7.0)
    assert learned_tensions("conditional probabilities: f.bin\nconditional probabilities: b.bin\n", 4.0, "f.bin", "b.bin") == (4.0, 4.0)
    with pytest.raises(RuntimeError, match="b.bin"):
        learned_tensions("conditional probabilities: f.bin\n", 4.0, "f.bin", "b.bin")


def test_settings_are_validated():
    with pytest.raises(ValueError, match="iterations"):
        FastAlignSettings(iterations=0)
    with pytest.raises(ValueError, match="prob_align_null"):
        FastAlignSettings(prob_align_null=1.5)


def test_learning_needs_a_non_empty_pair(tmp_path):
    with pytest.raises(ValueError, match="no sentence pair"):
        learn_fast_align([([], ["x"])], str(tmp_path))


def _learn_systran_in(tmp_path, monkeypatch, pairs):
    """Learn with the systran learner; the system temp folder is ``tmp_path/system_tmp`` (must stay empty)."""
    import tempfile

    system_tmp = tmp_path / "system_tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    directory = tmp_path / "params"
    try:
        return learn_fast_align(pairs, str(directory), FastAlignSettings(iterations=2), learner="systran")
    finally:
        assert list(system_tmp.iterdir()) == []


def test_systran_learner_leaves_only_its_parameters(tmp_path, monkeypatch):
    _learn_systran_in(tmp_path, monkeypatch, synthetic_corpus(40))
    assert sorted(p.name for p in (tmp_path / "params").iterdir()) == [
        "fast_align_params.json", "forward.bin", "forward.npz", "reverse.bin", "reverse.npz"]


def test_a_failing_systran_learner_cleans_up_and_reports_its_log(tmp_path, monkeypatch):
    import os
    import sys
    import types

    def failing(corpus, forward, reverse, **settings):
        os.write(2, b"ARG=0\nexpected target length = source length * 1.1\nout of memory in iteration 1\n")
        raise MemoryError("std::bad_alloc")

    monkeypatch.setitem(sys.modules, "systran_align", types.SimpleNamespace(generate_alignment_probabilities=failing))
    with pytest.raises(RuntimeError, match="(?s)fast_align failed: std::bad_alloc; its log ends:\n.*out of memory in iteration 1"):
        _learn_systran_in(tmp_path, monkeypatch, synthetic_corpus(10))
    assert list((tmp_path / "params").iterdir()) == []  # neither the training corpus nor the log stays
