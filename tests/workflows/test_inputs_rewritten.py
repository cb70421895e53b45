"""An input file rewritten in place is built again: corpus version ids, the EASE extraction folder and a recipe
stage's hash all carry the input files' fingerprints (size plus ETag or, for a local file, the content's SHA-256:
the same bytes written again, copied or touched still reopen the same version).

Before, a corpus version id counted only the inputs' paths, so rebuilding after editing the source file reopened
the old published version with the old rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interlingua.operators.corpus.input_fingerprints import build_fingerprints, fingerprint, fingerprints_of
from interlingua.operators.corpus.manifest import Lineage, config_hash
from interlingua.operators.corpus.store import CorpusStore, recording_refresh

FIRST = [("the house is red", "la casa es roja"), ("the dog runs", "el perro corre"), ("a big house", "una casa grande")]
SECOND = [("the cat sleeps", "el gato duerme"), ("the dog runs", "el perro corre")]


def write_pairs(path: Path, pairs, stamp: float) -> None:
    """Write a TSV and give it the modification time ``stamp`` (two writes within one clock tick still differ)."""
    path.write_text("".join(f"{en}\t{es}\n" for en, es in pairs), encoding="utf-8")
    os.utime(path, (stamp, stamp))


def rows_of(store: CorpusStore, name: str, version: str) -> list[tuple[str, str]]:
    table = store.read_table(name, version)
    return sorted(zip(table.column("src").to_pylist(), table.column("tgt").to_pylist()))


def test_bitext_corpus_rebuilds_an_input_rewritten_in_place(tmp_path):
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, run

    source = tmp_path / "pairs.tsv"
    write_pairs(source, FIRST, 1_700_000_000)
    config = BitextCorpusConfig(source=str(source), corpus_name="edited", store_root=str(tmp_path / "store"),
                                workers=1, src_lang="en", tgt_lang="es")
    first = run(config)
    assert run(config)["version"] == first["version"]  # unchanged input: the published version is reopened
    write_pairs(source, FIRST, 1_700_000_050)  # the same bytes written again: still the same version
    assert run(config)["version"] == first["version"]
    write_pairs(source, SECOND, 1_700_000_100)
    second = run(config)
    assert second["version"] != first["version"]
    store = CorpusStore(str(tmp_path / "store"))
    assert rows_of(store, "edited", second["version"]) == sorted(SECOND)
    assert rows_of(store, "edited", first["version"]) == sorted(FIRST)  # the published version is untouched
    manifest = store.manifest("edited", second["version"])
    recorded = manifest.input_fingerprints[str(source)]
    assert recorded == fingerprint(str(source), content=True) and list(manifest.input_fingerprints) == [str(source)]
    assert recorded.size == source.stat().st_size and recorded.mtime is None
    assert recorded.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()


def test_content_fingerprints_hash_a_file_once_per_state(tmp_path, monkeypatch):
    from interlingua.operators.corpus import input_fingerprints

    path = tmp_path / "in.tsv"
    write_pairs(path, FIRST, 1_700_000_000)
    calls = []
    real = input_fingerprints._content_sha256
    monkeypatch.setattr(input_fingerprints, "_content_sha256", lambda *a: calls.append(a[1]) or real(*a))
    real_time = input_fingerprints.time.time
    monkeypatch.setattr(input_fingerprints.time, "time", lambda: real_time() + 10)  # the file changed 10 s ago
    first = fingerprint(str(path), content=True)
    assert fingerprint(str(path), content=True) == first and len(calls) == 1  # hashed once while unchanged
    assert fingerprint(str(path)).mtime is not None and len(calls) == 1  # the refresh's: size + modification time
    write_pairs(path, SECOND, 1_700_000_100)
    assert fingerprint(str(path), content=True).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len(calls) == 2
    assert build_fingerprints([str(path)]) == {str(path): fingerprint(str(path), content=True)}


def test_the_refresh_record_wins_over_the_workflows_own_fingerprints(tmp_path):
    """Under ``interlingua refresh`` (ease-corpus, amr-corpus open their version themselves) the version records
    the refresh's fingerprints and lineage, which the refresh then looks for."""
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    store = CorpusStore(str(tmp_path / "store"))
    own = fingerprints_of([str(source)])
    refresh_record = {str(source): {"size": 3, "mtime": "1.0"}}
    lineage = Lineage(mode="full", spec_config_hash="a" * 64)
    with recording_refresh("c", refresh_record, lineage):
        inside = store.open_version("c", {"k": 1}, [str(source)], input_fingerprints=own)
        other = store.open_version("d", {"k": 1}, [str(source)], input_fingerprints=own)
    plain = store.open_version("c", {"k": 1}, [str(source)], input_fingerprints=own)
    assert inside.version != plain.version
    assert inside.version == store.open_version("c", {"k": 1}, [str(source)], input_fingerprints=refresh_record).version
    assert other.version == store.open_version("d", {"k": 1}, [str(source)], input_fingerprints=own).version


def test_each_corpus_workflow_names_the_files_it_reads(tmp_path, monkeypatch):
    from interlingua.workflows import amr_corpus, apertium_bitext, bible_bitext, bitext_corpus, ease_corpus

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    asset = str(tmp_path / "home" / "assets" / "bible" / "bible-en-es.parquet")
    assert bitext_corpus.input_urls(bitext_corpus.BitextCorpusConfig(source="a.en", target="a.es")) == ["a.en", "a.es"]
    assert bible_bitext.input_urls(bible_bitext.BibleBitextConfig()) == [asset]
    assert bible_bitext.input_urls(bible_bitext.BibleBitextConfig(bitext="b.parquet")) == ["b.parquet"]
    assert apertium_bitext.input_urls(apertium_bitext.ApertiumBitextConfig()) == [asset]
    assert apertium_bitext.input_urls(apertium_bitext.ApertiumBitextConfig(source="en.txt")) == ["en.txt"]
    assert amr_corpus.input_urls(amr_corpus.AmrCorpusConfig(source="nli.jsonl")) == ["nli.jsonl"]
    assert amr_corpus.input_urls(amr_corpus.AmrCorpusConfig(source="org/some-nli-dataset")) == []  # a hub dataset
    ease = ease_corpus.EaseCorpusConfig(dumps=[
        {"lang": "en", "url": "en.xml.bz2", "index_url": "en-index.txt.bz2", "page_props_url": "en-props.sql.gz"},
        {"lang": "de", "url": "de.xml.bz2"}], wikidata_json="wd.json")
    assert ease_corpus.input_urls(ease) == ["en.xml.bz2", "de.xml.bz2", "en-index.txt.bz2", "en-props.sql.gz", "wd.json"]


def test_a_model_folder_a_corpus_config_names_counts_by_its_files(tmp_path):
    """``subword_tokenizer`` (bitext-corpus), ``parser_model`` and translation models (amr-corpus): a folder
    rewritten in place changes the version's config, so the build does not reopen the version made with the old
    files; a config naming no folder is left as it was."""
    from interlingua.models.identity import files_digest, with_model_files
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, _manifest_config

    tokenizer = tmp_path / "tokenizer"
    tokenizer.mkdir()
    (tokenizer / "config.json").write_text('{"model_type": "bert"}')
    (tokenizer / "tokenizer.json").write_text('{"v": 1}')
    from interlingua.workflows.refresh import _ADAPTERS

    config = BitextCorpusConfig(source="pairs.tsv", subword_tokenizer=str(tokenizer))
    first = _manifest_config(config, "pairs.tsv")
    refresh_line = config_hash(_ADAPTERS["bitext-corpus"].spec_config(config))
    assert first["model_files"] == {str(tokenizer): files_digest(tokenizer)}
    (tokenizer / "tokenizer.json").write_text('{"v": 2}')
    assert _manifest_config(config, "pairs.tsv")["model_files"] != first["model_files"]
    assert config_hash(_ADAPTERS["bitext-corpus"].spec_config(config)) != refresh_line  # a refresh starts a new line
    assert "model_files" not in _manifest_config(BitextCorpusConfig(source="pairs.tsv"), "pairs.tsv")
    assert "model_files" not in _ADAPTERS["bitext-corpus"].spec_config(BitextCorpusConfig())
    amr = {"parser_model": str(tokenizer), "translate": {"es": {"backend": "marian", "model": tokenizer.as_uri()}},
           "source": str(tmp_path)}  # tmp_path: a folder, but no model
    assert with_model_files(amr)["model_files"] == {str(tokenizer): files_digest(tokenizer),
                                                    tokenizer.as_uri(): files_digest(tokenizer)}
    plain = {"parser_model": None, "source": str(tmp_path)}
    assert with_model_files(plain) is plain


def test_the_ease_extraction_folder_follows_the_dump_files(tmp_path):
    from interlingua.workflows.ease_corpus import EaseCorpusConfig, extraction_work_dir

    dump = tmp_path / "en.xml.bz2"
    dump.write_bytes(b"first")
    os.utime(dump, (1_700_000_000, 1_700_000_000))
    config = EaseCorpusConfig(dumps=[{"lang": "en", "url": str(dump)}])
    settings = {"max_page_chars": 10}
    first = extraction_work_dir(config, settings, str(tmp_path / "work"))
    assert extraction_work_dir(config, settings, str(tmp_path / "work")) == first
    os.utime(dump, (1_700_000_050, 1_700_000_050))  # touched: the same bytes, the same folder
    assert extraction_work_dir(config, settings, str(tmp_path / "work")) == first
    dump.write_bytes(b"other")  # rewritten, same size
    os.utime(dump, (1_700_000_100, 1_700_000_100))
    assert extraction_work_dir(config, settings, str(tmp_path / "work")) != first


def test_an_extractor_that_reads_dumps_otherwise_never_reuses_older_extractions(tmp_path, monkeypatch):
    """The extraction folder's key had no extractor version: a `.gz` dump extracted (as nothing) by the code before the
    magic-byte reading was reused, and the rerun failed "yields no <page>" on a valid file; a page's links scanned with
    its comments were reused too."""
    from interlingua.workflows import ease_corpus

    dump = tmp_path / "en.xml.bz2"
    dump.write_bytes(b"first")
    config = ease_corpus.EaseCorpusConfig(dumps=[{"lang": "en", "url": str(dump)}])
    now = ease_corpus.extraction_work_dir(config, {}, str(tmp_path / "work"))
    monkeypatch.setattr(ease_corpus, "EXTRACTOR_VERSION", ease_corpus.EXTRACTOR_VERSION - 1)
    assert ease_corpus.extraction_work_dir(config, {}, str(tmp_path / "work")) != now


def test_a_stage_hash_counts_its_input_files(tmp_path):
    import hashlib

    from interlingua.workflows.recipe_spec import stage_hash

    source = tmp_path / "pairs.tsv"
    write_pairs(source, FIRST, 1_700_000_000)
    config = {"source": str(source), "corpus_name": "c"}
    first = stage_hash("bitext-corpus", config, [str(source)])
    assert stage_hash("bitext-corpus", config, [str(source)]) == first
    write_pairs(source, FIRST, 1_700_000_050)  # the same bytes: the stage is still skipped
    assert stage_hash("bitext-corpus", config, [str(source)]) == first
    write_pairs(source, SECOND, 1_700_000_100)
    assert stage_hash("bitext-corpus", config, [str(source)]) != first
    # a missing file hashes as "unreadable" (the stage runs and its workflow names the problem), the same each time
    missing = stage_hash("bitext-corpus", config, [str(tmp_path / "gone.tsv")])
    assert missing == stage_hash("bitext-corpus", config, [str(tmp_path / "gone.tsv")]) != first
    # no input files: the hash as counted before input files were (with the links version bitext_corpus.stage_marks adds:
    # such a stage's links changed since)
    before = json.dumps({"workflow": "bitext-corpus", "config": config, "marks": {"links_version": 2}}, sort_keys=True,
                        default=str)
    assert stage_hash("bitext-corpus", config) == hashlib.sha256(before.encode()).hexdigest()[:16]


def _recipe(path: Path, source: Path, store: Path) -> None:
    path.write_text(f"""name: edited-input
stages:
  bitext:
    workflow: bitext-corpus
    config: {{source: {source}, corpus_name: edited, store_root: {store}, workers: 1}}
""")


@pytest.mark.slow
def test_a_recipe_reruns_a_corpus_stage_whose_input_was_rewritten(tmp_path):
    """Through the CLI: the rerun skips the stage while the file is unchanged, and builds a new version after the
    file is rewritten in place."""
    source, recipe = tmp_path / "pairs.tsv", tmp_path / "recipe.yaml"
    write_pairs(source, FIRST, 1_700_000_000)
    _recipe(recipe, source, tmp_path / "store")
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS", "MLFLOW_RUN_ID")}
    env.update(INTERLINGUA_HOME=str(tmp_path / "state"), PYTHONUNBUFFERED="1")

    def run_recipe() -> str:
        proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", "run", "recipe", "-c", str(recipe)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc.stdout

    first = run_recipe()
    assert "[bitext] bitext-corpus: run" in first
    assert "[bitext] unchanged" in run_recipe()
    write_pairs(source, SECOND, 1_700_000_100)
    assert "[bitext] bitext-corpus: run" in run_recipe()
    store = CorpusStore(str(tmp_path / "store"))
    assert rows_of(store, "edited", store.manifest("edited").version) == sorted(SECOND)


def test_the_hash_memo_outlives_the_process_and_trusts_only_settled_files(tmp_path, monkeypatch):
    """A refresh started by cron hashes an unchanged input once, not on every run; a file written in the last
    seconds is hashed again (a second write within one tick of the clock keeps size and time), and the memo's
    lines are untrusted: a malformed one is skipped."""
    import time

    from interlingua.operators.corpus import input_fingerprints

    memo = tmp_path / "memo.jsonl"
    monkeypatch.setattr(input_fingerprints, "_memo_path", lambda: memo)
    monkeypatch.setattr(input_fingerprints, "_LOADED_FROM", [])
    calls = []
    real = input_fingerprints._content_sha256
    monkeypatch.setattr(input_fingerprints, "_content_sha256", lambda *a: calls.append(a[1]) or real(*a))
    old, fresh = tmp_path / "old.tsv", tmp_path / "fresh.tsv"
    write_pairs(old, FIRST, 1_700_000_000)
    write_pairs(fresh, FIRST, time.time())
    real_time = input_fingerprints.time.time
    monkeypatch.setattr(input_fingerprints.time, "time", lambda: real_time() + 10)  # old.tsv changed 10 s ago
    first = {"old": fingerprint(str(old), content=True)}
    monkeypatch.setattr(input_fingerprints.time, "time", real_time)
    first["fresh"] = fingerprint(str(fresh), content=True)
    assert first["old"] == first["fresh"] and len(calls) == 2
    lines = memo.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])[1] == first["old"].sha256  # the fresh file is not remembered
    with memo.open("a") as handle:
        handle.write('["broken", "not-a-digest"]\n{"x": 1}\nnot json\n')
    input_fingerprints._LOADED_FROM.clear()  # another process: the memo is read from the state folder
    input_fingerprints._CONTENT_HASHES.clear()
    assert fingerprint(str(old), content=True) == first["old"] and len(calls) == 2
    assert fingerprint(str(fresh), content=True) == first["fresh"] and len(calls) == 3
    assert "broken" not in input_fingerprints._CONTENT_HASHES
    stat = old.stat()
    old.write_text(old.read_text().upper())  # other bytes, same size, the old modification time put back
    os.utime(old, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (old.stat().st_size, old.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert fingerprint(str(old), content=True).sha256 == hashlib.sha256(old.read_bytes()).hexdigest() != first["old"].sha256


@pytest.fixture
def memo_in_state(_input_hash_memo_in_tmp, tmp_path, monkeypatch):
    """The memo where it lives outside the tests, ``<INTERLINGUA_HOME>/cache``, read afresh (another process); the
    clock 10 s ahead, so the files written here count as settled and are remembered."""
    from interlingua.operators.corpus import input_fingerprints

    monkeypatch.setattr(input_fingerprints, "_memo_path", _input_hash_memo_in_tmp)
    monkeypatch.setattr(input_fingerprints, "_LOADED_FROM", [])
    monkeypatch.setattr(input_fingerprints, "_CONTENT_HASHES", {})
    real_time = input_fingerprints.time.time
    monkeypatch.setattr(input_fingerprints.time, "time", lambda: real_time() + 10)
    return input_fingerprints


def test_fingerprinting_many_files_makes_the_memo_folder_once(memo_in_state, tmp_path, monkeypatch):
    """Finding the memo creates nothing: N files fingerprinted make one folder, ``<state>/cache``, when the first hash
    is remembered (the state folder was made for every fingerprint, the cache folder for every hash)."""
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("INTERLINGUA_HOME", str(state))
    files = [tmp_path / f"in{i}.tsv" for i in range(6)]
    for i, path in enumerate(files):
        write_pairs(path, FIRST[: i % 3 + 1], 1_700_000_000 + i)
    made = []
    real_mkdir = Path.mkdir
    monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: made.append(self) or real_mkdir(self, *a, **k))
    first = [fingerprint(str(path), content=True) for path in files]
    assert made == [state / "cache"]
    assert len((state / "cache" / "input-sha256.jsonl").read_text().splitlines()) == len(files)
    memo_in_state._LOADED_FROM.clear()  # another process: every hash comes from the memo, nothing is made
    memo_in_state._CONTENT_HASHES.clear()
    made.clear()
    assert [fingerprint(str(path), content=True) for path in files] == first and made == []


def test_a_state_folder_that_cannot_be_made_still_fingerprints(memo_in_state, tmp_path, monkeypatch):
    """The memo is a cache: where the state folder cannot be created (here below a file), files are still
    fingerprinted, their hashes kept in this process only, and no folder appears."""
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "a-file" / "state"))
    source = tmp_path / "in.tsv"
    write_pairs(source, FIRST, 1_700_000_000)
    found = fingerprint(str(source), content=True)
    assert found.sha256 == hashlib.sha256(source.read_bytes()).hexdigest() and found.size == source.stat().st_size
    assert fingerprint(str(source), content=True) == found
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "in.tsv"]


def test_a_refresh_records_what_a_build_records_and_reads_older_records(tmp_path):
    """The refresh fingerprints local inputs by content, as builds do: a ``touch`` is no change, and ``corpus
    diff`` between a built and a refreshed version compares input for input. A parent made by an older refresh
    recorded modification times; those are still compared as such."""
    from interlingua.operators.corpus.diff import version_diff
    from interlingua.operators.corpus.manifest import InputFingerprint
    from interlingua.workflows.refresh import RefreshSpec, _ADAPTERS, _plan

    source = tmp_path / "in" / "a.tsv"
    source.parent.mkdir()
    write_pairs(source, FIRST, 1_700_000_000)
    url = str(source)
    spec = RefreshSpec(workflow="bitext-corpus", inputs=[f"{tmp_path}/in/*.tsv"],
                       config={"corpus_name": "bt", "store_root": str(tmp_path / "store"), "workers": 1})
    adapter = _ADAPTERS["bitext-corpus"]
    config = adapter.validate(spec)
    spec_config = adapter.spec_config(config)
    store = CorpusStore(str(tmp_path / "store"))

    def publish(fingerprints):
        writer = store.open_version("bt", spec_config, [url], input_fingerprints=fingerprints,
                                    lineage=Lineage(spec_config_hash=config_hash(spec_config)))
        writer.write_shard("s0", __import__("pyarrow").table({"id": [len(store.versions("bt"))]}), input=url)
        return writer.publish()

    older = publish({url: fingerprint(url)})  # an older refresh: size + modification time
    plan = _plan(spec, adapter, config)
    assert plan.unchanged == [url] and plan.fingerprints[url].sha256 is not None
    os.utime(source, (1_700_000_009, 1_700_000_009))
    assert _plan(spec, adapter, config).changed == [url]  # against a modification time, a touch still counts
    newer = publish(build_fingerprints([url]))
    diff = version_diff(older, newer)
    assert diff["inputs_changed"] == [] and diff["inputs_not_compared"] == [url]
    os.utime(source, (1_700_000_077, 1_700_000_077))
    assert _plan(spec, adapter, config).unchanged == [url]  # against a content hash, a touch is no change
    write_pairs(source, SECOND, 1_700_000_077)
    assert _plan(spec, adapter, config).changed == [url]
    assert version_diff(newer, publish(build_fingerprints([url])))["inputs_changed"] == [url]
    assert InputFingerprint(size=1, sha256="a" * 64).same_as(InputFingerprint(size=2, mtime="1.0")) is False


def test_an_ease_refresh_watches_every_file_the_build_reads(tmp_path):
    from interlingua.workflows import ease_corpus
    from interlingua.workflows.refresh import RefreshSpec, _ADAPTERS

    names = ["en.xml.bz2", "en-index.txt.bz2", "en-props.sql.gz", "wd.json"]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    dumps = [{"lang": "en", "url": str(tmp_path / names[0]), "index_url": str(tmp_path / names[1]),
              "page_props_url": str(tmp_path / names[2])}]
    spec = RefreshSpec(workflow="ease-corpus", config={"dumps": dumps, "wikidata_json": str(tmp_path / names[3])})
    adapter = _ADAPTERS["ease-corpus"]
    config = adapter.validate(spec)
    assert adapter.inputs(spec, config) == ease_corpus.input_urls(config) == [str(tmp_path / n) for n in names]


def test_a_subword_tokenizer_rewritten_in_place_is_read_again(tmp_path):
    """Each build loads ``subword_tokenizer`` (before: a process-wide cache by name, so a long-running schedule kept
    the first tokenizer it read), and a name that gives no tokenizer is one line with a hint."""
    from tiny_models import build_tiny_bert

    from interlingua.core.errors import UserError
    from interlingua.workflows import bitext_corpus

    folder = Path(build_tiny_bert(tmp_path / "tok"))
    first = bitext_corpus._load_subword_tokenizer(str(folder))
    first.add_tokens(["zzzunseen"])
    first.save_pretrained(str(folder))  # the same folder, a tokenizer with one token more
    again = bitext_corpus._load_subword_tokenizer(str(folder))
    assert again is not first and again.tokenize("zzzunseen") == ["zzzunseen"]
    with pytest.raises(UserError, match="does not exist .*hint"):
        bitext_corpus._load_subword_tokenizer(str(tmp_path / "missing"))
    with pytest.raises(UserError, match="holds no tokenizer"):
        bitext_corpus._load_subword_tokenizer(str(tmp_path))


def test_subword_tokenizer_e5_small_names_the_states_asset(tmp_path, monkeypatch):
    """The shipped alignment recipe named `.interlingua/assets/e5-small`, so it ran only from the repository root
    with the default state; ``e5-small`` names the state's asset wherever the state is, and its files count in the
    version's config (and a refresh's line) under that name."""
    from tiny_models import build_tiny_bert

    import interlingua.workflows.assets.build as assets_build
    from interlingua.models.identity import files_digest
    from interlingua.workflows import bitext_corpus
    from interlingua.workflows.refresh import _ADAPTERS

    asset = Path(build_tiny_bert(tmp_path / "state" / "assets" / "e5-small"))
    asked = []
    monkeypatch.setattr(assets_build, "e5_asset_uri", lambda assets: asked.append(assets) or str(asset))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)  # no folder named e5-small here
    assert bitext_corpus.subword_tokenizer_folder("e5-small") == str(asset)
    assert asked == [tmp_path / "state" / "assets"]
    assert bitext_corpus._load_subword_tokenizer("e5-small").is_fast
    config = bitext_corpus.BitextCorpusConfig(source="pairs.tsv", subword_tokenizer="e5-small")
    manifest = bitext_corpus._manifest_config(config, "pairs.tsv")
    assert manifest["subword_tokenizer"] == "e5-small" and manifest["model_files"] == {"e5-small": files_digest(asset)}
    assert _ADAPTERS["bitext-corpus"].spec_config(config)["model_files"] == {"e5-small": files_digest(asset)}
    assert bitext_corpus.subword_tokenizer_folder("other/hub-id") == "other/hub-id"
    from interlingua.workflows.recipe_spec import stage_hash  # a recipe stage naming it reruns when it is rebuilt

    before = stage_hash("bitext-corpus", {"subword_tokenizer": "e5-small"})
    train_before = stage_hash("train", {"subword_tokenizer": "e5-small"})  # a workflow without asset_model_files
    (asset / "tokenizer.json").write_text((asset / "tokenizer.json").read_text() + " ")
    assert stage_hash("bitext-corpus", {"subword_tokenizer": "e5-small"}) != before
    assert stage_hash("train", {"subword_tokenizer": "e5-small"}) == train_before


def test_a_combine_stage_in_a_raw_mode_hashes_apart_from_before_the_raw_mend():
    """combine's concat and sum now give the parts' raw outputs: a recipe rerun skipped such a stage (same config, same
    hash) and kept the evaluation of the normalized vectors; the norm_ modes and other workflows hash as before."""
    import hashlib
    import json

    from interlingua.workflows.recipe_spec import stage_hash

    def before(workflow, config):  # the hash as it was computed before: workflow and config only (no model folders)
        text = json.dumps({"workflow": workflow, "config": config}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    for mode in ("concat", "sum"):
        config = {"first": "models:/a/1", "second": "models:/b/1", "mode": mode}
        assert stage_hash("combine", config) != before("combine", config)
    for mode in ("norm_concat", "norm_sum"):
        config = {"first": "models:/a/1", "second": "models:/b/1", "mode": mode}
        assert stage_hash("combine", config) == before("combine", config)
    assert stage_hash("corpus-mix", {"mode": "concat"}) == before("corpus-mix", {"mode": "concat"})
