""".zst inputs: fsspec decompresses them only when a zstd package is importable (zstandard, backports.zstd) and
otherwise hands back the compressed bytes. Without one, every reader of compressed inputs refuses them (one line,
``pip install zstandard``) and the workflows do so before Ray; with one (here a fake codec registered as fsspec
registers zstandard), they are read decompressed."""

from __future__ import annotations

import gzip
import sys

import fsspec.compression
import fsspec.utils
import pytest

from interlingua.core.archives import open_compressed, require_decompressor
from interlingua.core.errors import UserError

PAIRS = [("the house", "das haus"), ("a small book", "ein kleines buch"), ("the old man", "der alte mann")]


@pytest.fixture()
def no_zstd(monkeypatch):
    """No zstd decompressor, whatever is installed: fsspec infers no compression for ``.zst``."""
    monkeypatch.delitem(fsspec.utils.compressions, "zst", raising=False)


@pytest.fixture()
def fake_zstd(monkeypatch):
    """A "zstd" decompressor registered for ``.zst`` the way fsspec registers zstandard (gzip underneath)."""
    monkeypatch.setitem(fsspec.compression.compr, "zstd", lambda infile, mode="rb": gzip.GzipFile(fileobj=infile, mode=mode))
    monkeypatch.setitem(fsspec.utils.compressions, "zst", "zstd")


def _ray_started() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def _write(path, text: str) -> str:
    path.write_bytes(gzip.compress(text.encode("utf-8")))  # gzip bytes under a .zst name: read raw, they are garbage
    return str(path)


def test_refused_in_one_line_with_the_hint(no_zstd, tmp_path):
    path = _write(tmp_path / "pairs.tsv.zst", "a\tb\n")
    for call in (lambda: require_decompressor(path), lambda: open_compressed(path, "rb").open()):
        with pytest.raises(UserError) as caught:
            call()
        message = str(caught.value)
        assert "\n" not in message and "pip install zstandard" in message and "pairs.tsv.zst" in message
    with pytest.raises(UserError, match=r"^train.entity_vectors s3://\*\*\*@bucket/v.txt.zst is zstd-compressed"):
        require_decompressor("s3://user:secret@bucket/v.txt.zst", "train.entity_vectors")
    for fine in ("a.tsv", "a.tsv.gz", "a.tsv.bz2", "a.tsv.xz", "zst", "a.zst.txt"):
        require_decompressor(fine)


def test_every_reader_refuses_a_zst_input(no_zstd, tmp_path):
    from interlingua.operators.bitext.parallel_lines import read_parallel_lines
    from interlingua.operators.nli.sources import read_jsonl_rows
    from interlingua.operators.wiki.dump_shards import read_multistream_offsets
    from interlingua.operators.wiki.entity_vectors import load_entity_vectors
    from interlingua.operators.wiki.wikidata import load_wikidata_json, read_page_props_qids
    from interlingua.trainers.objectives.entity_vectors import load_word2vec_text
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

    src, tgt = _write(tmp_path / "s.en.zst", "the house\n"), _write(tmp_path / "t.de.zst", "das haus\n")
    tsv = _write(tmp_path / "p.tsv.zst", "the house\tdas haus\n")
    other = _write(tmp_path / "x.zst", "1 2\nQ1 0.5 0.5\n")
    readers = [
        lambda: list(read_parallel_lines(src, tgt)),
        lambda: read_bitext(BitextCorpusConfig(source=tsv), tsv),
        lambda: read_bitext(BitextCorpusConfig(source=tsv, format="tsv"), tsv),
        lambda: list(read_jsonl_rows(other)),
        lambda: read_multistream_offsets(other),
        lambda: load_entity_vectors(other),
        lambda: load_wikidata_json(other, ["en"]),
        lambda: read_page_props_qids(other),
        lambda: load_word2vec_text(other),
    ]
    for read in readers:
        with pytest.raises(UserError, match="pip install zstandard"):
            read()


def test_an_nli_source_named_zst_is_a_file_refused_not_a_dataset_id(no_zstd, tmp_path, monkeypatch):
    from interlingua.core.inputs import require_input_files
    from interlingua.operators.nli import sources
    from interlingua.workflows.amr_corpus import AmrCorpusConfig, input_urls

    monkeypatch.setattr(sources, "read_hf_rows", lambda *a, **k: pytest.fail("read as a hub dataset id"))
    path = _write(tmp_path / "nli.jsonl.zst", '{"sentence1": "a", "sentence2": "b", "gold_label": "entailment"}\n')
    assert input_urls(AmrCorpusConfig(source=path)) == [path]  # fingerprinted and checked before Ray
    for call in (lambda: require_input_files([path]), lambda: list(sources.read_nli_rows(path))):
        with pytest.raises(UserError, match="nli.jsonl.zst is zstd-compressed .* pip install zstandard"):
            call()


def _plain_dump(path) -> str:
    pages = "".join(f"  <page>\n    <title>Page {k}</title>\n    <id>{k}</id>\n    <text>text {k}</text>\n  </page>\n"
                    for k in range(1, 6))
    path.write_text(f"<mediawiki>\n  <siteinfo></siteinfo>\n{pages}</mediawiki>\n", encoding="utf-8")
    return str(path)


def test_a_zst_multistream_index_is_refused_not_written_uncompressed(no_zstd, tmp_path):
    from interlingua.operators.wiki.multistream_writer import write_multistream

    dump, index = tmp_path / "ms.xml.bz2", tmp_path / "index.txt.zst"
    with pytest.raises(UserError, match="^multistream index .*index.txt.zst is named zstd-compressed .* written "
                                        "uncompressed \\(hint: pip install zstandard"):
        write_multistream(_plain_dump(tmp_path / "plain.xml"), str(dump), str(index), pages_per_stream=2)
    assert not dump.exists() and not index.exists()


def test_a_zst_multistream_index_is_written_compressed_for_its_reader(fake_zstd, tmp_path):
    from interlingua.operators.wiki.dump_shards import read_multistream_offsets
    from interlingua.operators.wiki.multistream_writer import write_multistream

    plain = _plain_dump(tmp_path / "plain.xml")
    assert write_multistream(plain, str(tmp_path / "a.xml.bz2"), str(tmp_path / "index.txt"), pages_per_stream=2) == 5
    assert write_multistream(plain, str(tmp_path / "b.xml.bz2"), str(tmp_path / "index.txt.zst"), 2) == 5
    assert gzip.decompress((tmp_path / "index.txt.zst").read_bytes()) == (tmp_path / "index.txt").read_bytes()
    offsets = read_multistream_offsets(str(tmp_path / "index.txt.zst"))
    assert offsets == read_multistream_offsets(str(tmp_path / "index.txt")) and len(offsets) == 3


def test_workflows_refuse_a_zst_input_before_ray(no_zstd, tmp_path, monkeypatch, capsys):
    from interlingua.workflows.cli import main
    from interlingua.workflows.ease_corpus import EaseCorpusConfig, run as run_ease
    from interlingua.workflows.train import check_entity_vectors
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.core.config import validate

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    tsv = _write(tmp_path / "p.tsv.zst", "the house\tdas haus\n")
    code = main(["run", "bitext-corpus", "--set", f"source={tsv}", "--set", f"store_root={tmp_path / 'store'}"])
    errors = [line for line in capsys.readouterr().err.splitlines() if "zstd" in line]
    assert code == 2 and len(errors) == 1 and "pip install zstandard" in errors[0] and not _ray_started()

    dump = tmp_path / "dump.xml.bz2"
    dump.write_bytes(b"BZh9 not read")
    vectors = _write(tmp_path / "vectors.txt.zst", "1 2\nQ1 0.5 0.5\n")
    config = EaseCorpusConfig(dumps=[{"lang": "en", "url": str(dump)}], entity_vectors=vectors, store=str(tmp_path / "s"))
    with pytest.raises(UserError, match="entity input .*vectors.txt.zst .*pip install zstandard"):
        run_ease(config)
    assert not _ray_started()

    train = validate(TrainConfig, {"objective": "ease", "options": {"ease": {"entity_vectors": vectors}}}, source="test")
    with pytest.raises(UserError, match="train.entity_vectors .*pip install zstandard"):
        check_entity_vectors(train)


def test_read_decompressed_when_a_decompressor_is_installed(fake_zstd, tmp_path):
    from interlingua.operators.bitext.parallel_lines import read_parallel_lines
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

    src = _write(tmp_path / "s.en.zst", "".join(s + "\n" for s, _ in PAIRS))
    tgt = _write(tmp_path / "t.de.zst", "".join(t + "\n" for _, t in PAIRS))
    tsv = _write(tmp_path / "p.tsv.zst", "".join(f"{s}\t{t}\n" for s, t in PAIRS))
    require_decompressor(tsv)
    assert [(p.src, p.tgt, p.reject) for p in read_parallel_lines(src, tgt)] == [(s, t, None) for s, t in PAIRS]
    rows = read_bitext(BitextCorpusConfig(source=tsv), tsv)  # the format is told from .tsv.zst
    assert [(r["src"], r["tgt"], r["reject"]) for r in rows] == [(s, t, None) for s, t in PAIRS]


def test_real_zstandard_is_read_decompressed(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

    tsv = tmp_path / "p.tsv.zst"
    tsv.write_bytes(zstandard.ZstdCompressor().compress("".join(f"{s}\t{t}\n" for s, t in PAIRS).encode()))
    rows = read_bitext(BitextCorpusConfig(source=str(tsv)), str(tsv))
    assert [(r["src"], r["tgt"]) for r in rows] == PAIRS
