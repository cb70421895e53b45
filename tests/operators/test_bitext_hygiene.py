"""Bitext hygiene filters and parallel line reading (counts, rejects, byte offsets)."""

import pytest

from interlingua.operators.bitext.hygiene import BitextHygiene, HygieneSettings, sample_unit
from interlingua.operators.bitext.parallel_lines import LineCountMismatch, count_lines, read_parallel_lines


def test_filters_are_counted_and_rejects_kept():
    pairs = [("a b", "x y"), ("", "x"), ("a b", "x y"), ("a", "x y z w"), ("c", "z")]
    hygiene = BitextHygiene(HygieneSettings(max_length_ratio=3.0), "en-es")
    assert list(hygiene.filter(pairs)) == [("a b", "x y"), ("c", "z")]
    assert dict(hygiene.counts) == {"input": 5, "kept": 2, "empty": 1, "duplicate": 1, "length_ratio": 1}
    assert [r["reason"] for r in hygiene.rejects] == ["empty", "duplicate", "length_ratio"]


def test_sampling_is_deterministic_and_close_to_the_fraction():
    pairs = [(f"s{i}", f"t{i}") for i in range(4000)]
    first = list(BitextHygiene(HygieneSettings(sample_fraction=0.05, seed=3), "en-es").filter(pairs))
    again = list(BitextHygiene(HygieneSettings(sample_fraction=0.05, seed=3), "en-es").filter(reversed(pairs)))
    assert sorted(first) == sorted(again)  # independent of order
    assert 140 <= len(first) <= 260
    other_seed = list(BitextHygiene(HygieneSettings(sample_fraction=0.05, seed=4), "en-es").filter(pairs))
    assert first != other_seed
    assert 0.0 <= sample_unit(0, "en-es", "a", "b") < 1.0


def test_settings_validation():
    with pytest.raises(ValueError, match="sample_fraction"):
        HygieneSettings(sample_fraction=0.0)
    with pytest.raises(ValueError, match="max_length_ratio"):
        HygieneSettings(max_length_ratio=0.5)


def test_parallel_lines_keep_empty_lines_and_report_invalid_utf8_offsets(tmp_path):
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_bytes(b"one\n\ncaf\xc3\xa9 \xff bad\nlast")
    tgt.write_bytes(b"uno\r\nvacio\nmalo\nultimo\n")
    assert count_lines(str(src)) == 4 and count_lines(str(tgt)) == 4
    rows = list(read_parallel_lines(str(src), str(tgt)))
    assert [(r.src, r.tgt) for r in rows] == [("one", "uno"), ("", "vacio"), ("", "malo"), ("last", "ultimo")]
    reject = rows[2].reject
    assert reject["reason"] == "invalid_utf8" and reject["side"] == "src" and reject["line"] == 3
    assert reject["byte_offset"] == 4 + 1 + 6 and reject["byte_offset_in_line"] == 6


def test_line_count_mismatch_names_both_counts_and_the_first_file(tmp_path):
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("1\n2\n3\n")
    tgt.write_text("1\n2\n")
    with pytest.raises(LineCountMismatch, match=r"a\.txt has 3 lines but .*b\.txt has 2 lines"):
        list(read_parallel_lines(str(src), str(tgt)))
