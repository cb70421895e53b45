"""Fuzzed bad input (hypothesis): wikitext pages, PENMAN parser outputs, bitext lines and YAML configs never
crash the code that reads them, and every input is accounted for — kept, or rejected with a counted reason."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faults.harness import FaultCounts

pytestmark = pytest.mark.slow

FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
COUNTS: dict[str, FaultCounts] = {}

WIKI_PIECES = ["[[", "]]", "{{", "}}", "|", "'''", "''", "<ref>", "</ref>", "<!--", "-->", "==", "\n", "*", "#",
               "[[File:x.jpg|thumb|", "[[Category:", "{|", "|}", "&lt;", "&amp;", "<nowiki>", "</nowiki>", " ", ".",
               "Paris", "France", "#REDIRECT ", "<math>", "</math>", "\u0000", "\ufffd", "[http://u:p@h/x?token=1 a]"]
PENMAN_PIECES = ["(", ")", "a", "b", "/", " ", ":ARG0", ":", "\"", "x1", "want-01", "#", "\n", "-", "+", "~", "e.3"]


def _count(name: str) -> FaultCounts:
    return COUNTS.setdefault(name, FaultCounts())


@FUZZ
@given(st.lists(st.sampled_from(WIKI_PIECES) | st.text(max_size=20), max_size=60).map("".join),
       st.text(string.ascii_letters + " _()", min_size=0, max_size=30))
def test_wikitext_pages_never_crash_and_rejections_have_reasons(text, title):
    from interlingua.operators.wiki.dump_pages import RawPage
    from interlingua.operators.wiki.page_extract import ExtractionSettings, extract_page

    result = extract_page(RawPage(1, title, 0, None, text), "en", ExtractionSettings(min_sentence_chars=1))
    counts = _count("wikitext pages")
    counts.trials += 1
    counts.rows_checked += 1
    if result.rejected is not None:
        counts.faults += 1
        assert result.rejected and not result.sentences
    assert result.sentence_count >= len(result.sentences)
    for sentence in result.sentences:
        assert len(sentence.starts) == len(sentence.ends) == len(sentence.targets)
        assert all(0 <= s < e <= len(sentence.sentence) for s, e in zip(sentence.starts, sentence.ends))


@FUZZ
@given(st.lists(st.lists(st.sampled_from(PENMAN_PIECES), max_size=40).map("".join)
                | st.integers(0, 700).map(lambda n: "(a / b " + ":c (x / y " * n + ")" * (n + 1)), min_size=1,
                max_size=8))
def test_penman_outputs_are_valid_or_counted_rejects(outputs):
    from interlingua.operators.amr.linearize import linearize
    from interlingua.operators.amr.validate import count_reasons, validate_penman

    results = [validate_penman(text) for text in outputs]
    reasons = [r.reason for r in results]
    assert sum(count_reasons(reasons).values()) == sum(not r.ok for r in results)  # every reject counted
    for text, result in zip(outputs, results):
        assert result.ok != bool(result.reason)
        if result.ok:
            assert linearize(text)
    counts = _count("PENMAN outputs")
    counts.trials += 1
    counts.rows_checked += len(outputs)
    counts.faults += sum(not r.ok for r in results)


@FUZZ
@given(st.lists(st.tuples(st.binary(max_size=30), st.binary(max_size=30)), min_size=1, max_size=20))
def test_bitext_lines_are_all_kept_or_rejected_with_a_reason(tmp_path_factory, pairs):
    from interlingua.operators.bitext.hygiene import BitextHygiene, HygieneSettings
    from interlingua.operators.bitext.parallel_lines import read_parallel_lines

    folder = tmp_path_factory.mktemp("bitext")
    clean = [(s.replace(b"\n", b" "), t.replace(b"\n", b" ")) for s, t in pairs]
    (folder / "s").write_bytes(b"".join(s + b"\n" for s, _ in clean))
    (folder / "t").write_bytes(b"".join(t + b"\n" for _, t in clean))
    lines = list(read_parallel_lines(str(folder / "s"), str(folder / "t")))
    assert [p.number for p in lines] == list(range(1, len(clean) + 1))
    read_rejects = [p for p in lines if p.reject]
    assert all(p.reject["reason"] == "invalid_utf8" and p.reject["byte_offset"] >= 0 for p in read_rejects)
    hygiene = BitextHygiene(HygieneSettings(max_length_ratio=3.0), "xx-yy")
    kept = list(hygiene.filter((p.src, p.tgt) for p in lines if not p.reject))
    assert hygiene.counts["input"] == len(lines) - len(read_rejects)
    assert len(kept) + len(hygiene.rejects) + hygiene.counts["sampled_out"] == hygiene.counts["input"]
    assert sum(v for k, v in hygiene.counts.items() if k not in ("input", "kept")) == len(hygiene.rejects)
    counts = _count("bitext lines")
    counts.trials += 1
    counts.rows_checked += len(lines)
    counts.faults += len(read_rejects) + len(hygiene.rejects)


YAML_PIECES = ["corpus_name: ", "../../evil", "rows_per_shard: ", "-1", "0", "1e3", "[a, b]", "{x: 1}", "\n", ":", "- ",
               "source: ", "http://u:p@h/f?token=s", "workers: ", "true", "null", "'", "\"", "&a", "*a", "!!python/object:os.system",
               "  ", "\t", "max_tokens: ", "unknown_key: ", "symmetrization: ", "union", "%", "@", "?"]


@FUZZ
@given(st.lists(st.sampled_from(YAML_PIECES) | st.text(max_size=10), max_size=30).map("".join))
def test_yaml_configs_load_or_give_a_user_error(tmp_path_factory, text):
    from interlingua.core.config import load_config
    from interlingua.core.errors import UserError
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig

    path = tmp_path_factory.mktemp("yaml") / "config.yaml"
    path.write_text(text, encoding="utf-8")
    counts = _count("YAML configs")
    counts.trials += 1
    counts.rows_checked += 1
    try:
        config = load_config(BitextCorpusConfig, str(path))
    except UserError as err:
        counts.faults += 1
        assert str(err) and "Traceback" not in str(err)
        return
    assert config.corpus_name != "../../evil" and config.rows_per_shard >= 1


def test_zz_fuzz_counts():
    """Prints the totals (run with -s); runs last in this module."""
    for name, counts in sorted(COUNTS.items()):
        print(counts.line(f"fuzz {name} (faults = rejected inputs)"))
    assert COUNTS and all(c.trials > 0 for c in COUNTS.values())
