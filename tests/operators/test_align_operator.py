"""FastAlignOperator on Ray Data: 2 actors give exactly the in-process alignments."""

import random

import numpy as np
import pytest

from interlingua.operators.align.align_operator import FastAlignOperator
from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
from interlingua.operators.align.fast_align_training import FastAlignParameters, learn_fast_align
from interlingua.operators.align.pharaoh import format_pharaoh


def synthetic_corpus(n: int, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    """Monotone toy bitext from a fixed lexicon."""
    lexicon = {"the": "das", "house": "haus", "is": "ist", "small": "klein", "big": "gross", "book": "buch", "old": "alt"}
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        src = [rng.choice(sorted(lexicon)) for _ in range(rng.randint(2, 7))]
        pairs.append((src, [lexicon[w] for w in src]))
    return pairs


@pytest.mark.slow
def test_operator_on_two_actors_equals_in_process(tmp_path, ray_local):
    import ray.data

    from interlingua.operators.runner import run_operator

    corpus = synthetic_corpus(200, seed=1)
    learn_fast_align(corpus, str(tmp_path))
    expected = BidirectionalAligner(FastAlignParameters.load(str(tmp_path))).align([s for s, _ in corpus], [t for _, t in corpus])
    rows = [{"index": k, "src_tokens": " ".join(s), "tgt_tokens": " ".join(t)} for k, (s, t) in enumerate(corpus)]
    ds = ray.data.from_items(rows, override_num_blocks=8)
    out = run_operator(ds, FastAlignOperator, {"parameters_dir": str(tmp_path)}, concurrency=2, batch_size=25)
    got = {int(r["index"]): (r["forward"], r["reverse"], r["alignment"]) for r in out.take_all()}
    assert len(got) == len(corpus)
    for k, pair in enumerate(expected):
        assert got[k] == (format_pharaoh(pair.forward, by_target=True), format_pharaoh(pair.reverse), format_pharaoh(pair.symmetrized))


def test_operator_rejects_missing_columns(tmp_path):
    learn_fast_align(synthetic_corpus(20), str(tmp_path))
    with pytest.raises(ValueError, match="tgt_tokens"):
        FastAlignOperator(str(tmp_path))({"src_tokens": np.array(["a"], dtype=object)})


def test_operator_splits_tokens_at_spaces_and_tabs_only(tmp_path):
    """A no-break or ideographic space is part of a token, as in fast_align (str.split() cut it: other indices)."""
    learn_fast_align(synthetic_corpus(40) + [(["the\u00a0house", "is"], ["das", "haus", "ist"])], str(tmp_path))
    batch = {"src_tokens": np.array(["the\u00a0house is", "the house\u3000is"], dtype=object),
             "tgt_tokens": np.array(["das haus ist", "das\thaus ist"], dtype=object)}
    out = FastAlignOperator(str(tmp_path))(batch)
    sources, targets = [["the\u00a0house", "is"], ["the", "house\u3000is"]], [["das", "haus", "ist"]] * 2
    expected = BidirectionalAligner(FastAlignParameters.load(str(tmp_path))).align_pharaoh(sources, targets)
    assert (list(out["forward"]), list(out["reverse"]), list(out["alignment"])) == expected
    assert {int(link.split("-")[0]) for line in out["alignment"] for link in line.split()} <= {0, 1}


def test_operator_given_the_parameters_reads_no_folder_and_aligns_as_from_it(tmp_path):
    learn_fast_align(synthetic_corpus(40), str(tmp_path / "p"))
    batch = {"src_tokens": np.array(["the house is", "a big book"], dtype=object),
             "tgt_tokens": np.array(["das haus ist", "ein grosses buch"], dtype=object)}
    expected = FastAlignOperator(str(tmp_path / "p"))(dict(batch))
    parameters = FastAlignParameters.load(str(tmp_path / "p"))
    (tmp_path / "p").rename(tmp_path / "gone")
    got = FastAlignOperator(parameters=parameters)(dict(batch))
    assert [list(got[c]) for c in ("forward", "reverse", "alignment")] == \
           [list(expected[c]) for c in ("forward", "reverse", "alignment")]
    with pytest.raises(ValueError, match="give parameters_dir or parameters, not both or neither"):
        FastAlignOperator()
    with pytest.raises(ValueError, match="parameters are fast_align's"):
        FastAlignOperator(parameters=parameters, aligner="eflomal")


@pytest.mark.slow
def test_operator_given_a_reference_to_the_parameters_aligns_as_given_them(tmp_path, ray_local):
    """``align --workers N`` puts the tables in Ray's object store and hands the operator the ObjectRef."""
    learn_fast_align(synthetic_corpus(40), str(tmp_path / "p"))
    batch = {"src_tokens": np.array(["the house is", "a big book"], dtype=object),
             "tgt_tokens": np.array(["das haus ist", "ein grosses buch"], dtype=object)}
    parameters = FastAlignParameters.load(str(tmp_path / "p"))
    expected = FastAlignOperator(parameters=parameters)(dict(batch))
    got = FastAlignOperator(parameters=ray_local.put(parameters))(dict(batch))
    assert [list(got[c]) for c in ("forward", "reverse", "alignment")] == \
           [list(expected[c]) for c in ("forward", "reverse", "alignment")]
    assert any(expected["alignment"])
