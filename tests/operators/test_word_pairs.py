"""One-to-one links, identical-word removal and first-subword positions under a tiny tokenizer."""

import pytest

from interlingua.operators.align.word_pairs import WordPairStats, first_subword_positions, one_to_one_links, word_pairs


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "house", "ha", "##us", "das", "klein", "##e", "small"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]")


def test_one_to_one_links_drop_every_link_of_a_shared_word():
    assert one_to_one_links({(0, 0), (1, 1), (1, 2), (2, 3), (3, 3), (4, 4)}) == [(0, 0), (4, 4)]


def test_first_subword_positions_count_special_tokens(tiny_tokenizer):
    # [CLS]=0 das=1 ha=2 ##us=3 klein=4 ##e=5 [SEP]=6
    assert first_subword_positions(tiny_tokenizer, ["das", "haus", "kleine"]) == [1, 2, 4]
    assert first_subword_positions(tiny_tokenizer, ["das", "haus", "kleine"], max_length=4) == [1, 2, None]
    assert first_subword_positions(tiny_tokenizer, []) == []


def test_word_pairs_filters_and_counts(tiny_tokenizer):
    src, tgt = ["the", "house", "small", "Paris"], ["das", "haus", "kleine", "Paris"]
    links = {(0, 0), (1, 1), (2, 2), (3, 3), (2, 1)}  # (2,1) makes house/small/haus not one-to-one
    stats = WordPairStats()
    pairs = word_pairs(src, tgt, links, first_subword_positions(tiny_tokenizer, src), first_subword_positions(tiny_tokenizer, tgt), stats)
    assert pairs == [(1, 1)]  # the -> das: positions after [CLS]
    assert stats.as_dict() == {"links": 5, "kept": 1, "dropped_identical": 1, "dropped_not_one_to_one": 3}


def _published_procedure(src, tgt, links):
    """Wu & Dredze's filter as the paper's released code orders it, transcribed independently: remove the
    links joining two identical words, then keep a remaining link only if neither of its words has another
    remaining link."""
    remaining = [link for link in sorted(set(links)) if src[link[0]] != tgt[link[1]]]
    return [(i, j) for i, j in remaining
            if sum(1 for a, _ in remaining if a == i) == 1 and sum(1 for _, b in remaining if b == j) == 1]


def test_identical_links_are_dropped_before_the_one_to_one_filter():
    src, tgt = ["Paris", "is", "big"], ["Paris", "Parisienne", "grande"]
    links = {(0, 0), (0, 1), (2, 2)}
    stats = WordPairStats()
    # 0-0 joins two identical words and goes first, so 0-1 is then Paris's only link
    assert word_pairs(src, tgt, links, [0, 1, 2], [0, 1, 2], stats) == [(0, 1), (2, 2)] == _published_procedure(src, tgt, links)
    assert stats.as_dict() == {"links": 3, "kept": 2, "dropped_identical": 1, "dropped_not_one_to_one": 0}


def test_word_pairs_follow_the_published_procedure_on_random_alignments():
    import random

    rng = random.Random(7)
    differs_from_one_to_one_first = 0
    for _ in range(400):
        src = [rng.choice("abcd") for _ in range(rng.randint(1, 6))]
        tgt = [rng.choice("abcd") for _ in range(rng.randint(1, 6))]
        links = {(rng.randrange(len(src)), rng.randrange(len(tgt))) for _ in range(rng.randint(0, 8))}
        stats = WordPairStats()
        got = word_pairs(src, tgt, links, list(range(len(src))), list(range(len(tgt))), stats)
        expected = _published_procedure(src, tgt, links)
        assert got == expected
        assert stats.kept == len(expected) and stats.links == len(links) == len(expected) + sum(stats.dropped.values())
        assert stats.dropped["identical"] == sum(src[i] == tgt[j] for i, j in links)
        one_to_one_first = [(i, j) for i, j in one_to_one_links(links) if src[i] != tgt[j]]
        differs_from_one_to_one_first += one_to_one_first != expected
    assert differs_from_one_to_one_first > 0  # the cases tell the two orders apart


def test_out_of_range_links_are_counted_and_take_no_part_in_the_filters():
    stats = WordPairStats()
    # (0,5) is beyond the target; (0,0) stays Paris's only link
    assert word_pairs(["Paris"], ["Parigi"], {(0, 0), (0, 5)}, [1], [1], stats) == [(1, 1)]
    assert stats.as_dict() == {"links": 2, "kept": 1, "dropped_not_one_to_one": 0, "dropped_out_of_range": 1}
    stats = WordPairStats()  # a negative index is out of range too (it took the last word: (-1, 0) was kept)
    assert word_pairs(["Paris", "Rome"], ["Parigi"], {(-1, 0)}, [1, 2], [1], stats) == []
    assert stats.as_dict()["dropped_out_of_range"] == 1


def test_words_lost_to_truncation_are_counted(tiny_tokenizer):
    src, tgt = ["the", "house"], ["das", "haus"]
    stats = WordPairStats()
    pairs = word_pairs(src, tgt, {(0, 0), (1, 1)}, first_subword_positions(tiny_tokenizer, src, max_length=3),
                       first_subword_positions(tiny_tokenizer, tgt), stats)
    assert pairs == [(1, 1)] and stats.dropped["no_subword"] == 1


def test_slow_tokenizer_is_refused():
    class Slow:
        is_fast = False

    with pytest.raises(ValueError, match="fast"):
        first_subword_positions(Slow(), ["a"])
