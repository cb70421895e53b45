"""eflomal backend: priors saved then reused; forward, reverse and symmetrized links per pair."""

import pytest

from interlingua.operators.align.align_operator import load_aligner
from interlingua.operators.align.eflomal_backend import MAX_TOKENS, PARAMS_FILE, PRIORS_FILE, EflomalAligner, learn_eflomal_priors
from interlingua.operators.align.pharaoh import parse_pharaoh
from interlingua.operators.align.symmetrize import symmetrize

from .test_align_fast_align import synthetic_corpus


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
