"""Parse operator: validation and retry path with scripted outputs, plumbing with a tiny random seq2seq model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from interlingua.operators.amr.operator import ParseOperator, linearize_batch
from interlingua.operators.amr.parser import Seq2SeqAmrParser, read_amrlib_meta, tokenizer_source
from interlingua.operators.amr.validate import count_reasons, validate_penman
from interlingua.operators.base import REJECT_REASON

VALID = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"


class ScriptedParser(Seq2SeqAmrParser):
    """A parser whose 'model' returns hand-written outputs per (sentence, beam)."""

    def __init__(self, outputs: dict[tuple[str, int], str], cut_off: set[tuple[str, int]] = frozenset(), **kwargs):
        super().__init__("unused", load=False, **kwargs)
        self.outputs = outputs
        self.cut_off = cut_off  # the (sentence, beam) outputs that stopped at max_length
        self.calls: list[tuple[int, list[str]]] = []

    def encode(self, sentences):
        return {"input_ids": [[len(s)] for s in sentences]}

    def generate(self, sentences, beam_size, encoded=None):
        self.calls.append((beam_size, list(sentences)))
        return [(self.outputs.get((s, beam_size), ""), (s, beam_size) in self.cut_off) for s in sentences]


@pytest.mark.parametrize(
    "text, category",
    [
        (VALID, ""),
        ("(w / want-01 :ARG0 (b / boy)", "decode-error"),
        ("", "empty-output"),
        ("(a / b) (c / d)", "multiple-graphs"),
        ("(a :ARG0 (b / boy))", "missing-concept"),
        ("(a / boy :ARG0 (a / girl))", "duplicate-variable"),
        ("(a / see-01 :ARG0 x2)", "undefined-variable"),
        ("(w / want-01 :polarity - :mode imperative :quant 3)", ""),
        ("# ::snt The boy wants to go.\n" + VALID + "\n", ""),
        ('(n / name :op1 "a ) b")', ""),
        ("(w / want-01 :ARG0 (b / boy)))", "decode-error"),
        ("(a / b) )", "decode-error"),
        ("The graph is (a / b)", "decode-error"),
        ("a / b", "decode-error"),
        ("(a / b / c)", "decode-error"),
        ("(a / b) and more", "trailing-text"),
        ("(a / b :ARG0)", "missing-target"),
        ("(a / b :ARG0 :ARG1 (c / d))", "missing-target"),
        ("(a / b :)", "missing-target"),
        ("(a / b : (c / d))", "invalid-role"),
        ('(a / "boy")', "invalid-concept"),
        ("()", "missing-concept"),
        ("(a / b :ARG0 (c / ))", "missing-concept"),
    ],
)
def test_validation_categories(text, category):
    assert validate_penman(text).reason.split(":")[0] == category


@pytest.mark.parametrize(
    "text, reason",
    [
        ("(a / b))", "decode-error: unbalanced parentheses: extra ')' after the graph"),
        ("x (a / b)", "decode-error: text before the graph: 'x'"),
        ("(a / b) junk", "trailing-text: 'junk'"),
        ("(a / b :ARG0)", "missing-target: :ARG0"),
        ('(a / "boy")', 'invalid-concept: "boy"'),
        ("()", "missing-concept: (empty node)"),
    ],
)
def test_malformed_graphs_are_rejected_with_a_specific_reason(text, reason):
    validation = validate_penman(text)
    assert not validation.ok and validation.graph is None
    assert validation.reason == reason


# graphs the audit found refused though penman reads them, and their neighbours that were always accepted
PENMAN_READS = [
    "(s / say-01 :ARG0 (i / i) :ARG1 (l / letter :value a))",  # a one-letter constant no variable starts with
    "(a / and :op1 (g / go-02) :li x)",
    "(m / monetary-quantity :quant 5 :unit e)",
    "# ::snt hi\n(b / boy)\n# ::id 2",  # a comment line after the graph
    "(b / boy) # said of the boy\n\n# ::note two comments\n",
    "(g / go-02 :mode imperative :ARG0 (y / you))",
    "(w / want-01 :ARG0 b :ARG1 (g / go-02 :ARG0 (b / boy)))",
    '(p / person :wiki - :name (n / name :op1 "Bob"))',
    "(x1 / boy :ARG0-of (x2 / run-01))",
]


@pytest.mark.parametrize("text", PENMAN_READS)
def test_graphs_penman_reads_are_valid(text):
    import penman

    validation = validate_penman(text)
    assert validation.ok, validation.reason
    assert validation.graph.triples == penman.decode(text).triples


@pytest.mark.parametrize(
    "text, reason",
    [
        ("(b / boy :ARG0-of (b2 / run-01 :ARG1 b3))", "undefined-variable: b3"),  # penman reads b3 as a constant
        ("(b2 / boy :mod b)", "undefined-variable: b"),
        ("(a / see-01 :ARG0 x2)", "undefined-variable: x2"),
        ("(a / b)\n# ::id 2\n(c / d)\n# end\n", "multiple-graphs"),
    ],
)
def test_references_to_variables_never_defined_and_graphs_between_comments_stay_rejects(text, reason):
    assert validate_penman(text).reason == reason


def test_unknown_role_only_rejected_when_asked():
    assert validate_penman("(a / b :foo (c / d))").ok
    assert validate_penman("(a / b :foo (c / d))", check_roles=True).reason == "invalid-role: :foo"


def test_invalid_outputs_are_retried_with_larger_beam_and_kept_as_rejects():
    parser = ScriptedParser(
        {("good", 2): VALID, ("fixed", 2): "(x / y", ("fixed", 5): "(s / sleep-01 :ARG0 (c / cat))", ("bad", 2): "(((", ("bad", 5): "(a / b :ARG0"},
        beam_size=2, retry_beam_size=5,
    )
    op = ParseOperator("unused", parser=parser)
    out = op({"text": np.array(["good", "fixed", "bad", ""], dtype=object), "id": np.arange(4)})
    assert [c[0] for c in parser.calls] == [2, 5]
    assert parser.calls[1][1] == ["fixed", "bad"]
    assert out["penman"][0] == "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    assert out["penman"][1] == "(s / sleep-01 :ARG0 (c / cat))" and out["parse_beam"][1] == 5
    assert out[REJECT_REASON][2].startswith("parse: decode-error") and "after retry with beam 5" in out[REJECT_REASON][2]
    assert out["parse_raw"][2] == "(a / b :ARG0"  # the retry's raw output is what is kept
    assert out[REJECT_REASON][3] == "parse: empty text"
    assert count_reasons([r.removeprefix("parse: ") for r in out[REJECT_REASON]]) == {"decode-error": 1, "empty text": 1}
    lin = linearize_batch(out)
    assert lin["linearized"][0] == "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )"
    assert lin["linearized"][1] == "( sleep-01 :ARG0 ( cat ) )"
    assert lin["linearized"][2] == "" and lin["linearized"][3] == ""


def test_outputs_cut_off_at_max_length_are_rejected_as_max_length_before_validation():
    """A cut-off output that happens to parse ("short" at beam 2) is no graph; a wider beam that ends is taken."""
    parser = ScriptedParser(
        {("short", 2): "(w / want-01)", ("short", 5): VALID, ("long", 2): "(w / want-01 :ARG0 (b / boy",
         ("long", 5): "(w / want-01 :ARG0 (b / boy :ARG1", ("fine", 2): VALID},
        cut_off={("short", 2), ("long", 2), ("long", 5)}, beam_size=2, retry_beam_size=5, max_length=12,
    )
    out = ParseOperator("unused", parser=parser)({"text": np.array(["short", "long", "fine"], dtype=object)})
    assert parser.calls == [(2, ["short", "long", "fine"]), (5, ["short", "long"])]
    assert out["penman"][0] == VALID and out["parse_beam"][0] == 5 and out[REJECT_REASON][0] == ""
    assert out[REJECT_REASON][1] == ("parse: max-length: output reached max_length 12 without an end token "
                                     "(after retry with beam 5)")
    assert out["penman"][1] == "" and out["parse_raw"][1] == "(w / want-01 :ARG0 (b / boy :ARG1"
    assert out["penman"][2] == VALID and out[REJECT_REASON][2] == ""
    without_retry = ScriptedParser({("short", 2): "(w / want-01)"}, cut_off={("short", 2)}, beam_size=2,
                                   retry_beam_size=None, max_length=12)
    assert [(r.penman, r.reason) for r in without_retry.parse(["short"])] == [
        ("", "max-length: output reached max_length 12 without an end token")]


def test_parser_options_are_validated():
    with pytest.raises(ValueError, match="retry_beam_size"):
        Seq2SeqAmrParser("unused", beam_size=4, retry_beam_size=4, load=False)
    with pytest.raises(ValueError, match="batch_size"):
        Seq2SeqAmrParser("unused", batch_size=0, load=False)


def test_amrlib_folder_takes_its_tokenizer_from_base_model(tmp_path):
    (tmp_path / "amrlib_meta.json").write_text(json.dumps({"model_type": "parse_xfm", "base_model": "facebook/bart-large"}))
    assert tokenizer_source(str(tmp_path), read_amrlib_meta(tmp_path)) == "facebook/bart-large"
    (tmp_path / "tokenizer_config.json").write_text("{}")
    assert tokenizer_source(str(tmp_path), read_amrlib_meta(tmp_path)) == str(tmp_path)


@pytest.mark.slow
def test_tiny_random_seq2seq_plumbing(tmp_path):
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    folder = str(build_tiny_marian(tmp_path / "parser"))
    op = ParseOperator(folder, parser_kwargs={"beam_size": 1, "retry_beam_size": 2, "max_length": 8, "device": "cpu"})
    out = op({"text": np.array(["a man is playing", "two dogs run"], dtype=object)})
    assert len(out["penman"]) == 2
    assert all(r.startswith("parse: ") for r in out[REJECT_REASON])  # random weights never emit a graph
    assert all(raw for raw in out["parse_raw"]) and list(out["parse_beam"]) == [2, 2]
