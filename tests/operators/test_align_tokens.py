"""Tokens as fast_align reads them (split at spaces and tabs only), in every path that aligns them."""

import sys

import pytest

from interlingua.operators.align.tokens import split_tokens

#: Every character str.split() splits at (Unicode spaces, \v, \f, \r, \x1c-\x1f, U+0085, ...).
UNICODE_SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def test_only_spaces_and_tabs_split_a_token():
    others = [c for c in UNICODE_SPACES if c not in " \t"]
    assert len(others) == 27 and {"\u00a0", "\u2009", "\u3000", "\v", "\f", "\r", "\x85"} <= set(others)
    line = "  a\tb " + "x".join(others) + " \t c\u00a0d\r e\t"
    assert split_tokens(line) == ["a", "b", "x".join(others), "c\u00a0d\r", "e"]
    assert split_tokens("") == split_tokens(" \t ") == []
    assert split_tokens("\u3000") == ["\u3000"]


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_moses_tokens_hold_no_space_so_the_bitext_corpus_tokens_are_unchanged(lang):
    """bitext-corpus joins Moses tokens by spaces and splits them again (str.split there, fast_align's rule in the
    aligner): Moses turns every Unicode space into a separator, so both splits give its tokens."""
    from interlingua.operators.text.moses_tokenizer import tokenize

    text = "Das Haus" + "klein".join(UNICODE_SPACES) + "ist\u00a0alt\u3000und\u2009gross."
    tokens = tokenize(text, lang)
    joined = " ".join(tokens)
    assert split_tokens(joined) == joined.split() == tokens and len(tokens) > 30


def test_eflomal_reads_our_tokens_at_our_indices():
    """eflomal's reader splits with str.split(): tokens holding Unicode spaces are passed escaped, so it sees as many
    tokens as we do, and distinct tokens stay distinct (the escape mark itself escaped too)."""
    from eflomal.cython import read_text

    from interlingua.operators.align.eflomal_backend import ESCAPE_MARK, _eflomal_lines, eflomal_token

    sentences = [["a\u00a0b", "c"], ["a", "b", "c\u3000"], ["x" + ESCAPE_MARK + "00a0", "x\u00a0", "d\x0be"],
                 ["c", "a\u00a0b", "\u2009"]]
    sentences.append([eflomal_token(t) for t in sentences[2]])  # already-escaped spellings are other tokens
    read, index = read_text(_eflomal_lines(sentences), True, 0, 0)
    assert [len(s) for s in read] == [len(s) for s in sentences]
    ids = {}
    for sentence, word_ids in zip(sentences, read):
        for token, word_id in zip(sentence, word_ids.tolist()):
            assert ids.setdefault(token, word_id) == word_id
    assert len(set(ids.values())) == len(ids)
    assert eflomal_token("plain-token") == "plain-token"
