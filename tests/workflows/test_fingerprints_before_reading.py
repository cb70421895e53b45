"""A corpus build records its inputs' fingerprints taken before it reads them: an input rewritten while the build
reads it (the EASE extraction takes hours on a real dump) is recorded as the bytes that were read, not as the new
ones (which a later run builds as another version)."""

from __future__ import annotations

import bz2
import hashlib

import numpy as np
import pytest

from interlingua.operators.corpus.store import CorpusStore

PAGE = ("<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>{id}0</id><text>{title} is a city in "
        "[[France]] near [[Lyon]]. It has a long history of trade and many old buildings.</text></revision></page>")


def _dump(titles) -> bytes:
    pages = "".join(PAGE.format(title=t, id=i) for i, t in enumerate(titles, start=1))
    return bz2.compress(f'<mediawiki xml:lang="en"><siteinfo><sitename>W</sitename></siteinfo>{pages}</mediawiki>'
                        .encode())


def _fingerprint(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def test_ease_records_the_dump_as_it_was_when_the_extraction_read_it(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.operators import runner
    from interlingua.workflows import ease_corpus

    read, rewritten = _dump(["Paris", "Lyon", "Nice", "Metz"]), _dump(["Paris", "Lyon", "Nice", "Metz", "Brest"])
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(read)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("1 2\nParis 1 0\n")

    def extract_in_process(rows, op_cls, op_kwargs, **_):
        """The extraction, here and not on Ray actors; the dump is rewritten once it has been read."""
        batch = {key: np.array([row[key] for row in rows], dtype=object) for key in rows[0]}
        out = op_cls(**op_kwargs)(batch)
        dump.write_bytes(rewritten)

        class Extracted:
            def take_all(self):
                return [{"shard_id": s, "report": r} for s, r in zip(out["shard_id"], out["report"])]

        return Extracted()

    import ray.data

    monkeypatch.setattr(ray.data, "from_items", lambda items, **_: items)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(runner, "run_operator", extract_in_process)
    config = ease_corpus.EaseCorpusConfig(dumps=[ease_corpus.WikiDump(lang="en", url=str(dump))],
                                          entity_vectors=str(vectors), min_entity_links=0, min_sentence_chars=5,
                                          store=str(tmp_path / "store"), work_dir=str(tmp_path / "work"))
    summary = ease_corpus.run(config)
    assert dump.read_bytes() == rewritten and summary["funnel"]["extract_pages"] == 4  # the old bytes were read
    store = CorpusStore(str(tmp_path / "store"))
    for name in ("ease", "ease-entities"):
        recorded = store.manifest(name).input_fingerprints[str(dump)]
        assert (recorded.size, recorded.sha256) == _fingerprint(read) != _fingerprint(rewritten)


@pytest.mark.parametrize("rewritten_side", ["source", "target"])
def test_bitext_records_the_files_as_they_were_when_read(tmp_path, monkeypatch, rewritten_side):
    from interlingua.core.config import load_config
    from interlingua.workflows import bitext_corpus

    texts = {"source": "".join(f"the house number {i}\n" for i in range(30)).encode(),
             "target": "".join(f"das haus nummer {i}\n" for i in range(30)).encode()}
    paths = {side: tmp_path / f"{side}.txt" for side in texts}
    for side, data in texts.items():
        paths[side].write_bytes(data)
    rewritten = texts[rewritten_side].replace(b"number", b"NUMBER").replace(b"nummer", b"NUMMER") + b"one more\n"
    real_read = bitext_corpus.read_bitext

    def read_then_rewrite(*args, **kwargs):
        rows = real_read(*args, **kwargs)
        paths[rewritten_side].write_bytes(rewritten)
        return rows

    monkeypatch.setattr(bitext_corpus, "read_bitext", read_then_rewrite)
    config = load_config(bitext_corpus.BitextCorpusConfig, None, [
        f"source={paths['source']}", f"target={paths['target']}", f"store_root={tmp_path / 'store'}", "workers=1"])
    summary = bitext_corpus.run(config)
    manifest = CorpusStore(str(tmp_path / "store")).manifest("bitext-corpus", summary["version"])
    assert summary["input_rows"] == 30  # the old lines were read
    for side, data in texts.items():
        recorded = manifest.input_fingerprints[str(paths[side])]
        assert (recorded.size, recorded.sha256) == _fingerprint(data)
    assert _fingerprint(paths[rewritten_side].read_bytes()) != _fingerprint(texts[rewritten_side])
