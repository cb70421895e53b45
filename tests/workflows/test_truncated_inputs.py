"""Truncated or corrupt compressed inputs fail the run by default, naming the file and the byte offset; with
``allow_truncated_inputs`` the part read is published and the version is marked partial in its manifest."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import zlib

import numpy as np
import pytest

from interlingua.core.archives import TruncatedInputError
from interlingua.core.config import load_config
from interlingua.workflows.bitext_corpus import BitextCorpusConfig, read_bitext

PAGE = ("<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>{id}0</id><text>{title} is a city in "
        "[[{country}]] near [[Lyon]]. It has a long history of trade and many old buildings.</text></revision></page>")


def _tsv(tmp_path, compress, suffix, cut: int):
    lines = "".join(f"the house number {i}\tdas haus nummer {i}\n" for i in range(3000)).encode()
    blob = compress(lines)
    path = tmp_path / f"pairs.tsv{suffix}"
    path.write_bytes(blob[: len(blob) - cut])
    return str(path), len(blob) - cut


@pytest.mark.parametrize("compress, suffix", [(gzip.compress, ".gz"), (bz2.compress, ".bz2")])
def test_truncated_tsv_fails_with_file_and_offset_before_ray(tmp_path, compress, suffix):
    from interlingua.workflows.bitext_corpus import run

    path, size = _tsv(tmp_path, compress, suffix, cut=max(10, len(compress(b"x")) // 2))
    config = load_config(BitextCorpusConfig, None, [f"source={path}", f"store_root={tmp_path / 'store'}"])
    with pytest.raises(TruncatedInputError, match=rf"input .*pairs\.tsv{suffix} is truncated or corrupt at byte "
                                                  rf"\d+: .*allow_truncated_inputs") as caught:
        run(config)  # raised while reading, before Ray starts (no Ray runtime is initialised here)
    assert 0 < caught.value.offset <= size
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").rglob("manifest.json"))


def test_allowed_truncation_keeps_the_rows_read_and_records_where_it_stopped(tmp_path):
    path, size = _tsv(tmp_path, gzip.compress, ".gz", cut=200)
    config = load_config(BitextCorpusConfig, None, [f"source={path}", "allow_truncated_inputs=true"])
    partial: list[dict] = []
    rows = read_bitext(config, path, partial)
    assert 0 < len(rows) < 3000
    assert rows[-1]["src"] == f"the house number {len(rows) - 1}" and all(r["reject"] is None for r in rows)
    (record,) = partial
    assert record["input_url"] == path and 0 < record["offset"] <= size and "EOFError" in record["reason"]


def test_manifest_marks_a_partial_version(tmp_path):
    import pyarrow as pa

    from interlingua.operators.corpus.manifest import Manifest
    from interlingua.operators.corpus.store import CorpusStore

    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["in.gz"])
    writer.write_shard("shard-00000", pa.table({"x": [1, 2]}))
    writer.mark_partial("in.gz", "EOFError: cut", 1234)
    manifest = writer.publish()
    reread = Manifest.from_json(json.dumps(json.loads(manifest.to_json())))
    assert reread.partial and reread.partial_inputs[0].offset == 1234 and reread.partial_inputs[0].input == "in.gz"
    other = store.open_version("d", {"a": 1}, ["in"])
    other.write_shard("shard-00000", pa.table({"x": [1]}))
    assert not other.publish().partial


def _dump(tmp_path, cut: int):
    """Cities of France and Spain; the last page and the footer in a second bz2 stream, which ``cut`` cuts short."""
    pages = [PAGE.format(title=t, id=i, country=("France", "Spain")[i % 2])
             for i, t in enumerate(["Paris", "Madrid", "Nice", "Metz"], start=1)]
    head = f'<mediawiki xml:lang="en"><siteinfo><sitename>W</sitename></siteinfo>{"".join(pages[:3])}'
    blob = bz2.compress(head.encode()) + bz2.compress(f"{pages[3]}</mediawiki>".encode())
    path = tmp_path / "enwiki.xml.bz2"
    path.write_bytes(blob[: len(blob) - cut])
    return str(path), len(blob) - cut


def test_truncated_wikipedia_dump_is_damage_with_its_offset_and_publishes_partial(tmp_path):
    from interlingua.operators.wiki.dump_shards import plan_shards
    from interlingua.operators.wiki.extract_operator import ExtractShards, shards_to_rows
    from interlingua.workflows.ease_corpus import EaseCorpusConfig, WikiDump, archive_damage, build_corpus

    path, size = _dump(tmp_path, cut=40)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("1 2\nParis 1 0\n")
    config = EaseCorpusConfig(dumps=[WikiDump(lang="en", url=path)], entity_vectors=str(vectors), min_entity_links=0,
                              min_sentence_chars=5)
    shards = plan_shards(path, "en")
    rows = shards_to_rows(shards)
    out = ExtractShards(str(tmp_path / "work"), {"min_sentence_chars": 5})(
        {k: np.array([row[k] for row in rows], dtype=object) for k in rows[0]})
    reports = {sid: json.loads(r) for sid, r in zip(out["shard_id"], out["report"])}
    (damage,) = archive_damage(shards, reports)
    assert damage["input_url"] == path and damage["offset"] == size and damage["reason"].startswith("truncated_archive")
    summary = build_corpus(config, shards, reports, str(tmp_path / "work"), str(tmp_path / "store"))
    from interlingua.operators.corpus.store import CorpusStore

    manifest = CorpusStore(str(tmp_path / "store")).manifest("ease")
    assert manifest.partial and manifest.partial_inputs[0].offset == size and manifest.total_rows > 0
    entities = CorpusStore(str(tmp_path / "store")).manifest("ease-entities")  # built from the same partial read
    assert entities.partial and [(p.input, p.offset) for p in entities.partial_inputs] == [(path, size)]
    assert summary["dump_issues"][0]["reason"] == "truncated_archive"


_DECOMPRESSORS = {".gz": lambda: zlib.decompressobj(wbits=31), ".bz2": bz2.BZ2Decompressor,
                  ".xz": lzma.LZMADecompressor}


def _text_pair(tmp_path, compress, suffix, cut_side: str, lines: int = 8000, cut: int = 200):
    """A compressed source/target text pair, ``cut_side``'s file cut short by ``cut`` bytes; returns the two paths,
    the cut file and the complete lines its surviving bytes hold."""
    texts = {"src": "".join(f"the house number {i}\n" for i in range(lines)).encode(),
             "tgt": "".join(f"das haus nummer {i}\n" for i in range(lines)).encode()}
    paths, complete = {}, None
    for side, data in texts.items():
        blob = compress(data)
        if side == cut_side:
            blob = blob[: len(blob) - cut]
            complete = _DECOMPRESSORS[suffix]().decompress(blob).count(b"\n")  # what survives the cut, by zlib/bz2/lzma
        paths[side] = tmp_path / f"{side}.txt{suffix}"
        paths[side].write_bytes(blob)
    return str(paths["src"]), str(paths["tgt"]), str(paths[cut_side]), complete


#: bz2 in 100 kB blocks: a cut in the last block leaves the first ones readable
_COMPRESSIONS = [(gzip.compress, ".gz"), (lambda data: bz2.compress(data, 1), ".bz2"), (lzma.compress, ".xz")]


@pytest.mark.parametrize("cut_side", ["src", "tgt"])
@pytest.mark.parametrize("compress, suffix", _COMPRESSIONS)
def test_truncated_text_pair_fails_naming_the_cut_file_before_ray(tmp_path, compress, suffix, cut_side):
    from interlingua.workflows.bitext_corpus import run

    src, tgt, cut, _ = _text_pair(tmp_path, compress, suffix, cut_side)
    config = load_config(BitextCorpusConfig, None, [f"source={src}", f"target={tgt}",
                                                    f"store_root={tmp_path / 'store'}"])
    with pytest.raises(TruncatedInputError, match=rf"input .*{cut_side}\.txt{suffix} is truncated or corrupt at byte "
                                                  rf"\d+: .*allow_truncated_inputs") as caught:
        run(config)  # raised while reading, before Ray starts (not an EOFError traceback, not fewer rows)
    assert caught.value.url == cut and 0 < caught.value.offset <= (tmp_path / cut).stat().st_size
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").rglob("manifest.json"))


@pytest.mark.parametrize("cut_side", ["src", "tgt"])
@pytest.mark.parametrize("compress, suffix", _COMPRESSIONS)
def test_allowed_truncated_text_pair_keeps_the_pairs_before_the_cut(tmp_path, compress, suffix, cut_side):
    src, tgt, cut, complete = _text_pair(tmp_path, compress, suffix, cut_side)
    config = load_config(BitextCorpusConfig, None, [f"source={src}", f"target={tgt}", "allow_truncated_inputs=true"])
    partial: list[dict] = []
    rows = read_bitext(config, src, partial)
    assert 0 < complete < 8000 and len(rows) == complete  # every complete line before the cut, none after
    assert [(r["src"], r["tgt"], r["reject"]) for r in rows] == [
        (f"the house number {i}", f"das haus nummer {i}", None) for i in range(complete)]
    (record,) = partial
    assert record["input_url"] == cut and 0 < record["offset"] <= (tmp_path / cut).stat().st_size
    assert f"(after line {complete})" in record["reason"]


def test_an_allowed_truncated_text_pair_publishes_a_partial_version(tmp_path):
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.bitext_corpus import run

    src, tgt, cut, complete = _text_pair(tmp_path, gzip.compress, ".gz", "tgt", lines=400, cut=60)
    config = load_config(BitextCorpusConfig, None, [f"source={src}", f"target={tgt}", "allow_truncated_inputs=true",
                                                    f"store_root={tmp_path / 'store'}", "workers=1"])  # no Ray
    summary = run(config)
    manifest = CorpusStore(str(tmp_path / "store")).manifest("bitext-corpus", summary["version"])
    assert manifest.partial and [(p.input, p.offset > 0) for p in manifest.partial_inputs] == [(cut, True)]
    assert summary["input_rows"] == complete and 0 < complete < 400
