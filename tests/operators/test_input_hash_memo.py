"""The input-hash memo (``<state>/cache/input-sha256.jsonl``) lives in a state folder that may be shared: it is read
with the cap it is written with. A memo past the cap is not read (one warning), a long line is skipped unheld."""

from __future__ import annotations

import json
import logging
import tracemalloc

import pytest

from interlingua.operators.corpus import input_fingerprints

DIGEST = "ab" * 32


@pytest.fixture
def memo(tmp_path, monkeypatch):
    path = tmp_path / "state" / "cache" / "input-sha256.jsonl"
    path.parent.mkdir(parents=True)
    monkeypatch.setattr(input_fingerprints, "_memo_path", lambda: path)
    monkeypatch.setattr(input_fingerprints, "_LOADED_FROM", [])
    monkeypatch.setattr(input_fingerprints, "_CONTENT_HASHES", {})
    return path


def _peak_while_reading() -> tuple[dict, int]:
    tracemalloc.start()
    try:
        known = dict(input_fingerprints._known_hashes())
        return known, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_memo_larger_than_its_cap_is_not_read_and_starts_afresh(memo, tmp_path, monkeypatch, caplog):
    """A memo past 32 MiB (sparse here: a single 'line' of NUL bytes after a good one) took 535 MB to read as one
    line; now it is skipped with one warning, its files are hashed again, and the next hash remembered rewrites it."""
    memo.write_text(json.dumps(["local\0/x\0" + "1", DIGEST]) + "\n")
    with memo.open("r+b") as handle:
        handle.truncate(input_fingerprints._MEMO_MAX_BYTES + input_fingerprints._MEMO_LINE_MAX_BYTES + 1)
    with caplog.at_level(logging.WARNING, logger=input_fingerprints.__name__):
        known, peak = _peak_while_reading()
        input_fingerprints._known_hashes()  # read once per process: one warning
    assert known == {} and peak < 1 << 20
    warnings = [r.getMessage() for r in caplog.records if r.name == input_fingerprints.__name__]
    assert len(warnings) == 1 and str(memo) in warnings[0] and "not read" in warnings[0]

    source = tmp_path / "in.tsv"
    source.write_text("a\tb\n")
    real_time = input_fingerprints.time.time
    monkeypatch.setattr(input_fingerprints.time, "time", lambda: real_time() + 10)  # settled: its hash is remembered
    input_fingerprints.fingerprint(str(source), content=True)
    assert memo.stat().st_size < 1 << 10  # started afresh with the one new line


def test_a_memo_line_longer_than_its_cap_is_skipped_without_being_held(memo):
    huge = json.dumps(["local\0/" + "x" * (4 << 20), DIGEST])  # 4 MiB: a valid pair, never written by interlingua
    memo.write_text("\n".join([json.dumps(["before", DIGEST]), huge, json.dumps(["after", DIGEST])]) + "\n")
    known, peak = _peak_while_reading()
    assert known == {"before": DIGEST, "after": DIGEST}
    assert peak < 1 << 20


def test_a_memo_line_at_the_cap_is_read(memo):
    key = "k" * (input_fingerprints._MEMO_LINE_MAX_BYTES - len(json.dumps(["", DIGEST])) - 1)
    line = json.dumps([key, DIGEST]) + "\n"
    assert len(line) == input_fingerprints._MEMO_LINE_MAX_BYTES
    longer = json.dumps(["j" + key, DIGEST]) + "\n"  # one byte over the cap
    memo.write_text(line + longer + line.replace('"k', '"i', 1))
    assert set(input_fingerprints._known_hashes()) == {key, "i" + key[1:]}
