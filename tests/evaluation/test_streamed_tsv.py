"""Tab-separated benchmark files are read one line at a time: XNLI's discovery read the whole test file into memory
(its bytes, its text and a list of its lines) to list the languages of its ``language`` column."""

import codecs
import tracemalloc

import pytest

from interlingua.evaluation.data import files
from interlingua.evaluation.data.files import read_lines, read_tsv_dicts, stream_lines
from interlingua.evaluation.tasks.official_suite import discover_official_tasks

XNLI_HEADER = "language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2\tpairID\n"


def _xnli(folder, test_rows):
    folder.mkdir()
    (folder / "multinli.train.en.tsv").write_text("premise\thypo\tlabel\na\tb\tneutral\n")
    (folder / "xnli.dev.tsv").write_text(XNLI_HEADER + "de\tneutral\t-\t-\ta\tb\t1\n")
    (folder / "xnli.test.tsv").write_text(XNLI_HEADER + "".join(test_rows))
    return folder


def test_xnli_discovery_lists_the_languages_holding_one_line_of_the_test_file_at_a_time(tmp_path):
    sentence = "a premise long enough to make the file a few megabytes " * 3
    languages = ["ar", "de", "fr", "sw", "zh"]
    rows = [f"{languages[i % 5]}\tneutral\t-\t-\t{sentence}\t{sentence}\t{i}\n" for i in range(16_000)]
    rows.insert(500, "ur\tneutral\ttoo few fields\n")  # not a row: its language is not listed, as before
    folder = _xnli(tmp_path / "xnli", rows)
    size = (folder / "xnli.test.tsv").stat().st_size
    tracemalloc.start()
    try:
        [task] = discover_official_tasks("xnli", folder)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert task.language == ",".join(languages)
    assert size > 5_000_000 and peak < size / 10, (size, peak)  # the whole file was held at least twice


def test_streamed_lines_are_the_lines_read_whole(tmp_path):
    # U+2028, U+0085, form feed and a bare CR are part of a line; CRLF ends one; the BOM is no part of the text
    cases = {"tricky": "\ufeffa\u2028b\r\nc\x85d\x0ce\n\nf\rg\n", "no_final_newline": "x\n\ny", "empty": "",
             "crlf_last": "a\r\n"}
    for name, text in cases.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        assert list(stream_lines(str(tmp_path / name))) == read_lines(str(tmp_path / name)), name
    (tmp_path / "latin1.txt").write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt is not valid UTF-8 \(byte 6\)"):
        list(stream_lines(str(tmp_path / "latin1.txt")))
    with pytest.raises(ValueError, match="file not found"):
        list(stream_lines(str(tmp_path / "missing.txt")))


def test_tsv_rows_are_unchanged(tmp_path):
    (tmp_path / "rows.tsv").write_bytes("\ufeffa\tb\r\n1\t2\r\n\n  \n3\n4\t\"5\"\n".encode("utf-8"))
    assert list(read_tsv_dicts(str(tmp_path / "rows.tsv"))) == [
        (2, {"a": "1", "b": "2"}), (5, {"__error__": "1 fields, header has 2"}), (6, {"a": "4", "b": '"5"'})]
    (tmp_path / "empty.tsv").write_text("")
    assert list(read_tsv_dicts(str(tmp_path / "empty.tsv"))) == []


def test_a_tsv_header_is_read_without_the_rows(tmp_path):
    """WMT20 QE's discovery reads each candidate file's header (is z_mean there?): the whole file was read for it."""
    from interlingua.evaluation.data.files import read_tsv_header

    path = tmp_path / "dev.eten.df.short.tsv"
    path.write_text("index\toriginal\tz_mean\n" + "0\tsome sentence of the file\t0.5\n" * 200_000)
    tracemalloc.start()
    try:
        header = read_tsv_header(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert header == ["index", "original", "z_mean"]
    assert peak < path.stat().st_size / 10, peak
    (tmp_path / "empty.tsv").write_text("")
    assert read_tsv_header(str(tmp_path / "empty.tsv")) == []


def test_a_bom_is_read_alike_whole_and_streamed(tmp_path):
    """A file of a BOM alone has no lines (stream_lines gave [''], so its TSV header was ['']), and an error's byte
    is counted from the file's start, the BOM included (read_lines, and stream_lines on a first line, left it out)."""
    from interlingua.evaluation.data.files import read_text, read_tsv_header

    bom = b"\xef\xbb\xbf"
    (tmp_path / "bom_only").write_bytes(bom)
    assert list(stream_lines(str(tmp_path / "bom_only"))) == read_lines(str(tmp_path / "bom_only")) == []
    assert read_tsv_header(str(tmp_path / "bom_only")) == [] and read_text(str(tmp_path / "bom_only")) == ""
    (tmp_path / "bom_newline").write_bytes(bom + b"\n")
    assert list(stream_lines(str(tmp_path / "bom_newline"))) == read_lines(str(tmp_path / "bom_newline")) == [""]
    for name, data, byte in [("second_line", bom + b"\n\ta\xff", 6), ("first_line", bom + b"a\xff\n", 4)]:
        (tmp_path / name).write_bytes(data)
        for read in (read_lines, read_text, lambda url: list(stream_lines(url))):
            with pytest.raises(ValueError, match=rf"{name} is not valid UTF-8 \(byte {byte}\)"):
                read(str(tmp_path / name))


class _StreamedRemoteFile:
    """A remote file as fsspec streams it without a length (HTTP): ``read(n)`` only; iterating it line by line
    (``readuntil``: a block read, then a seek back) fails, as fsspec's HTTPStreamFile cannot seek."""

    def __init__(self, data: bytes):
        self._data, self._at, self.reads = data, 0, 0

    def read(self, size=-1):
        self.reads += 1
        end = len(self._data) if size < 0 else self._at + size
        chunk, self._at = self._data[self._at:end], min(end, len(self._data))
        return chunk

    def __iter__(self):
        raise ValueError("Cannot seek streaming HTTP file")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_lines_are_read_in_blocks_from_a_file_that_cannot_seek(monkeypatch):
    """Iterating an fsspec remote file reads a whole block per line and seeks back (81 s for a 6.9 MB file over HTTP,
    0.44 s read whole), and a streamed HTTP file cannot seek: lines are split from blocks read in turn."""
    lines = [f"line {i}\twith ü {'x' * (i % 50)}" for i in range(20_000)]
    data = codecs.BOM_UTF8 + "\r\n".join(lines).encode("utf-8") + b"\n"
    remote = _StreamedRemoteFile(data)
    monkeypatch.setattr(files, "_open_binary", lambda url: remote)
    assert files.read_lines("https://example.org/big.tsv") == lines
    assert remote.reads <= len(data) // files.CHUNK_BYTES + 2


def test_a_file_over_http_is_read_from_a_server_that_answers_no_range_request(tmp_path):
    """Python's http.server answers no range request: block reads of a file larger than fsspec's block (5 MB) failed
    ("doesn't appear to support range requests"); http(s) files are read as one streamed GET."""
    import functools
    import http.server
    import threading

    lines = [f"{i}\t{'y' * 60}" for i in range(100_000)]  # 6.8 MB
    (tmp_path / "big.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert read_lines(f"http://127.0.0.1:{server.server_address[1]}/big.tsv") == lines
    finally:
        server.shutdown()
        server.server_close()
