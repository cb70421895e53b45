"""NLI text a sentence of the corpus cannot be (a lone surrogate, a NUL or another control character) is a malformed
row with its reason, written aside like a bad JSON line; a parser that raises rejects its rows, not the run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from interlingua.operators.base import REJECT_REASON
from interlingua.operators.nli.triples import build_triples, normalize_pair


def _pair(premise, hypothesis="A person rests.", label="entailment"):
    return {"sentence1": premise, "sentence2": hypothesis, "gold_label": label, "captionID": "c1"}


@pytest.mark.parametrize(("row", "reason"), [
    (_pair("A man\ud800 sleeps."), "premise: not valid Unicode: surrogates not allowed (U+D800 at character 5)"),
    (_pair("A man sleeps.", "A dog\x00runs."), "hypothesis: control character U+0000 at character 5"),
    (_pair("A man\x1b[31m sleeps."), "premise: control character U+001B at character 5"),
])
def test_text_utf8_cannot_carry_or_with_control_characters_is_malformed(row, reason):
    assert normalize_pair(row) == reason


def test_tabs_newlines_and_other_scripts_stay_good():
    assert normalize_pair(_pair("Un  hombre\tduerme\n", "Ein Mann schläft. 男人")) == (
        "Un hombre duerme", "Ein Mann schläft. 男人", "entailment", "c1")


def test_a_surrogate_row_is_written_aside_and_the_corpus_is_built(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows import amr_corpus

    nli = tmp_path / "nli.jsonl"
    good = [_pair("A man sleeps."), _pair("A man sleeps.", "A man runs.", "contradiction")]
    lines = [json.dumps(row) for row in good] + ['{"sentence1": "bad \\ud800 text", "sentence2": "x", '
                                                  '"gold_label": "entailment"}']
    nli.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(amr_corpus, "environment_preflight", lambda config: None)  # Apertium or not
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: (
        [{"source_id": t.triple_id, "role": "premise", "lang": "en", "text": t.premise} for t in part], []))
    summary = amr_corpus.run(amr_corpus.AmrCorpusConfig(source=str(nli), store_root=str(tmp_path / "store")))
    store = CorpusStore(str(tmp_path / "store"))
    assert summary["nli"]["triples"] == 1 and summary["rows"] == 1
    rejects = store.read_rejects("amr-corpus").to_pylist()
    assert [r["reason"] for r in rejects] == ["premise: not valid Unicode: surrogates not allowed (U+D800 at character 4)"]
    assert json.loads(rejects[0]["row"])["sentence1"] == "bad \ud800 text"  # the row as read, escaped


class _Raising:
    def parse(self, sentences):
        raise RuntimeError("tokenizer exploded")


def test_a_parser_exception_rejects_its_rows_and_not_the_run():
    from interlingua.operators.amr.operator import ParseOperator

    out = ParseOperator("unused", parser=_Raising())({"text": np.array(["a man sleeps", ""], dtype=object)})
    assert list(out[REJECT_REASON]) == ["parse: parser error: RuntimeError: tokenizer exploded", "parse: empty text"]
    assert list(out["penman"]) == ["", ""]


def test_a_line_whose_bytes_are_not_utf8_is_set_aside_with_its_line(tmp_path):
    from interlingua.operators.nli.sources import read_nli_rows

    nli = tmp_path / "nli.jsonl"
    good = [json.dumps(_pair("A man sleeps.")), json.dumps(_pair("A man sleeps.", "A man runs.", "contradiction"))]
    nli.write_bytes(good[0].encode() + b"\n" + b'{"sentence1": "caf\xe9 \xff"}\n' + good[1].encode() + b"\n")
    build = build_triples(read_nli_rows(str(nli)))
    assert len(build.triples) == 1 and build.triples[0].contradiction == "A man runs."
    assert build.malformed_rows == [{"reason": "invalid UTF-8 at byte 18 of line 2",
                                     "row": {"_encoding_error": "invalid UTF-8 at byte 18 of line 2", "line": 2}}]
