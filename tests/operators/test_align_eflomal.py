"""eflomal backend: priors saved then reused; forward, reverse and symmetrized links per pair."""

import os
import re

import pytest

from interlingua.operators.align.align_operator import load_aligner
from interlingua.operators.align.eflomal_backend import MAX_TOKENS, PARAMS_FILE, PRIORS_FILE, EflomalAligner, learn_eflomal_priors
from interlingua.operators.align.pharaoh import parse_pharaoh
from interlingua.operators.align.symmetrize import symmetrize

from .test_align_fast_align import synthetic_corpus


@pytest.fixture(autouse=True)
def _state_in_tmp(tmp_path_factory, monkeypatch):
    """eflomal's seeded binary and run folders live under ``<state>/tmp``: a state folder of each test's own."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path_factory.mktemp("state")))


def test_priors_are_saved_and_new_pairs_align_with_them(tmp_path):
    corpus = synthetic_corpus(120, seed=5)
    assert learn_eflomal_priors(corpus + [([], ["leer"])], str(tmp_path)) == 120
    assert (tmp_path / PARAMS_FILE).exists() and "LEX\thouse\thaus" in (tmp_path / PRIORS_FILE).read_text()
    new = synthetic_corpus(30, seed=6) + [([], ["das"]), (["the"], [])]
    sources, targets = [s for s, _ in new], [t for _, t in new]
    forward, reverse, symmetrized = load_aligner(str(tmp_path), "eflomal", "intersect").align_pharaoh(sources, targets)
    assert len(forward) == len(reverse) == len(symmetrized) == len(new)
    assert forward[-2:] == reverse[-2:] == symmetrized[-2:] == ["", ""]
    for s, t, f, r, a in zip(sources, targets, forward, reverse, symmetrized):
        links = parse_pharaoh(a)
        assert set(links) == symmetrize(parse_pharaoh(f), parse_pharaoh(r), "intersect")
        assert all(i < len(s) and j < len(t) for i, j in links)
    # the toy lexicon is one-to-one: most words get their translation
    right = sum((s[i], t[j]) in {(w, v) for w, v in zip(s, t)} for s, t, a in zip(sources, targets, symmetrized)
                for i, j in parse_pharaoh(a))
    assert right >= 0.8 * sum(len(parse_pharaoh(a)) for a in symmetrized)


def test_missing_priors_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match=PRIORS_FILE):
        EflomalAligner(str(tmp_path))


def test_a_sentence_longer_than_eflomal_aligns_is_refused_not_left_without_links(tmp_path):
    """eflomal gives a sentence of 1,024 tokens or more no link at all (1,023 still get theirs): such a pair was aligned
    empty and counted as accepted."""
    learn_eflomal_priors(synthetic_corpus(40, seed=2), str(tmp_path))
    aligner = EflomalAligner(str(tmp_path))
    words = sorted({w for s, _ in synthetic_corpus(40, seed=2) for w in s})
    longest = [words[k % len(words)] for k in range(MAX_TOKENS)]
    forward, reverse, _ = aligner.align_pharaoh([longest, ["the"]], [longest[:9], ["das"]])
    assert MAX_TOKENS == 1023 and forward[0] and reverse[0]
    with pytest.raises(ValueError, match="pair 0 has a side of 1024 tokens; eflomal aligns at most 1023"):
        aligner.align_pharaoh([["the"]], [longest + ["the"]])


def _noisy(n: int, seed: int):
    """A corpus on which two unseeded eflomal runs usually give different links (random samplers)."""
    return synthetic_corpus(n, seed=seed)


def test_the_same_pairs_give_the_same_priors_and_links(tmp_path):
    """eflomal's library takes no seed (its binary reads /dev/urandom, its samplers take their streams in thread order):
    two runs on the same pairs gave different priors and links (a corpus version's bytes changed from build to build)."""
    corpus = _noisy(120, seed=5)
    learn_eflomal_priors(corpus, str(tmp_path / "a"))
    learn_eflomal_priors(corpus, str(tmp_path / "b"))
    assert (tmp_path / "a" / PRIORS_FILE).read_bytes() == (tmp_path / "b" / PRIORS_FILE).read_bytes()
    new = _noisy(60, seed=8)
    sources, targets = [s for s, _ in new], [t for _, t in new]
    runs = [EflomalAligner(str(tmp_path / "a")).align_pharaoh(sources, targets) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert any(runs[0][0]) and any(runs[0][1])


def test_links_do_not_depend_on_the_thread_count(tmp_path, monkeypatch):
    """With more OpenMP threads than directions, the samplers took their random streams in whatever order the threads
    arrived: the links depended on the machine and the moment, seeded or not."""
    corpus = _noisy(120, seed=11)
    learn_eflomal_priors(corpus, str(tmp_path))
    sources, targets = [s for s, _ in corpus], [t for _, t in corpus]
    links = {}
    for threads in ("1", "2", "8", "1,4"):  # "1,4": a nested team for the samplers
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        links[threads] = EflomalAligner(str(tmp_path)).align_pharaoh(sources, targets)
    assert links["1"] == links["2"] == links["8"] == links["1,4"]


def test_pairs_are_aligned_in_units_of_unit_pairs(tmp_path):
    """A unit's links depend on its own pairs only: aligning 130 pairs at once equals aligning lines 0-49, 50-99 and
    100-129 apart (so a caller that hands the same units to any number of workers gets the same bytes)."""
    learn_eflomal_priors(_noisy(120, seed=5), str(tmp_path))
    corpus = _noisy(130, seed=12)
    corpus[57] = ([], ["das"])  # an empty side inside a unit: skipped there, the unit's cut unchanged
    sources, targets = [s for s, _ in corpus], [t for _, t in corpus]
    aligner = EflomalAligner(str(tmp_path), unit_pairs=50)
    whole = aligner.align_pharaoh(sources, targets)
    apart = [aligner.align_pharaoh(sources[a:b], targets[a:b]) for a, b in ((0, 50), (50, 100), (100, 130))]
    assert whole == tuple(sum((part[d] for part in apart), []) for d in range(3))
    assert whole[2][57] == ""
    # one unit: other links (the sampler saw other pairs)
    assert EflomalAligner(str(tmp_path), unit_pairs=200).align_pharaoh(sources, targets) != whole
    for bad in (0, -4, 2.5, True):
        with pytest.raises(ValueError, match=f"unit_pairs must be a whole number >= 1, got {bad!r}"):
            EflomalAligner(str(tmp_path), unit_pairs=bad)


def test_units_operator_aligns_each_unit_apart(tmp_path):
    """AlignUnitsOperator (the Ray path of bitext-corpus and `interlingua align --workers N`) gives each unit's pairs
    the links one aligner gives that unit, one row per pair; a unit longer than its unit_pairs is cut as the aligner
    cuts it."""
    import numpy as np

    from interlingua.operators.align.align_operator import AlignUnitsOperator, pack_units
    from interlingua.operators.runner import run_in_process

    learn_eflomal_priors(_noisy(120, seed=5), str(tmp_path))
    corpus = _noisy(100, seed=13)
    rows = [{"k": 1000 + k, "src_tokens": " ".join(s), "tgt_tokens": " ".join(t)} for k, (s, t) in enumerate(corpus)]
    units = pack_units(rows, lambda row: (row["k"] - 1000) // 40)
    assert [len(u["k"]) for u in units] == [40, 40, 20] and units[1]["k"][0] == 1040

    def aligned(units, options) -> list:
        batches = list(run_in_process(units, AlignUnitsOperator, {"parameters_dir": str(tmp_path), **options}))
        assert len(batches) == len(units) and batches[0]["k"].dtype == np.int64
        got = {int(k): (f, r, a) for b in batches for k, f, r, a in zip(b["k"], b["forward"], b["reverse"], b["alignment"])}
        return [got[1000 + k] for k in range(100)]

    expected = EflomalAligner(str(tmp_path), unit_pairs=40).align_pharaoh([s for s, _ in corpus], [t for _, t in corpus])
    assert aligned(units, {}) == list(zip(*expected))
    assert aligned(pack_units(rows, lambda row: 0), {"unit_pairs": 40}) == list(zip(*expected))


def test_a_binary_that_does_not_read_dev_urandom_once_is_refused():
    from interlingua.operators.align.eflomal_backend import SEED_FILE, seeded_image

    image = b"\x7fELF....%s....Warning: can not open /dev/urandom, using time()\0" % b"/dev/urandom\0"
    patched = seeded_image(image, "bin/eflomal")
    assert len(patched) == len(image) and b"/dev/urandom\0" not in patched
    assert SEED_FILE.encode() + b"\0" * (13 - len(SEED_FILE)) in patched
    for bad in (b"\x7fELF nothing", image + b"/dev/urandom\0"):
        with pytest.raises(RuntimeError, match="does not read its seed from /dev/urandom once"):
            seeded_image(bad, "bin/eflomal")


def test_the_seeded_binary_is_written_once_for_many_units(tmp_path, monkeypatch):
    """The seeded binary (it reads the seed file of the run's folder, so one copy serves every seed) was written and
    made executable again for every unit of 4,096 pairs: once per state folder now, the links unchanged."""
    from interlingua.operators.align import eflomal_backend

    learn_eflomal_priors(_noisy(120, seed=5), str(tmp_path))
    corpus = _noisy(130, seed=12)
    sources, targets = [s for s, _ in corpus], [t for _, t in corpus]
    expected = EflomalAligner(str(tmp_path), unit_pairs=50).align_pharaoh(sources, targets)
    writes, seeds = [], []
    write, seed = eflomal_backend._write_binary, eflomal_backend._seed_bytes
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "fresh-state"))  # none written there yet
    monkeypatch.setattr(eflomal_backend, "_write_binary", lambda *args: writes.append(args[1]) or write(*args))
    monkeypatch.setattr(eflomal_backend, "_seed_bytes", lambda *args: seeds.append(1) or seed(*args))
    aligner = EflomalAligner(str(tmp_path), unit_pairs=50)
    assert aligner.align_pharaoh(sources, targets) == expected == aligner.align_pharaoh(sources, targets)
    assert len(seeds) == 6 and len(writes) == 1  # six runs (two calls of three units), one binary
    binary = eflomal_backend.seeded_binary_path()
    assert writes == [binary] and os.access(binary, os.X_OK)


def binary_copies_cannot_run(monkeypatch) -> None:
    """From now on the seeded binary of the state folder is not executable (root may not run it either), and is
    written again so: a state folder mounted noexec, simulated."""
    from interlingua.operators.align import eflomal_backend

    monkeypatch.setattr(eflomal_backend, "_make_executable", lambda path: os.chmod(path, 0o600))
    os.chmod(eflomal_backend.seeded_binary_path(), 0o600)


def test_a_folder_programs_may_not_run_from_is_one_line_and_an_actor_error_names_it(tmp_path, monkeypatch):
    """A noexec state folder was found inside the first eflomal run (one line of a Ray actor's traceback);
    require_runnable finds it first, and both name the folder and how to move it."""
    from interlingua.core.errors import UserError
    from interlingua.operators.align import eflomal_backend

    binary_copies_cannot_run(monkeypatch)
    folder = re.escape(os.path.join(eflomal_backend.user_tempdir(), "eflomal-"))
    with pytest.raises(UserError, match=r"cannot run eflomal's seeded binary .* \(Permission denied\): programs may not "
                                        rf"run from {folder}\w+ \(mounted noexec\?\) \(hint: set INTERLINGUA_HOME to a "
                                        "state folder on a file system mounted with exec"):
        eflomal_backend.require_runnable()
    with pytest.raises(RuntimeError, match=r"\(Permission denied\).*set INTERLINGUA_HOME to a state folder on a file "
                                           "system mounted with exec, in the environment this node's Ray workers start"):
        learn_eflomal_priors(_noisy(20, seed=5), str(tmp_path))


def test_priors_swapped_in_the_folder_after_the_check_go_unused(tmp_path):
    """The priors' digest was checked when the aligner was built, then every unit opened the file again (twice: the
    conversion and the seed), so priors swapped in a shared folder in between were used unchecked."""
    import shutil

    corpus, other = _noisy(120, seed=5), _noisy(120, seed=9)
    learn_eflomal_priors(corpus, str(tmp_path / "a"))
    learn_eflomal_priors(other, str(tmp_path / "b"))
    sources, targets = [s for s, _ in corpus[:60]], [t for _, t in corpus[:60]]
    expected = EflomalAligner(str(tmp_path / "a"), unit_pairs=30).align_pharaoh(sources, targets)
    aligner = EflomalAligner(str(tmp_path / "a"), unit_pairs=30)
    shutil.copyfile(tmp_path / "b" / PRIORS_FILE, tmp_path / "a" / PRIORS_FILE)  # after the check
    assert EflomalAligner(str(tmp_path / "b"), unit_pairs=30).align_pharaoh(sources, targets) != expected
    assert aligner.align_pharaoh(sources, targets) == expected
