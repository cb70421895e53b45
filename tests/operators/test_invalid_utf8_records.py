"""One helper (``parallel_lines.invalid_utf8_reject``) builds the ``invalid_utf8`` reject record of a text line, a
TSV line and a Parquet cell; the records keep their keys, order and wording (the reject files' bytes), and a Parquet
cell keeps a leading byte order mark that a file's first line drops."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from interlingua.operators.bitext.parallel_lines import invalid_utf8_reject
from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

BOM = b"\xef\xbb\xbf"


def test_a_line_and_a_parquet_cell_get_the_same_record_from_one_helper(tmp_path):
    bad, good = BOM + b"bad \xff byte", BOM + b"casa"
    (tmp_path / "s.txt").write_bytes(bad + b"\nok\n")
    (tmp_path / "t.txt").write_bytes(b"la\nnicht \xc3\x28 gut\n")
    text = read_bitext(BitextCorpusConfig(source=str(tmp_path / "s.txt"), target=str(tmp_path / "t.txt")),
                       str(tmp_path / "s.txt"))
    src = str(tmp_path / "s.txt")
    # the first line: the byte order mark is not text, so the bad byte is 4 into the line and 7 into the file
    assert list(text[0]["reject"].items()) == [
        ("line", 1), ("side", "src"), ("file", src), ("reason", "invalid_utf8"), ("byte_offset", 7),
        ("byte_offset_in_line", 4), ("detail", f"invalid UTF-8 byte 0xff at byte 7 of {src} (invalid start byte)")]
    tgt = str(tmp_path / "t.txt")
    assert text[1]["reject"] == {
        "line": 2, "side": "tgt", "file": tgt, "reason": "invalid_utf8", "byte_offset": 9, "byte_offset_in_line": 6,
        "detail": f"invalid UTF-8 byte 0xc3 at byte 9 of {tgt} (invalid continuation byte)"}

    path = str(tmp_path / "p.parquet")
    pq.write_table(pa.table({"src": pa.array([bad, good], pa.binary()), "tgt": pa.array([b"la", good], pa.binary())}),
                   path)
    cells = read_bitext(BitextCorpusConfig(source=path), path)
    # a cell: its bytes are all text (the mark stays), so the bad byte is 7 into it; no offset in the file
    assert list(cells[0]["reject"].items()) == [
        ("line", 1), ("side", "src"), ("file", path), ("reason", "invalid_utf8"), ("byte_offset_in_line", 7),
        ("detail", "row 1 src: invalid UTF-8 byte 0xff at byte 7")]
    assert (cells[1]["src"], cells[1]["tgt"], cells[1]["reject"]) == ("\ufeffcasa", "\ufeffcasa", None)

    error = UnicodeDecodeError("utf-8", bad, 7, 8, "invalid start byte")
    assert invalid_utf8_reject(bad, error, line=1, side="src", file=path) == cells[0]["reject"]
    assert invalid_utf8_reject(bad[3:], UnicodeDecodeError("utf-8", bad[3:], 4, 5, "invalid start byte"), line=1,
                               side="src", file=src, file_offset=3) == text[0]["reject"]
