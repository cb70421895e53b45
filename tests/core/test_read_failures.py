"""A disk or network error while an input is read (an ``OSError`` with an errno: EIO, ENOSPC, ECONNRESET …) is an I/O
failure, raised with its errno and the file's name, whatever ``allow_truncated_inputs`` says: never reported as a
truncated or corrupt input, nor published partial. Damaged compressed data (bz2's plain ``OSError`` without an errno,
gzip's ``BadGzipFile``, zlib's and lzma's errors, ``EOFError``) still is truncation.

The same holds for an ``OSError`` subclass without an errno (a socket's or fsspec's ``TimeoutError``, an aiohttp-style
``ConnectionResetError``): only a plain ``OSError`` without an errno is bz2's damage.

The inputs are real compressed files, read through an fsspec filesystem (``eio://``) whose files raise
``OSError(EIO)`` (or another error: ``FSTimeoutError`` as fsspec's HTTP reads time out) once a given number of their
bytes has been read, as a failing disk does."""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import json

import pytest
from fsspec.spec import AbstractFileSystem

from interlingua.core.archives import TruncatedInputError, is_damage, read_failure


class _FailingRaw(io.RawIOBase):
    """The bytes of a file, then ``failure()`` (``OSError(EIO)``) from the read that reaches ``fail_at``."""

    def __init__(self, data: bytes, fail_at: int, failure):
        self._data, self._fail_at, self._failure, self._at = data, fail_at, failure, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self._at = {0: 0, 1: self._at, 2: len(self._data)}[whence] + offset
        return self._at

    def tell(self) -> int:
        return self._at

    def readinto(self, buffer) -> int:
        if self._at >= self._fail_at and self._at < len(self._data):
            raise self._failure()
        piece = self._data[self._at: min(self._at + len(buffer), max(self._fail_at, self._at))]
        buffer[: len(piece)] = piece
        self._at += len(piece)
        return len(piece)


class _FailingFileSystem(AbstractFileSystem):
    """``eio:///path``: the local file at ``/path``, whose reads fail with ``failure()`` (EIO) at byte ``fail_at``."""

    protocol = "eio"
    cachable = False
    fail_at = 0
    failure = staticmethod(lambda: OSError(errno.EIO, "Input/output error"))

    def _open(self, path, mode="rb", **kwargs):
        with open(path, "rb") as handle:
            return io.BufferedReader(_FailingRaw(handle.read(), self.fail_at, self.failure), buffer_size=4096)


@pytest.fixture
def failing(monkeypatch):
    """``(path, failure=EIO) -> eio:// URL`` of ``path``, read failing halfway through its bytes (raising ``failure()``)."""
    from fsspec.registry import _registry

    monkeypatch.setitem(_registry, "eio", _FailingFileSystem)  # fsspec.register_implementation, undone after

    def url(path, failure=None) -> str:
        monkeypatch.setattr(_FailingFileSystem, "fail_at", path.stat().st_size // 2)
        if failure is not None:
            monkeypatch.setattr(_FailingFileSystem, "failure", staticmethod(failure))
        return f"eio://{path}"

    return url


def _lines(count: int) -> str:
    return "".join(f"the house number {i} has a long garden behind it\tdas haus nummer {i}\n" for i in range(count))


def _write(path, text: str, compress) -> None:
    path.write_bytes(compress(text.encode()))


def _cut(path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 3 // 4])


def _assert_read_failure(caught, url: str) -> None:
    assert not isinstance(caught.value, TruncatedInputError)
    assert caught.value.errno == errno.EIO and caught.value.filename == url
    assert "I/O failure, not a truncated or corrupt file" in str(caught.value)


def _no_errno_failures() -> list[OSError]:
    from fsspec.exceptions import FSTimeoutError

    return [TimeoutError("timed out"), FSTimeoutError(), ConnectionResetError(), FileNotFoundError("gone")]


NO_ERRNO_FAILURES = _no_errno_failures()
COMPRESSIONS = [(".bz2", lambda data: bz2.compress(data, 1)), (".gz", gzip.compress)]


def test_codec_damage_and_read_failures_are_told_apart():
    import zlib

    errors = []
    member = gzip.compress(b"x" * 100)
    for damaged in (b"BZh9" + b"\x00" * 64, member[:-10], member[:-8] + bytes(4) + member[-4:],
                    b"\x1f\x8b\x08\x00" + b"\xff" * 40):
        try:
            (bz2 if damaged.startswith(b"BZh") else gzip).decompress(damaged)
        except Exception as error:  # noqa: BLE001 - what each codec raises is the point
            errors.append(error)
    assert [type(e) for e in errors] == [OSError, EOFError, gzip.BadGzipFile, zlib.error]
    assert all(map(is_damage, errors))
    assert errors[0].errno is None  # bz2's corrupt data: a plain OSError without an errno
    for failure in (OSError(errno.EIO, "Input/output error"), ConnectionResetError(errno.ECONNRESET, "reset"),
                    OSError(errno.ENOSPC, "No space left on device"), *NO_ERRNO_FAILURES):
        assert not is_damage(failure), failure
        named = read_failure("/data/pairs.tsv.gz", failure, 123)
        assert type(named) is type(failure)  # a TimeoutError stays one, a ConnectionResetError too
        assert not is_damage(named) and "/data/pairs.tsv.gz" in str(named) and "at byte 123" in str(named)
    assert not is_damage(read_failure("/data/x.gz", OSError("a raw read's plain error")))


@pytest.mark.parametrize("suffix, compress", COMPRESSIONS)
def test_a_timed_out_read_is_raised_naming_the_file_not_published_partial(tmp_path, failing, suffix, compress):
    """A read that times out (fsspec's HTTP files raise FSTimeoutError, a TimeoutError without an errno) was taken for a
    cut file: with allow_truncated_inputs the rows read so far were published as a partial version."""
    from fsspec.exceptions import FSTimeoutError

    from interlingua.core.config import load_config
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

    tsv = tmp_path / f"pairs.tsv{suffix}"
    _write(tsv, _lines(4000), compress)
    allowed = load_config(BitextCorpusConfig, None, ["allow_truncated_inputs=true"])
    url, partial = failing(tsv, FSTimeoutError), []
    with pytest.raises(TimeoutError, match=rf"FSTimeoutError reading the input {url} at byte \d+ \(an I/O failure"):
        read_bitext(allowed, url, partial)
    assert partial == []


def test_a_dump_read_that_times_out_names_the_file(tmp_path, failing):
    from interlingua.operators.wiki.dump_shards import DumpShard, iter_shard_bytes

    dump = tmp_path / "enwiki.xml.bz2"
    _write(dump, "<mediawiki>\n" + "<page><title>T</title></page>\n" * 50000 + "</mediawiki>\n", bz2.compress)
    url = failing(dump, lambda: TimeoutError("timed out"))
    with pytest.raises(TimeoutError, match=rf"timed out reading the input {url} at byte 0 "):
        list(iter_shard_bytes(DumpShard(url, "en", 0, 0, None, False)))


@pytest.mark.parametrize("suffix, compress", COMPRESSIONS)
def test_wikidata_json_and_page_props_read_failures_are_raised_even_when_truncation_is_allowed(
        tmp_path, failing, suffix, compress):
    from interlingua.operators.wiki.wikidata import load_wikidata_json, read_page_props_qids

    entities = "[\n" + ",\n".join(json.dumps({"id": f"Q{i}", "sitelinks": {"enwiki": {"title": f"T{i} " + "x" * 40}}})
                                  for i in range(1, 6000)) + "\n]\n"
    sql = "".join(f"INSERT INTO `page_props` VALUES ({i},'wikibase_item','Q{i}',NULL);\n" for i in range(1, 6000))
    readers = [("wd.json", entities, lambda url, partial: load_wikidata_json(url, ["en"], partial=partial)),
               ("props.sql", sql, read_page_props_qids)]
    for name, text, load in readers:
        path = tmp_path / f"{name}{suffix}"
        _write(path, text, compress)
        url = failing(path)
        partial: list[dict] = []
        with pytest.raises(OSError) as caught:  # allow_truncated_inputs: a partial list to fill
            load(url, partial)
        _assert_read_failure(caught, url)
        assert partial == []  # nothing recorded as a truncated input
        _cut(path)  # a real cut: still truncation, recorded
        load(str(path), partial)
        assert len(partial) == 1 and partial[0]["input_url"] == str(path)


@pytest.mark.parametrize("suffix, compress", COMPRESSIONS)
def test_bitext_tsv_and_text_pair_read_failures_are_raised_not_published_partial(tmp_path, failing, suffix, compress):
    from interlingua.core.config import load_config
    from interlingua.operators.bitext.parallel_lines import read_parallel_lines
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

    tsv = tmp_path / f"pairs.tsv{suffix}"
    _write(tsv, _lines(4000), compress)
    allowed = load_config(BitextCorpusConfig, None, ["allow_truncated_inputs=true"])
    url, partial = failing(tsv), []
    with pytest.raises(OSError) as caught:
        read_bitext(allowed, url, partial)
    _assert_read_failure(caught, url)
    assert partial == []
    _cut(tsv)
    rows = read_bitext(allowed, str(tsv), partial)
    assert 0 < len(rows) < 4000 and len(partial) == 1 and partial[0]["input_url"] == str(tsv)

    src, tgt = tmp_path / f"src{suffix}", tmp_path / f"tgt{suffix}"
    _write(src, _lines(4000), compress)
    _write(tgt, _lines(4000), compress)
    url = failing(tgt)
    with pytest.raises(OSError) as caught:
        list(read_parallel_lines(str(src), url))
    _assert_read_failure(caught, url)
    _cut(tgt)
    with pytest.raises(TruncatedInputError, match=rf"tgt{suffix} is truncated or corrupt"):
        list(read_parallel_lines(str(src), str(tgt)))


def test_a_dump_read_failure_fails_the_shard_naming_the_file_and_a_cut_dump_still_breaks(tmp_path, failing,
                                                                                          monkeypatch):
    """The dump reader raised the read's OSError already (only the decompressor's errors are breaks), without the file:
    from a Ray worker, `[Errno 5] Input/output error` and no more."""
    from interlingua.operators.wiki import dump_shards
    from interlingua.operators.wiki.dump_shards import DumpShard, StreamBreak, iter_shard_bytes

    monkeypatch.setattr(dump_shards, "READ_CHUNK_BYTES", 4096)  # several chunks read before the failure
    page = "<page><title>T{0}</title><ns>0</ns><id>{0}</id><revision><text>text {0}</text></revision></page>\n"
    dump = tmp_path / "enwiki.xml.bz2"
    _write(dump, "<mediawiki>\n" + "".join(page.format(i) for i in range(20000)) + "</mediawiki>\n", bz2.compress)
    url = failing(dump)
    with pytest.raises(OSError) as caught:
        list(iter_shard_bytes(DumpShard(url, "en", 0, 0, None, False)))
    _assert_read_failure(caught, url)
    failed_at = dump.stat().st_size // 2 // 4096 * 4096  # the start of the chunk whose read failed
    assert failed_at > 0 and f"at byte {failed_at} " in str(caught.value)
    _cut(dump)
    pieces = list(iter_shard_bytes(DumpShard(str(dump), "en", 0, 0, None, False)))
    assert isinstance(pieces[-1], StreamBreak)


def test_entity_vectors_fall_back_to_gensim_on_a_damaged_dump_copy_but_not_on_a_read_failure(monkeypatch, tmp_path):
    """Wikipedia2Vec failing falls back to gensim's skip-gram (``vector_method: auto``); a disk error while it copies
    or reads the dump did so too, silently, and a cut gzip dump's EOFError crashed the build instead."""
    import interlingua.operators.wiki.corpus_inputs as corpus_inputs
    import interlingua.operators.wiki.wikipedia2vec_vectors as w2v
    from interlingua.workflows.ease_corpus import EaseCorpusConfig, WikiDump, _entity_vectors

    config = EaseCorpusConfig(dumps=[WikiDump(lang="en", url=str(tmp_path / "enwiki.xml.gz"))], vector_method="auto")
    monkeypatch.setattr(w2v, "wikipedia2vec_available", lambda: True)
    monkeypatch.setattr(corpus_inputs, "train_vectors_from_extracts", lambda *args: {"Q1": None})
    for damage in (OSError("Invalid data stream"), EOFError("Compressed file ended before the end-of-stream marker"),
                   gzip.BadGzipFile("CRC check failed")):
        monkeypatch.setattr(w2v, "train_wikipedia2vec", lambda *args, error=damage, **kwargs: (_ for _ in ()).throw(error))
        vectors, source = _entity_vectors(config, None, {}, str(tmp_path / "work"), [])
        assert vectors == {"Q1": None} and source.startswith("gensim skip-gram") and "wikipedia2vec failed" in source
    for failure in (OSError(errno.EIO, "Input/output error"), *NO_ERRNO_FAILURES):
        monkeypatch.setattr(w2v, "train_wikipedia2vec", lambda *args, error=failure, **kwargs: (_ for _ in ()).throw(error))
        with pytest.raises(OSError) as caught:
            _entity_vectors(config, None, {}, str(tmp_path / "work"), [])
        assert caught.value is failure
