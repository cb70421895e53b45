"""The Apertium synthetic-bitext source: every packaged English pair, through the translate operator, on a few
sentences; the corpus it publishes (one shard per language, rejects kept, deterministic bytes)."""

from __future__ import annotations

import subprocess

import pytest

from interlingua.core.config import ConfigError, load_config
from interlingua.operators.translate.apertium_backend import ENGLISH_TO, apertium_mode, installed_modes
from interlingua.operators.translate.operator import TranslateOperator
from interlingua.workflows.apertium_bitext import ApertiumBitextConfig, _slices, missing_packages

INSTALLED = sorted(lang for lang, (_, mode) in ENGLISH_TO.items() if mode in installed_modes())
SENTENCES = ["The house is big and the garden is small.", "We read a good book every night.", ""]


def _apertium(mode: str, sentence: str) -> str:
    out = subprocess.run(["apertium", "-u", mode], input=sentence + "\n", capture_output=True, text=True, check=True)
    return out.stdout.removesuffix("\n")


def test_config_refuses_pairs_debian_does_not_package_english_to():
    with pytest.raises(ConfigError, match=r"no English -> \['eu', 'de'\] pair in Debian; choose from"):
        load_config(ApertiumBitextConfig, None, ["languages=[es, eu, de]"])


def test_modes_resolve_to_installed_spellings():
    for lang in INSTALLED:
        assert apertium_mode("en", lang) == ENGLISH_TO[lang][1]
    assert missing_packages(INSTALLED) == []


@pytest.mark.parametrize("lang", sorted(ENGLISH_TO))
def test_operator_translates_each_pair_like_apertium_itself(lang):
    mode = ENGLISH_TO[lang][1]
    if mode not in installed_modes():
        pytest.skip(f"apertium mode {mode} not installed (apt-get install {ENGLISH_TO[lang][0]})")
    op = TranslateOperator(f"en-{lang}", {"backend": "apertium", "mark_unknown": False}, text_column="src")
    out = op({"src": SENTENCES})
    assert list(out["translation"][:2]) == [_apertium(mode, s) for s in SENTENCES[:2]]
    assert all(t.strip() and not any(m in t for m in "*#@") for t in out["translation"][:2])
    assert out["_reject_reason"][2] == "translate: empty source text" and list(out["lang"]) == [lang] * 3


def test_languages_get_distinct_slices_of_the_english():
    english = [(f"id{i}", f"sentence number {i}") for i in range(10)]
    config = ApertiumBitextConfig(languages=["es", "ca", "gl"], sentences_per_language=3)
    slices = _slices(english, config)
    ids = [row[0] for rows in slices.values() for row in rows]
    assert len(ids) == 9 and len(set(ids)) == 9
    same = _slices(english, config.model_copy(update={"distinct_sentences": False}))
    assert same["es"] == same["ca"] == same["gl"]
    assert _slices(english, config) == slices  # seeded


@pytest.mark.slow
def test_workflow_publishes_one_shard_per_language_deterministically(tmp_path, ray_local):
    if len(INSTALLED) < 2:
        pytest.skip(f"needs two English Apertium pairs installed; have {INSTALLED}")
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.apertium_bitext import run

    source = tmp_path / "english.txt"
    source.write_text("\n".join(["The house is big and the garden is small.", "We read a good book every night.",
                                 "short", "The dog runs in the green park today.",
                                 "The water in the river is very cold."]) + "\n")
    langs = INSTALLED[:2]
    outs = []
    for state in ("a", "b"):
        config = ApertiumBitextConfig(source=str(source), languages=langs, sentences_per_language=2, workers=1,
                                      state_dir=str(tmp_path / state))
        summary = run(config)
        store = CorpusStore(str(tmp_path / state / "corpus"))
        manifest = store.manifest("apertium-bitext")
        assert summary["corpus"] == f"apertium-bitext@{manifest.version}"
        assert [s.shard_id for s in manifest.shards] == [f"en-{lang}" for lang in langs]
        table = store.read_table("apertium-bitext").to_pylist()
        assert len(table) + manifest.total_rejects == 4  # 2 per language, "short" filtered by min_chars
        assert {r["tgt_lang"] for r in table} == set(langs) and {r["src_lang"] for r in table} == {"en"}
        for row in table:
            assert row["tgt"] == _apertium(ENGLISH_TO[row["tgt_lang"]][1], row["src"])
        outs.append(sorted((s.shard_id, s.sha256) for s in manifest.shards))
    assert outs[0] == outs[1]
