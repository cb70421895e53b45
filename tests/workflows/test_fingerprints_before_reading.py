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
        "[[{country}]] near [[Lyon]]. It has a long history of trade and many old buildings.</text></revision></page>")


def _dump(titles) -> bytes:
    pages = "".join(PAGE.format(title=t, id=i, country=("France", "Spain")[i % 2])  # each pair has a negative
                    for i, t in enumerate(titles, start=1))
    return bz2.compress(f'<mediawiki xml:lang="en"><siteinfo><sitename>W</sitename></siteinfo>{pages}</mediawiki>'
                        .encode())


def _fingerprint(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def _extract_here(monkeypatch, after_reading=lambda: None) -> None:
    """The EASE extraction runs here, not on Ray actors; ``after_reading`` runs once it has read the dumps."""
    import ray.data

    from interlingua.core import runtime
    from interlingua.operators import runner

    def extract_in_process(rows, op_cls, op_kwargs, **_):
        batch = {key: np.array([row[key] for row in rows], dtype=object) for key in rows[0]}
        out = op_cls(**op_kwargs)(batch)
        after_reading()

        class Extracted:
            def take_all(self):
                return [{"shard_id": s, "report": r} for s, r in zip(out["shard_id"], out["report"])]

        return Extracted()

    monkeypatch.setattr(ray.data, "from_items", lambda items, **_: items)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(runner, "run_operator", extract_in_process)


def test_ease_records_the_dump_as_it_was_when_the_extraction_read_it(tmp_path, monkeypatch):
    from interlingua.workflows import ease_corpus

    read, rewritten = _dump(["Paris", "Lyon", "Nice", "Metz"]), _dump(["Paris", "Lyon", "Nice", "Metz", "Brest"])
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(read)
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("1 2\nParis 1 0\n")
    _extract_here(monkeypatch, after_reading=lambda: dump.write_bytes(rewritten))
    config = ease_corpus.EaseCorpusConfig(dumps=[ease_corpus.WikiDump(lang="en", url=str(dump))],
                                          entity_vectors=str(vectors), min_entity_links=0, min_sentence_chars=5,
                                          store=str(tmp_path / "store"), work_dir=str(tmp_path / "work"))
    summary = ease_corpus.run(config)
    assert dump.read_bytes() == rewritten and summary["funnel"]["extract_pages"] == 4  # the old bytes were read
    store = CorpusStore(str(tmp_path / "store"))
    for name in ("ease", "ease-entities"):
        recorded = store.manifest(name).input_fingerprints[str(dump)]
        assert (recorded.size, recorded.sha256) == _fingerprint(read) != _fingerprint(rewritten)


def _two_country_dump(path) -> None:
    """Cities linking France or Spain: each pair has a hard negative (the other country, not on its page)."""
    pages = "".join(f"<page><title>{city}</title><ns>0</ns><id>{i}</id><revision><id>{i}0</id><text>{city} is a city "
                    f"in [[{country}]] with a long history of trade and many old buildings.</text></revision></page>"
                    for i, (city, country) in enumerate((("Paris", "France"), ("Lyon", "France"), ("Madrid", "Spain"),
                                                          ("Seville", "Spain")), start=1))
    path.write_bytes(bz2.compress(f'<mediawiki xml:lang="en"><siteinfo><sitename>W</sitename></siteinfo>{pages}'
                                  '</mediawiki>'.encode()))


def _ease_vector_files(tmp_path, kind: str, rows: dict[str, tuple[float, float]]) -> list:
    """The entity vectors as word2vec text, or as a .npy matrix with its ids file at the default name."""
    if kind == "text":
        path = tmp_path / "vectors.txt"
        path.write_text(f"{len(rows)} 2\n" + "".join(f"{k} {a} {b}\n" for k, (a, b) in rows.items()))
        return [path]
    path, ids = tmp_path / "vectors.npy", tmp_path / "vectors.ids.txt"
    np.save(path, np.array(list(rows.values()), dtype=np.float32), allow_pickle=False)
    ids.write_text("".join(f"{k}\n" for k in rows))
    return [path, ids]


@pytest.mark.parametrize("kind", ["text", "npy"])
def test_ease_entity_vectors_rewritten_give_new_versions(tmp_path, monkeypatch, kind):
    """The given entity vectors (and a .npy matrix's ids file) are inputs of both EASE versions: fingerprinted before
    reading, so the same bytes reopen the versions and rewritten ones (other vectors, other ids) make new ones."""
    from interlingua.workflows import ease_corpus

    dump = tmp_path / "enwiki.xml.bz2"
    _two_country_dump(dump)
    files = _ease_vector_files(tmp_path, kind, {"France": (1.0, 0.0), "Spain": (0.0, 1.0)})
    _extract_here(monkeypatch)
    config = ease_corpus.EaseCorpusConfig(dumps=[ease_corpus.WikiDump(lang="en", url=str(dump))],
                                          entity_vectors=str(files[0]), min_entity_links=0, min_sentence_chars=5,
                                          store=str(tmp_path / "store"), work_dir=str(tmp_path / "work"))
    store = CorpusStore(str(tmp_path / "store"))

    def build() -> tuple[str, str, dict]:
        summary = ease_corpus.run(config)
        entities = store.read_table("ease-entities", summary["entities"].split("/")[1]).to_pylist()
        return summary["corpus"], summary["entities"], {r["entity_id"]: r["vector"] for r in entities}

    corpus, entities, vectors = build()
    assert vectors["France"] == [1.0, 0.0]
    for name in ("ease", "ease-entities"):
        recorded = store.manifest(name).input_fingerprints
        assert [(recorded[str(f)].size, recorded[str(f)].sha256) for f in files] == [_fingerprint(f.read_bytes())
                                                                                   for f in files]
    assert build()[:2] == (corpus, entities)  # the same bytes: the same versions
    _ease_vector_files(tmp_path, kind, {"Spain": (0.0, 1.0), "France": (0.5, 0.5)})  # other order (npy: ids), values
    changed_corpus, changed_entities, changed = build()
    assert changed_corpus != corpus and changed_entities != entities and changed["France"] == [0.5, 0.5]
    old = store.read_table("ease-entities", entities.split("/")[1]).to_pylist()  # the old version stays as it was
    assert {r["entity_id"]: r["vector"] for r in old} == vectors
    assert ease_corpus.input_urls(config) == [str(dump)] + [str(f) for f in files]  # what recipes and refresh watch


def test_refresh_of_an_ease_corpus_watches_its_entity_vectors(tmp_path, monkeypatch):
    from interlingua.workflows.refresh import RefreshSpec, refresh

    dump = tmp_path / "enwiki.xml.bz2"
    _two_country_dump(dump)
    vectors = _ease_vector_files(tmp_path, "text", {"France": (1.0, 0.0)})[0]
    _extract_here(monkeypatch)
    spec = RefreshSpec(workflow="ease-corpus", config={
        "dumps": [{"lang": "en", "url": str(dump)}], "entity_vectors": str(vectors), "min_entity_links": 0,
        "min_sentence_chars": 5, "store": str(tmp_path / "store"), "work_dir": str(tmp_path / "work")})
    first = refresh(spec, log=lambda line: None)
    assert first["published"] and not refresh(spec, log=lambda line: None)["published"]
    _ease_vector_files(tmp_path, "text", {"France": (0.0, 1.0)})
    again = refresh(spec, log=lambda line: None)
    assert again["published"] and again["inputs_changed"] == [str(vectors)] and again["version"] != first["version"]


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


def _bible_parquet(path, verses: int, tag: str) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = [f"GEN.1.{i}" for i in range(1, verses + 1)]
    pq.write_table(pa.table({"id": ids, "en": [f"In the beginning {tag} verse {i}" for i in range(verses)],
                             "es": [f"En el principio {tag} versiculo {i}" for i in range(verses)]}), path)
    return path.read_bytes()


def test_bible_bitext_records_the_parquet_as_it_was_when_read(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from interlingua.workflows import bible_bitext

    bible = tmp_path / "bible.parquet"
    read = _bible_parquet(bible, 40, "old")
    real_read_table = pq.read_table

    def read_then_rewrite(*args, **kwargs):
        table = real_read_table(*args, **kwargs)
        _bible_parquet(bible, 41, "new")
        return table

    monkeypatch.setattr(pq, "read_table", read_then_rewrite)
    summary = bible_bitext.run(bible_bitext.BibleBitextConfig(bitext=str(bible), state_dir=str(tmp_path / "state")))
    monkeypatch.undo()
    name, version = summary["corpus"].split("@")
    manifest = CorpusStore(str(tmp_path / "state" / "corpus")).manifest(name, version)
    assert manifest.total_rows + summary["heldout"] <= 40  # the old verses were read
    recorded = manifest.input_fingerprints[str(bible)]
    assert (recorded.size, recorded.sha256) == _fingerprint(read) != _fingerprint(bible.read_bytes())


def test_amr_corpus_records_the_nli_file_as_it_was_when_read(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.operators.nli import sources
    from interlingua.workflows import amr_corpus

    nli = tmp_path / "nli.jsonl"
    line = ('{{"captionID": "c{k}", "pairID": "c{k}#{n}", "sentence1": "A girl rides a bicycle {k}.", '
            '"sentence2": "A child is {what} {k}.", "gold_label": "{label}"}}\n')
    lines = [line.format(k=k, n=n, what=what, label=label) for k in range(3)
             for n, (what, label) in enumerate((("outdoors", "entailment"), ("on a sofa", "contradiction")))]
    read = "".join(lines).encode()
    nli.write_bytes(read)
    real_read = sources.read_nli_rows

    def read_then_rewrite(*args, **kwargs):
        rows = list(real_read(*args, **kwargs))
        nli.write_bytes(read + line.format(k=9, n=0, what="outdoors", label="entailment").encode())
        return iter(rows)

    monkeypatch.setattr(sources, "read_nli_rows", read_then_rewrite)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda triples, config: (amr_corpus._english_rows(triples), []))
    config = amr_corpus.AmrCorpusConfig(source=str(nli), languages=[], translate={}, store_root=str(tmp_path / "store"))
    summary = amr_corpus.run(config)
    assert summary["rows"] == 3 * 3  # the old three triples were read
    recorded = CorpusStore(str(tmp_path / "store")).manifest("amr-corpus", summary["version"]).input_fingerprints[str(nli)]
    assert (recorded.size, recorded.sha256) == _fingerprint(read) != _fingerprint(nli.read_bytes())


def test_apertium_bitext_records_the_english_as_it_was_when_read(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.workflows import apertium_bitext
    from interlingua.workflows.bitext_source import write_bitext_shard
    from interlingua.operators.bitext.hygiene import HygieneSettings

    english = tmp_path / "en.txt"
    read = "".join(f"This is English sentence number {i} of the source.\n" for i in range(12)).encode()
    english.write_bytes(read)
    real_read = apertium_bitext._read_source

    def read_then_rewrite(*args, **kwargs):
        rows = real_read(*args, **kwargs)
        english.write_bytes(read + b"One more English sentence written later.\n")
        return rows

    def translate_here(writer, shard_id, lang, rows, config):
        part = {"id": [i for i, _ in rows], "src": [t for _, t in rows], "tgt": [t.upper() for _, t in rows]}
        return write_bitext_shard(writer, shard_id, part, src_lang="en", tgt_lang=lang, hygiene=HygieneSettings())

    monkeypatch.setattr(apertium_bitext, "_read_source", read_then_rewrite)
    monkeypatch.setattr(apertium_bitext, "missing_packages", lambda languages: [])
    monkeypatch.setattr(apertium_bitext, "_translate_shard", translate_here)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    config = apertium_bitext.ApertiumBitextConfig(source=str(english), languages=["es"], sentences_per_language=100,
                                                  state_dir=str(tmp_path / "state"))
    summary = apertium_bitext.run(config)
    assert summary["rows"] == 12  # the old sentences were read
    name, version = summary["corpus"].split("@")
    recorded = CorpusStore(str(tmp_path / "state" / "corpus")).manifest(name, version).input_fingerprints[str(english)]
    assert (recorded.size, recorded.sha256) == _fingerprint(read) != _fingerprint(english.read_bytes())


def test_bible_bitext_reads_a_url_bitext(tmp_path):
    """A ``bitext`` given as an fsspec URL was refused as missing (``Path(url).exists()``), though its reader takes URLs;
    a URL that names nothing is still one line."""
    import fsspec

    from interlingua.core.errors import UserError
    from interlingua.workflows import bible_bitext

    local = tmp_path / "bible.parquet"
    _bible_parquet(local, 40, "url")
    url = "memory://bible-bitext-url-test/bible.parquet"
    with fsspec.open(url, "wb") as handle:
        handle.write(local.read_bytes())
    try:
        summary = bible_bitext.run(bible_bitext.BibleBitextConfig(bitext=url, state_dir=str(tmp_path / "state")))
        name, version = summary["corpus"].split("@")
        manifest = CorpusStore(str(tmp_path / "state" / "corpus")).manifest(name, version)
        assert manifest.total_rows + summary["heldout"] <= 40 and manifest.total_rows > 0
        assert manifest.inputs == (url,) and set(manifest.input_fingerprints) == {url}  # a URL stays a URL
        with pytest.raises(UserError, match="Bible bitext memory://bible-bitext-url-test/none.parquet not found"):
            bible_bitext.run(bible_bitext.BibleBitextConfig(bitext="memory://bible-bitext-url-test/none.parquet",
                                                            state_dir=str(tmp_path / "state")))
    finally:
        fsspec.filesystem("memory").rm("/bible-bitext-url-test", recursive=True)


@pytest.mark.parametrize("spelling", ["./x.parquet", ".//x.parquet", "././x.parquet"])
def test_a_local_bitext_s_spellings_record_one_corpus_version(tmp_path, monkeypatch, spelling):
    """bible-bitext and the quickstart recorded a local bitext as Path spells it (``./x.parquet`` as ``x.parquet``);
    keeping URLs as URLs recorded every spelling as written: the manifest's inputs and fingerprint keys, and with
    them the corpus version id, changed with ``./`` or ``//``."""
    from interlingua.workflows import bible_bitext, quickstart

    monkeypatch.chdir(tmp_path)
    _bible_parquet(tmp_path / "x.parquet", 40, "spelling")
    versions = {}
    for given in ("x.parquet", spelling):
        state = tmp_path / f"state-{len(versions)}"
        summary = bible_bitext.run(bible_bitext.BibleBitextConfig(bitext=given, state_dir=str(state)))
        name, versions[given] = summary["corpus"].split("@")
        manifest = CorpusStore(str(state / "corpus")).manifest(name, versions[given])
        assert manifest.inputs == ("x.parquet",) and set(manifest.input_fingerprints) == {"x.parquet"}
    assert versions[spelling] == versions["x.parquet"]
    assert bible_bitext.input_urls(bible_bitext.BibleBitextConfig(bitext=spelling)) == [spelling]  # the stage hash's

    debian = tmp_path / "debian"
    debian.mkdir()
    (tmp_path / "assets").mkdir()
    for given, recorded in ((spelling, "x.parquet"), ("memory://quickstart-spelling/x.parquet",) * 2):
        config = quickstart.QuickstartConfig(model=str(tmp_path), bitext=given, debian_reference_dir=str(debian))
        assert quickstart._ensure_assets(tmp_path / "assets", config)[1] == recorded
