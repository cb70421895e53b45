"""Our fast_align EM: sharded E-step equals one process, runs are byte-identical, tables are pickle-free."""

import hashlib
import io
import math
import os

import numpy as np
import pytest

from interlingua.operators.align import fast_align_em
from interlingua.operators.align.fast_align_em import (
    InProcessExecutor, MStepRanges, _cuts, _groups, digamma, dlog_partition, encode_corpus, learn_tables, merge_distinct,
    partition, positions_in, sorted_distinct)
from interlingua.operators.align.fast_align_decoder import diagonal_partition
from interlingua.operators.align.fast_align_training import FastAlignParameters, FastAlignSettings, learn_fast_align
from interlingua.operators.align.lexical_table import LexicalTable, read_systran_table

from .test_align_fast_align import fast_align_compute_z, fast_align_dlog_z, learn_with_systran, synthetic_corpus, varied_corpus


def digest(directory) -> dict[str, str]:
    return {name: hashlib.sha256(open(os.path.join(directory, name), "rb").read()).hexdigest()
            for name in ("forward.npz", "reverse.npz", "forward.bin", "reverse.bin", "fast_align_params.json")}


def test_closed_forms_match_direct_sums():
    for n, m, lam in [(1, 1, 4.0), (5, 7, 4.0), (9, 3, 0.7), (12, 12, 14.0)]:
        for j in range(1, m + 1):
            h = np.array([-abs(i / n - j / m) for i in range(1, n + 1)])
            assert partition(j, m, n, lam) == pytest.approx(np.exp(lam * h).sum(), rel=1e-12)
    # fast_align's ComputeDLogZ normalizes by Z(j, n, m) (arguments swapped, as published); for n == m it is E[h]
    n = m = 6
    for j in range(1, m + 1):
        h = np.array([-abs(i / n - j / m) for i in range(1, n + 1)])
        w = np.exp(4.0 * h)
        assert dlog_partition(j, m, n, 4.0) == pytest.approx((h * w).sum() / w.sum(), rel=1e-9)
    assert digamma(1.0) == pytest.approx(-0.5772156649, abs=1e-8)


def test_model_feature_wraps_as_fast_align_unsigned_arithmetic():
    """ComputeDLogZ's Z takes m and n swapped; for a target position past the source length its unsigned num_top wraps
    and pow(ratio, num_top) is 0. Computed signed, pow blew up: this shape summed to +4.9408, compiled fast_align
    gives -0.629533."""
    assert sum(dlog_partition(j, 7, 4, 4.0) for j in range(1, 8)) == pytest.approx(-0.629533, abs=1e-6)
    shape_m, shape_n, counts, total = [], [], [], 0.0
    for m in range(1, 13):
        for n in range(1, 13):
            for tension in (0.1, 0.7, 4.0, 14.0):
                for j in range(1, m + 1):
                    # libm's exp and pow in fast_align's order: the same bits (numba's integer-exponent pow differed)
                    assert dlog_partition(j, m, n, tension) == fast_align_dlog_z(j, m, n, tension)
                    # the swapped Z, compiled and NumPy
                    assert fast_align_em._partition(j, n, m, tension, math.exp(-tension / m)) == pytest.approx(
                        fast_align_compute_z(j, n, m, tension), rel=1e-12)
                    assert float(diagonal_partition(j, n, m, tension)) == pytest.approx(
                        fast_align_compute_z(j, n, m, tension), rel=1e-12)
            shape_m.append(m)
            shape_n.append(n)
            counts.append(float(m + 2 * n))
            total += counts[-1] * sum(fast_align_dlog_z(j, m, n, 4.0) for j in range(1, m + 1))
    feature = fast_align_em.model_feature(np.array(shape_m), np.array(shape_n), np.array(counts), 4.0)
    assert feature == pytest.approx(total, rel=1e-12)


def test_learned_tensions_agree_with_systran_learner(tmp_path):
    """systran-align runs fast_align's own C++ learner: on pairs of different lengths (where ComputeDLogZ's wrap
    matters) our tensions equal its up to summation order. With the signed num_top they were 13.55 / 11.39 against
    its 8.28 / 11.21 on 611 such pairs."""
    corpus = varied_corpus(400, seed=1)
    ours = learn_fast_align(corpus, str(tmp_path / "ours"))
    theirs = learn_with_systran(corpus, str(tmp_path / "systran"))
    assert ours.forward.tension == pytest.approx(theirs.forward.tension, rel=1e-4)
    assert ours.reverse.tension == pytest.approx(theirs.reverse.tension, rel=1e-4)


def fast_align_vb_tables(pairs, updates: int, use_null: bool, alpha: float = 0.01) -> dict[tuple[str, str], float]:
    """fast_align ``-v`` (uniform prior, no ``-d``) written out with dicts: its table holds each pair's (source, target)
    co-occurrences and, with the NULL word, ("<eps>", target) for each target; a token spelled "<eps>" is that NULL
    word. Each update: posteriors from the current table (1e-9 before the first), then per row
    t = exp(digamma(count + alpha) - digamma(sum of (count + alpha))). Returns t of every entry, beam-pruned as exported."""
    counts: dict[str, dict[str, float]] = {}
    for src, tgt in pairs:
        for e in (["<eps>"] if use_null else []) + src:
            counts.setdefault(e, {}).update({f: 0.0 for f in tgt})
    table = None
    for _ in range(updates):
        for src, tgt in pairs:
            uniform = 1.0 / (len(src) + use_null)
            for f in tgt:
                conditioning = (["<eps>"] if use_null else []) + src
                probs = [(table[e][f] if table else 1e-9) * uniform for e in conditioning]
                total = sum(probs)
                for e, p in zip(conditioning, probs):
                    counts[e][f] += p / total
        table = {}
        for e, row in counts.items():
            digamma_total = digamma(sum(c + alpha for c in row.values()) or 1.0)
            table[e] = {f: math.exp(digamma(c + alpha) - digamma_total) for f, c in row.items()}
            counts[e] = dict.fromkeys(row, 0.0)
    return {(e, f): t for e, row in table.items() for f, t in row.items() if math.log(t) >= 4 * math.log(max(row.values()))}


def _entries(table: LexicalTable) -> dict[tuple[str, str], float]:
    words = table.vocabulary
    return {(words[k // table.stride - 1], words[k % table.stride - 1]): p
            for k, p in zip(table.keys.tolist(), table.probabilities.tolist())}


@pytest.mark.parametrize("no_null_word", [False, True], ids=["null-word", "no-null-word"])
@pytest.mark.parametrize("iterations", [2, 3])
def test_a_literal_eps_token_is_fast_align_null_word(tmp_path, iterations, no_null_word):
    """In fast_align the NULL word is its dictionary's "<eps>": a literal <eps> co-occurs like any word, and adds no
    (word, NULL) entry to rows it never meets. Once <eps> was on a target side, every (source word, NULL) key counted as
    a co-occurrence here (an alpha of mass more in row a: t(x | a) 0.562112 against fast_align's 0.569353)."""
    pairs = [("a b".split(), "x y".split()), (["a"], ["x"]), ("<eps> b".split(), "y <eps>".split())]
    settings = FastAlignSettings(iterations=iterations, favor_diagonal=False, optimize_tension=False, no_null_word=no_null_word)
    ours = learn_fast_align(pairs, str(tmp_path / "ours"), settings)
    theirs = learn_with_systran(pairs, str(tmp_path / "systran"), settings)
    for direction, table, their_table in (("forward", ours.forward.table, theirs.forward.table),
                                          ("reverse", ours.reverse.table, theirs.reverse.table)):
        flipped = [(s, t) if direction == "forward" else (t, s) for s, t in pairs]
        expected = fast_align_vb_tables(flipped, iterations - 1, not no_null_word)
        got = _entries(table)
        assert got.keys() == expected.keys() == _entries(their_table).keys()
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, rel=1e-7) and got[key] == pytest.approx(_entries(their_table)[key], rel=1e-6)
    if not no_null_word and iterations == 2:
        assert _entries(ours.forward.table)[("a", "x")] == pytest.approx(0.569353, abs=1e-6)


def test_learning_is_deterministic_and_learns_the_lexicon(tmp_path):
    corpus = synthetic_corpus(300)
    first = learn_fast_align(corpus, str(tmp_path / "a"))
    learn_fast_align(corpus, str(tmp_path / "b"))
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    table = first.forward.table
    ids = table.word_ids
    assert table.lookup(np.array([ids["house"]]), np.array([ids["haus"]]))[0] > 0.5
    assert 0.1 <= first.forward.tension <= 14
    loaded = FastAlignParameters.load(str(tmp_path / "a"))  # the unpruned tables the folder keeps, as learned
    assert loaded.forward.tension == first.forward.tension
    assert np.array_equal(loaded.reverse.table.keys, first.unpruned.reverse.table.keys)
    assert np.array_equal(loaded.reverse.table.probabilities, first.unpruned.reverse.table.probabilities)
    assert loaded.reverse.table.keys.size > first.reverse.table.keys.size  # more entries than the beam keeps
    # the systran-format copy holds the same entries (float32 probabilities)
    copy = read_systran_table(str(tmp_path / "a" / "forward.bin"))
    assert np.array_equal(copy.keys, table.keys) and np.allclose(copy.probabilities, table.probabilities, rtol=1e-6)


@pytest.mark.parametrize("settings", [FastAlignSettings(), FastAlignSettings(no_null_word=True),
                                      FastAlignSettings(variational_bayes=False)], ids=["default", "no-null", "plain"])
def test_sharded_learning_is_bit_identical_to_one_shard(settings):
    """Fixed-point sums and whole groups per M-step range: any number of shards (and as many ranges) gives
    the one-shard tables, tensions and log exactly."""
    corpus = encode_corpus(synthetic_corpus(200, seed=2))
    one = learn_tables(corpus, settings, InProcessExecutor(corpus, 1), unpruned=True)
    for shards in (2, 3):
        other = learn_tables(corpus, settings, InProcessExecutor(corpus, shards), unpruned=True)
        for a, b in ((one.forward, other.forward), (one.reverse, other.reverse), (one.unpruned_forward, other.unpruned_forward),
                     (one.unpruned_reverse, other.unpruned_reverse)):
            assert np.array_equal(a.keys, b.keys) and np.array_equal(a.probabilities, b.probabilities)
        assert (one.forward_tension, one.reverse_tension) == (other.forward_tension, other.reverse_tension)
        assert one.log == other.log


def test_corpus_too_large_for_the_fixed_point_sums_is_refused(monkeypatch):
    corpus = encode_corpus(synthetic_corpus(20, seed=5))
    monkeypatch.setattr(fast_align_em, "MAX_TOKENS", corpus.src.size - 1)
    with pytest.raises(ValueError, match="tokens per side"):
        learn_tables(corpus, FastAlignSettings())


def test_more_entries_than_a_place_can_name_are_refused(monkeypatch):
    """A destination packs a place into 32 bits (``range << 32 | place``): more entries than that are refused."""
    corpus = encode_corpus(synthetic_corpus(20, seed=5))
    stride = len(corpus.vocabulary) + 1
    keys = merge_distinct(InProcessExecutor(corpus).distinct_keys())
    monkeypatch.setattr(fast_align_em, "PLACE_MASK", keys.size - 1)
    with pytest.raises(ValueError, match="table entries, at most"):
        MStepRanges.build(keys, stride, corpus, FastAlignSettings(), 1)


def test_unpruned_tables_hold_every_entry_the_beam_drops():
    """learn_tables(..., unpruned=True): the tables before fast_align's beam (log t >= 4 x log of the row's max), which
    its training run decodes with: every co-occurrence (and NULL entry) at full precision, the pruned tables a subset
    with the same values; same tensions."""
    pairs = varied_corpus(200, seed=3)
    corpus = encode_corpus(pairs)
    learned = learn_tables(corpus, FastAlignSettings(), InProcessExecutor(corpus, 1), unpruned=True)
    plain = learn_tables(corpus, FastAlignSettings(), InProcessExecutor(corpus, 1))
    assert plain.unpruned_forward is None and (plain.forward_tension, plain.reverse_tension) == (
        learned.forward_tension, learned.reverse_tension)
    for pruned, full, flipped in ((learned.forward, learned.unpruned_forward, False), (learned.reverse, learned.unpruned_reverse, True)):
        expected = set()
        for src, tgt in pairs:
            cond, pred = (tgt, src) if flipped else (src, tgt)
            expected |= {(e, f) for e in ["<eps>"] + cond for f in pred}
        entries = _entries(full)
        assert set(entries) == expected
        kept = _entries(pruned)
        assert set(kept) < set(entries) and all(entries[key] == value for key, value in kept.items())
        rows: dict[str, float] = {}
        for (e, _), t in entries.items():
            rows[e] = max(rows.get(e, 0.0), t)
        assert set(kept) == {(e, f) for (e, f), t in entries.items() if math.log(t) >= 4 * math.log(rows[e])}


def test_sorted_distinct_equals_numpy_unique():
    rng = np.random.default_rng(0)
    for keys in (rng.integers(0, 50, 1000), rng.integers(0, 2**40, 5000), np.array([7]), np.array([], np.int64)):
        assert np.array_equal(sorted_distinct(keys.copy()), np.unique(keys))


def _reference_m_step(counts, order, groups, alpha, variational_bayes, entries):
    """fast_align's Normalize[VB] over one whole table, in plain Python (per group, summed in order)."""
    t = np.zeros(entries)
    for g in range(groups.size - 1):
        members = order[groups[g]:groups[g + 1]]
        total = 0.0
        for k in members:
            total += counts[k] + (alpha if variational_bayes else 0.0)
        total = total or 1.0
        for k in members:
            t[k] = math.exp(digamma(counts[k] + alpha) - digamma(total)) if variational_bayes else counts[k] / total
    return t


@pytest.mark.parametrize("variational_bayes", [True, False])
def test_m_step_ranges_equal_one_whole_table(variational_bayes):
    """Shards' local counts split by range, summed per range and normalized per range give the whole-table M-step,
    and each shard's local tables are the whole tables at its entries."""
    rng = np.random.default_rng(7)
    entries, words = 400, 37
    by_forward, by_reverse = np.sort(rng.integers(0, words, entries)), rng.integers(0, words, entries)
    forward_member, reverse_member = rng.random(entries) < 0.9, rng.random(entries) < 0.8
    settings = FastAlignSettings(variational_bayes=variational_bayes)
    # shard 0 touches every entry (in entry order), shard 1 a random third (in any order: local entries are numbered
    # by first use), shard 2 none; a shard has no count outside its entries
    global_index = [np.arange(entries), rng.permutation(np.flatnonzero(rng.random(entries) < 0.33)), np.zeros(0, np.int64)]
    shards = [rng.integers(0, 2**34, (g.size, 2)) for g in global_index]
    shards[0][:50, 0] = 0  # some groups without counts
    shards[0][-50:, 1] = 0
    shards[1][rng.random(shards[1].shape) < 0.3] = 0  # zeros spread over every range, both directions
    whole_counts = np.zeros((2, entries), np.int64)
    for g, counts in zip(global_index, shards):
        for d in (0, 1):
            whole_counts[d][g] += counts[:, d]
    reference = []
    first = []
    # the members in group order, computed another way: a stable sort by group
    f_order = np.flatnonzero(forward_member)[np.argsort(by_forward[forward_member], kind="stable")]
    r_order = np.flatnonzero(reverse_member)[np.argsort(by_reverse[reverse_member], kind="stable")]
    zeros_left = [0, 0]  # zero counts a shard kept from another range, per direction
    for parts in (1, 2, 3, 5, 40):  # 40 > words: empty ranges
        f_rank, f_groups = _groups(by_forward, forward_member, words)
        r_rank, r_groups = _groups(by_reverse, reverse_member, words)
        for rank, order, member in ((f_rank, f_order, forward_member), (r_rank, r_order, reverse_member)):
            assert np.array_equal(rank[order], np.arange(order.size)) and (rank[~member] == -1).all()
        m_step = MStepRanges(f_rank, f_groups, _cuts(f_groups, parts), r_rank, r_groups, _cuts(r_groups, parts))
        assert m_step.parts == parts
        # a shard owns the range of its number (shards past the ranges own none: their counts all travel)
        slots = [m_step.slots(np.sort(g), np.argsort(np.argsort(g))) for g in global_index]
        splits = [s.split(counts, shard if shard < parts else None) for shard, (s, counts) in enumerate(zip(slots, shards))]
        for shard, (_, sends) in enumerate(splits):
            for p, send in enumerate(sends):
                assert (send is None) == (p == shard)  # the own range's counts never travel
                if send is not None:
                    for d in (0, 1):  # only non-zero counts travel: as many as the shard has in that range
                        in_range = (slots[shard].destination[:, d] >= 0) & (slots[shard].destination[:, d] >> 32 == p)
                        zeros_left[d] += int((shards[shard][in_range, d] == 0).sum())
                        assert (send[2 * d + 1] != 0).all()
                        assert send[2 * d + 1].size == int((shards[shard][in_range, d] != 0).sum())
        owned = [splits[p][0] if p < len(shards) else tuple(np.zeros(s, np.int64) for s in slots[0].sizes[:, p]) for p in range(parts)]
        normalized = [m_step.normalize(p, owned[p], [sends[p] for shard, (_, sends) in enumerate(splits) if shard != p],
                                       settings) for p in range(parts)]
        tables = [s.tables(normalized) for s in slots]
        if not reference:
            for d, (order, groups) in enumerate(((f_order, f_groups), (r_order, r_groups))):
                counts = whole_counts[d] / fast_align_em.COUNT_SCALE
                reference.append(_reference_m_step(counts, order, groups, settings.alpha, variational_bayes, entries))
            first = tables
        for shard, g in enumerate(global_index):
            assert tables[shard].shape == (g.size, 2)
            for d in (0, 1):
                np.testing.assert_allclose(tables[shard][:, d], reference[d][g], rtol=1e-13, atol=0)
            assert np.array_equal(tables[shard], first[shard])  # bit-identical for any number of ranges
        uninitialized = slots[1].tables([])
        assert np.array_equal(uninitialized, np.full((global_index[1].size, 2), fast_align_em.UNINITIALIZED_PROBABILITY))
    assert min(zeros_left) > 100


def test_merged_keys_and_local_positions():
    rng = np.random.default_rng(3)
    parts = [np.unique(rng.integers(0, 10**12, size)) for size in (500, 0, 800, 1, 300)]
    merged = merge_distinct(parts)
    assert np.array_equal(merged, np.unique(np.concatenate(parts)))
    assert np.array_equal(merge_distinct(parts[:1]), parts[0]) and merge_distinct([]).size == 0
    for part in parts:
        assert np.array_equal(positions_in(part, merged), np.searchsorted(merged, part))
    with pytest.raises(ValueError, match="missing"):
        positions_in(np.array([merged[0] + 1]), merged[:1])


def test_balanced_bounds_give_a_range_of_more_distinct_entries_fewer_cells():
    rng = np.random.default_rng(5)
    repeated = [(["the", "lord", "said"], ["dijo", "el", "señor"])] * 600  # few distinct entries
    varied = [([f"s{rng.integers(10**6)}" for _ in range(3)], [f"t{rng.integers(10**6)}" for _ in range(3)])
              for _ in range(600)]  # a new entry in almost every cell
    corpus = encode_corpus(repeated + varied)
    assert corpus.balanced_bounds(2, entry_cost=0.0) == corpus.shard_bounds(2) == [(0, 600), (600, 1200)]
    (a, cut), (cut_again, end) = corpus.balanced_bounds(2, entry_cost=7.0)
    assert (a, cut_again, end) == (0, cut, 1200)
    # a varied pair costs 9 cells + 7 x 15 new entries, a repeated one 9 cells: about 5,500 + 600 x 114 in all, so the
    # first range takes the 600 repeated pairs and ~275 varied ones (sampling noise: a few dozen pairs)
    assert 780 < cut < 960
    assert corpus.balanced_bounds(2) == corpus.balanced_bounds(2)  # deterministic
    bounds = corpus.balanced_bounds(4)
    assert bounds[0][0] == 0 and bounds[-1][1] == 1200 and all(x[1] == y[0] for x, y in zip(bounds, bounds[1:]))
    assert corpus.balanced_bounds(1) == [(0, 1200)]
    for shards in (16, 600):  # no range empty, whatever the greedy cuts' overshoot
        bounds = corpus.balanced_bounds(shards)
        assert len(bounds) == shards and all(b > a for a, b in bounds) and bounds[-1][1] == 1200


def test_sampled_range_cost_estimates_distinct_entries():
    rng = np.random.default_rng(6)
    pairs = [([f"s{w}" for w in rng.integers(0, 3000, 8)], [f"t{w}" for w in rng.integers(0, 3000, 8)]) for _ in range(4000)]
    corpus = encode_corpus(pairs)
    stride = len(corpus.vocabulary) + 1
    keys = set()
    for src, tgt in pairs:
        keys |= {(s, t) for s in src + ["<eps>"] for t in tgt + ["<eps>"]} - {("<eps>", "<eps>")}
    cells = sum(len(s) * len(t) for s, t in pairs)
    args = (corpus.src, corpus.tgt, corpus.src_start, corpus.tgt_start, stride, 1.0, 0, corpus.pairs)
    estimate = fast_align_em._range_cost(*args) - cells
    assert abs(estimate - len(keys)) < 0.1 * len(keys)  # 1/64 sample of ~280k distinct keys


@pytest.fixture(scope="module")
def ray_three_cpus():
    """A local Ray runtime with 3 logical CPUs (3 one-CPU actors on this 2-core machine), 200 MiB object store."""
    import ray

    ray.init(address="local", num_cpus=3, object_store_memory=200 * 1024**2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("settings", [FastAlignSettings(), FastAlignSettings(no_null_word=True, variational_bayes=False)],
                         ids=["default", "no-null-plain-normalization"])
def test_ray_workers_equal_in_process(ray_three_cpus, settings):
    """Reduce-scatter over 1, 2, 3 actors (each normalizing its own range of groups) gives one process's tables."""
    from interlingua.operators.align.distributed_em import RayExecutor

    corpus = encode_corpus(synthetic_corpus(200, seed=4))
    reference = learn_tables(corpus, settings, InProcessExecutor(corpus, 1))  # one process, one shard
    for workers in (1, 2, 3):
        executor = RayExecutor(corpus, workers, settings)
        try:
            on_ray = learn_tables(corpus, settings, executor, unpruned=True)
        finally:
            executor.close()
        unpruned = learn_tables(corpus, settings, InProcessExecutor(corpus, 1), unpruned=True)
        for a, b in ((on_ray.unpruned_forward, unpruned.unpruned_forward), (on_ray.unpruned_reverse, unpruned.unpruned_reverse)):
            assert np.array_equal(a.keys, b.keys) and np.array_equal(a.probabilities, b.probabilities)
        assert np.array_equal(on_ray.forward.probabilities, reference.forward.probabilities)
        assert np.array_equal(on_ray.reverse.probabilities, reference.reverse.probabilities)
        assert np.array_equal(on_ray.forward.keys, reference.forward.keys)
        assert np.array_equal(on_ray.reverse.keys, reference.reverse.keys)
        assert (on_ray.forward_tension, on_ray.reverse_tension) == (reference.forward_tension, reference.reverse_tension)
        assert on_ray.log == reference.log


@pytest.mark.slow
def test_the_saved_parameters_are_the_same_bytes_for_any_worker_count(ray_three_cpus, tmp_path):
    """The parameters file recorded the worker count, so a corpus version built with workers=2 held other bytes
    than the same version (same id) built with workers=1."""
    pairs = synthetic_corpus(120, seed=9)
    digests = []
    for workers in (1, 2):
        folder = tmp_path / f"w{workers}"
        learn_fast_align(pairs, str(folder), workers=workers)
        digests.append({p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())})
    assert digests[0] == digests[1] and "fast_align_params.json" in digests[0]


def test_pickle_bearing_archive_is_refused(tmp_path):
    path = str(tmp_path / "forward.npz")
    np.savez(path, vocabulary=np.array(["<eps>", "a"], dtype=object), keys=np.array([3]), probabilities=np.array([1.0]))
    with pytest.raises(ValueError, match="pickled objects, which are never loaded"):
        LexicalTable.load_npz(path)
    table = LexicalTable(("<eps>", "ä", "b"), np.array([5, 6]), np.array([0.5, 0.25]))
    table.save_npz(path)
    loaded = LexicalTable.load_npz(path)
    assert loaded.vocabulary == table.vocabulary and np.array_equal(loaded.keys, table.keys)
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.array([1]))
    (tmp_path / "other.npz").write_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="no vocabulary_utf8"):
        LexicalTable.load_npz(str(tmp_path / "other.npz"))


def test_systran_format_refuses_a_word_holding_nul(tmp_path):
    """The format ends each word at NUL: such a word would shift every later word and the rows (a corrupt file)."""
    from interlingua.operators.align.lexical_table import write_systran_table

    table = LexicalTable(("<eps>", "a\x00b", "c"), np.array([6, 7]), np.array([0.5, 0.25]))
    with pytest.raises(ValueError, match=r"word 'a\\x00b' \(id 2\) holds a NUL character"):
        write_systran_table(table, str(tmp_path / "t.bin"))
    assert not (tmp_path / "t.bin").exists()


def test_unknown_learner_is_refused(tmp_path):
    with pytest.raises(ValueError, match="learner 'x'"):
        learn_fast_align(synthetic_corpus(5), str(tmp_path), learner="x")


def test_shard_counts_are_summed_as_integers_then_scaled_once():
    from interlingua.operators.align.fast_align_em import sum_scaled_at

    rng = np.random.default_rng(0)
    size = 1000
    positions = [np.arange(size), rng.permutation(size)[:300], np.zeros(0, np.int64), rng.permutation(size)[:900]]
    values = [rng.integers(0, 2**40, p.size) for p in positions]
    for shards in (1, 2, 3, 4):
        dense = np.zeros((shards, size), np.int64)
        for k in range(shards):
            dense[k][positions[k]] = values[k]
        expected = np.sum(dense, axis=0) / 2.0**32
        assert np.array_equal(sum_scaled_at(np.zeros(size, np.int64), positions[:shards], values[:shards], 2.0**32), expected)
        # any shard order: the same sums
        assert np.array_equal(sum_scaled_at(np.zeros(size, np.int64), positions[:shards][::-1], values[:shards][::-1], 2.0**32),
                              expected)
        # added to a given total (the owner's own counts), in place; places as uint32, read-only (the object store's)
        own = dense[0].copy()
        received = [(p.astype(np.uint32), v.copy()) for p, v in zip(positions[1:shards], values[1:shards])]
        for arrays in received:
            for a in arrays:
                a.flags.writeable = False
        # (one shard: nothing received, the total alone)
        assert np.array_equal(sum_scaled_at(own, [p for p, _ in received], [v for _, v in received], 2.0**32), expected)
        assert np.array_equal(own, np.sum(dense, axis=0))


def test_packed_hash_records_find_the_plain_hash_slots():
    """``RowHash.packed`` records (column in the high half, unnumbered low half) probed with ``shift=32`` find the
    same slot as the plain columns, and nothing for absent keys."""
    from interlingua.operators.align.row_hash import UNNUMBERED, RowHash, find_slot

    rng = np.random.default_rng(11)
    rows, columns = rng.integers(1, 40, 3000), rng.integers(1, 5000, 3000)
    key = np.unique(rows * 10_000 + columns)
    rows, columns = key // 10_000, key % 10_000
    h = RowHash.build(rows, columns, 40)
    packed = h.packed()
    assert np.array_equal(packed >> 32, h.columns) and np.all(packed & UNNUMBERED == UNNUMBERED)
    for r, c in [*zip(rows[::37].tolist(), columns[::37].tolist()), (3, 9_999), (0, 5), (7, 0)]:
        plain = find_slot(h.row_start, h.row_mask, h.columns, r, c)
        assert find_slot(h.row_start, h.row_mask, packed, r, c, 32) == plain
        present = bool(np.any((rows == r) & (columns == c)))
        assert (plain >= 0) == present and (not present or h.entry[plain] == np.flatnonzero(key == r * 10_000 + c)[0])


def test_resolved_cells_name_their_own_keys():
    """Every resolved cell, (NULL, target) and (source, NULL) cell points at the merged key of its own word pair
    (keys written out pair by pair here), and local entries are numbered in order of first use."""
    corpus = encode_corpus(synthetic_corpus(60, seed=4))
    stride = len(corpus.vocabulary) + 1
    shards = [fast_align_em.EStepShard(*corpus.shard(a, b), stride) for a, b in corpus.shard_bounds(2)]
    keys = merge_distinct([s.distinct_keys() for s in shards])
    for shard in shards:
        shard.resolve(keys)
        cell_keys, null_f, null_r = [], [], []
        for p in range(shard.src_start.size - 1):
            src = shard.src[shard.src_start[p]:shard.src_start[p + 1]]
            tgt = shard.tgt[shard.tgt_start[p]:shard.tgt_start[p + 1]]
            cell_keys += [s * stride + t for s in src.tolist() for t in tgt.tolist()]
            null_f += [fast_align_em.NULL_ID * stride + t for t in tgt.tolist()]
            null_r += [s * stride + fast_align_em.NULL_ID for s in src.tolist()]
        for local, expected in ((shard.cells, cell_keys), (shard.null_f, null_f), (shard.null_r, null_r)):
            assert local.dtype == np.uint32  # half the bytes the E-step streams
            assert keys[shard.global_index[local]].tolist() == expected
        first_use, cell = [], 0  # local entries in the order a pair's NULL cells, then its cells use them
        for p in range(shard.src_start.size - 1):
            (a, b), (c, d) = shard.tgt_start[p:p + 2], shard.src_start[p:p + 2]
            first_use += [*shard.null_f[a:b], *shard.null_r[c:d], *shard.cells[cell:cell + (b - a) * (d - c)]]
            cell += (b - a) * (d - c)
        _, at = np.unique(first_use, return_index=True)
        assert np.array_equal(np.argsort(at), np.arange(shard.entries))


def test_e_step_counts_fresh_each_call_and_table_filled_in_place_or_copied():
    """The E-step's counts start from zero each call (they live in the shard's buffer beside its table), and a table
    filled in place gives the same counts as one passed in and copied; the buffer's records start on a cache line."""
    corpus = encode_corpus(synthetic_corpus(80, seed=6))
    stride = len(corpus.vocabulary) + 1
    shard = fast_align_em.EStepShard(*corpus.shard(0, corpus.pairs), stride)
    shard.resolve(merge_distinct([shard.distinct_keys()]))
    t = np.random.default_rng(2).random((shard.entries, 2))
    settings = FastAlignSettings()
    counts, stats = shard.e_step(t, (4.0, 4.0), settings)
    first = counts.copy()
    assert first.shape == (shard.entries, 2) and first.sum() > 0
    shard.table[...] = t
    again, stats_again = shard.e_step(shard.table, (4.0, 4.0), settings)
    assert np.array_equal(again, first) and np.array_equal(stats_again, stats)
    assert shard.table.ctypes.data % 64 == 0
    # expected counts of one direction sum to the tokens it predicts (each token's posteriors sum to 1)
    assert abs(first[:, 0].sum() / fast_align_em.COUNT_SCALE - corpus.tgt.size) < 1e-3 * corpus.tgt.size


def test_normalization_of_entries_without_counts_is_bit_identical_to_the_per_entry_formula():
    """Entries with no expected count share their group's exp(digamma(alpha) - digamma(total)): the same bits as
    computing digamma(0.0 + alpha) for each of them (fast_align's NormalizeVB, entry by entry)."""
    rng = np.random.default_rng(11)
    counts = rng.random(3000) * rng.integers(0, 3, 3000) ** 4  # about a third zero, some large
    counts[::7] = 0.0
    groups = np.concatenate(([0], np.sort(rng.choice(np.arange(1, 3000), 120, replace=False)), [3000])).astype(np.int64)
    for alpha in (0.01, 0.3, 2.5):
        out = np.empty(counts.size)
        fast_align_em._normalize_groups(counts, groups, alpha, True, out)
        expected = np.empty(counts.size)
        for a, b in zip(groups[:-1], groups[1:]):
            total = sum(float(c) + alpha for c in counts[a:b]) or 1.0
            for k in range(a, b):
                expected[k] = math.exp(digamma(counts[k] + alpha) - digamma(total))
        assert (counts == 0).sum() > 1000 and np.array_equal(out, expected)


def test_tension_update_is_fast_align_eight_clipped_steps():
    """The compiled update equals fast_align's tension loop written out over its ComputeDLogZ (the CPython port of
    ``da.h`` in test_align_fast_align): each step's model feature summed shape by shape, j by j, then
    ``tension += (emp - mod) * 20`` clipped as fast_align clips (``<= 0.1`` -> 0.1, ``> 14`` -> 14)."""
    shape_m, shape_n = np.array([3, 5, 7, 12, 40]), np.array([4, 5, 2, 15, 33])
    counts = np.array([10.0, 3.0, 1.0, 7.0, 2.0])
    tokens = float((shape_m * counts).sum())
    for tension, feature in ((4.0, -0.2), (0.2, -0.9), (13.5, -0.01), (4.0, -0.05)):
        expected = tension
        for _ in range(8):
            modelled = 0.0
            for m, n, count in zip(shape_m.tolist(), shape_n.tolist(), counts.tolist()):
                for j in range(1, m + 1):
                    modelled += count * fast_align_dlog_z(j, m, n, expected)
            expected += (feature - modelled / tokens) * 20.0
            if expected <= 0.1:
                expected = 0.1
            if expected > 14:
                expected = 14.0
        assert fast_align_em.optimize_tension(shape_m, shape_n, counts, tension, feature, tokens) == expected
