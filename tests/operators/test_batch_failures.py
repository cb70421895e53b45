"""A batch the translation backend or the parser fails on is retried by halves: only the rows that fail alone are
rejected, each with its own error, the others translated / parsed as they would be in a good batch."""

from __future__ import annotations

import numpy as np

from interlingua.operators.base import REJECT_REASON
from interlingua.operators.by_halves import run_by_halves


class _Picky:
    """Upper-cases a batch; raises on the first sentence that starts with 'bad', naming it."""

    def __init__(self):
        self.calls: list[int] = []

    def __call__(self, sentences):
        self.calls.append(len(sentences))
        for sentence in sentences:
            if sentence.startswith("bad"):
                raise ValueError(f"cannot take {sentence!r}")
        return [s.upper() for s in sentences]

    translate = parse = __call__


def test_run_by_halves_isolates_the_failing_items():
    picky = _Picky()
    items = ["a", "b", "bad one", "c", "d", "e", "bad two", "f"]
    outputs, errors = run_by_halves(picky, items)
    assert outputs == ["A", "B", None, "C", "D", "E", None, "F"]
    assert {k: str(e) for k, e in errors.items()} == {2: "cannot take 'bad one'", 6: "cannot take 'bad two'"}
    assert run_by_halves(picky, []) == ([], {})


def test_one_bad_sentence_rejects_only_its_row(monkeypatch):
    from interlingua.operators.translate import operator

    monkeypatch.setattr(operator, "make_translator", lambda spec, pair: _Picky())
    op = operator.TranslateOperator("en-es", {"backend": "apertium"})
    texts = ["a man", "bad one", "", "two dogs", "bad two"]
    out = op({"text": np.array(texts, dtype=object)})
    assert list(out["translation"]) == ["A MAN", "", "", "TWO DOGS", ""]
    assert list(out[REJECT_REASON]) == ["", "translate: backend error: ValueError: cannot take 'bad one'",
                                        "translate: empty source text", "",
                                        "translate: backend error: ValueError: cannot take 'bad two'"]


def test_one_sentence_the_parser_raises_on_rejects_only_its_row():
    from interlingua.operators.amr.operator import ParseOperator
    from interlingua.operators.amr.parser import ParseResult

    class Parser(_Picky):
        def parse(self, sentences):
            return [ParseResult("(s / sleep-01)", "", text, 1) for text in super().__call__(sentences)]

    out = ParseOperator("unused", parser=Parser())({"text": np.array(["a man", "bad one", "a dog"], dtype=object)})
    assert list(out[REJECT_REASON]) == ["", "parse: parser error: ValueError: cannot take 'bad one'", ""]
    assert list(out["parse_raw"]) == ["A MAN", "", "A DOG"] and out["penman"][2] == "(s / sleep-01)"
