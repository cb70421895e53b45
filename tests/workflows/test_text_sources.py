"""The gettext, Wikipedia title->lead and corpus-mix workflows: the corpora they publish (rows, rejects with
reasons, pack articles left out, deterministic versions) and the mistakes they refuse."""

from __future__ import annotations

import shutil
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.core.config import ConfigError, load_config
from interlingua.core.errors import UserError
from interlingua.evaluation.pack.wiki_offline import first_sentence, load_wiki_articles
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows import corpus_mix, gettext_bitext, wiki_title_lead

PO_DE = '''msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\\n"

msgid "The package list could not be read from the server."
msgstr "Die Paketliste konnte nicht vom Server gelesen werden."

msgid "Could not create the temporary directory for the download."
msgstr "Das temporäre Verzeichnis für den Download konnte nicht erstellt werden."

msgid "Short"
msgstr "Kurz"
'''
PO_DE_OTHER = '''msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\\n"

msgid "The package list could not be read from the server."
msgstr "Die Paketliste ließ sich nicht vom Server lesen."

msgid "%s: %d: %s (%s) -> %s [%s] {0} %s / %s"
msgstr "%s: %d: %s (%s) -> %s [%s] {0} %s / %s!"
'''
PO_FR = '''msgid ""
msgstr "Content-Type: text/plain; charset=UTF-8\\n"

msgid "The package list could not be read from the server."
msgstr "La liste des paquets n'a pas pu être lue depuis le serveur."
'''


@pytest.fixture()
def locale_dir(tmp_path):
    if shutil.which("msgfmt") is None:
        pytest.skip("GNU msgfmt is not installed")
    root = tmp_path / "locale"
    for lang, domain, po in (("de", "apt", PO_DE), ("de", "zzz", PO_DE_OTHER), ("fr", "apt", PO_FR)):
        folder = root / lang / "LC_MESSAGES"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{domain}.po").write_text(po, encoding="utf-8")
        subprocess.run(["msgfmt", "-o", str(folder / f"{domain}.mo"), str(folder / f"{domain}.po")], check=True)
    (root / "de" / "LC_MESSAGES" / "broken.mo").write_bytes(b"not a catalog at all, just bytes")
    return root


def test_gettext_bitext_publishes_pairs_and_rejects(tmp_path, locale_dir):
    config = gettext_bitext.GettextBitextConfig(locale_dir=str(locale_dir), languages=["de", "fr"], state_dir=str(tmp_path / "s"))
    out = gettext_bitext.run(config)
    store = CorpusStore(str(tmp_path / "s" / "corpus"))
    table = store.read_table("gettext-bitext").to_pylist()
    assert [(r["src_lang"], r["tgt_lang"], r["src"], r["tgt"]) for r in table] == [  # catalogs sorted, msgfmt sorts msgids
        ("en", "de", "Could not create the temporary directory for the download.",
         "Das temporäre Verzeichnis für den Download konnte nicht erstellt werden."),
        ("en", "de", "The package list could not be read from the server.", "Die Paketliste konnte nicht vom Server gelesen werden."),
        ("en", "fr", "The package list could not be read from the server.",
         "La liste des paquets n'a pas pu être lue depuis le serveur."),
    ]
    reasons = sorted(r["reason"] for r in store.read_rejects("gettext-bitext").to_pylist())
    assert reasons == ["duplicate_message", "placeholders", "too_short", "unreadable_catalog"]
    assert out["rows"] == 3 and out["languages"] == ["en", "de", "fr"]
    again = gettext_bitext.run(config)
    assert again["corpus"] == out["corpus"]  # same catalogs, same version
    catalog = locale_dir / "fr" / "LC_MESSAGES" / "apt.mo"
    catalog.write_bytes(catalog.read_bytes() + b"\0")  # a changed catalog is a new version, never a changed one
    assert gettext_bitext.run(config)["corpus"] != out["corpus"]


def test_gettext_bitext_refuses_missing_catalogs_and_english(tmp_path, locale_dir):
    with pytest.raises(UserError, match=r"no \.mo catalogs for \['es'\]"):
        gettext_bitext.run(gettext_bitext.GettextBitextConfig(locale_dir=str(locale_dir), languages=["de", "es"],
                                                              state_dir=str(tmp_path)))
    with pytest.raises(ConfigError, match="languages"):
        load_config(gettext_bitext.GettextBitextConfig, None, ["languages=[en_GB]"])


def test_wiki_title_lead_leaves_pack_articles_out(tmp_path):
    english = {a.title: a for a in load_wiki_articles("en")}
    french = {a.title: a for a in load_wiki_articles("fr")}
    shared = sorted(set(english) & set(french))
    pack = tmp_path / "pack"
    pack.mkdir()
    # one article by its French lead, one by its English lead's first sentence (a clustering item), one by title
    texts = [french[shared[0]].lead, first_sentence(english[shared[1]].lead), shared[2]]
    pq.write_table(pa.table({"text": texts}), pack / "task.parquet")
    (pack / "manifest.json").write_text("{\"tasks\": []}")
    config = wiki_title_lead.WikiTitleLeadConfig(languages=["fr"], pack=str(pack), state_dir=str(tmp_path / "s"))
    out = wiki_title_lead.run(config)
    store = CorpusStore(str(tmp_path / "s" / "corpus"))
    rows = store.read_table("wiki-title-lead").to_pylist()
    assert out["rows"] == len(rows) == 2 * (len(shared) - 3)
    titles = {r["src"] for r in rows}
    assert not titles & set(shared[:3]) and shared[3] in titles
    first = next(r for r in rows if r["src"] == shared[3] and r["src_lang"] == "en")
    assert first["tgt"] == french[shared[3]].lead and first["tgt_lang"] == "fr"
    back = next(r for r in rows if r["src"] == shared[3] and r["src_lang"] == "fr")
    assert back["tgt"] == english[shared[3]].lead
    assert sorted(r["reason"] for r in store.read_rejects("wiki-title-lead").to_pylist()) == ["in_pack"] * 6
    assert wiki_title_lead.run(config)["corpus"] == out["corpus"]


def test_wiki_title_lead_languages_are_checked():
    with pytest.raises(ConfigError, match="pair English with"):
        load_config(wiki_title_lead.WikiTitleLeadConfig, None, ["languages=[de]"])


def _publish(store: CorpusStore, name: str, table: pa.Table) -> str:
    writer = store.open_version(name, {"n": table.num_rows}, [name])
    writer.write_shard("s0", table)
    return f"{name}@{writer.publish(expected_shards=['s0']).version}"


def _bitext(prefix: str, n: int, lang: str) -> pa.Table:
    return pa.table({"id": [f"{prefix}{i}" for i in range(n)], "src": [f"{prefix} source {i}" for i in range(n)],
                     "tgt": [f"{prefix} target {i}" for i in range(n)], "src_lang": ["en"] * n, "tgt_lang": [lang] * n})


def test_corpus_mix_samples_each_source_and_pins_versions(tmp_path):
    store = CorpusStore(str(tmp_path / "corpus"))
    a = _publish(store, "a", _bitext("a", 50, "de"))
    b = _publish(store, "b", _bitext("b", 8, "fr"))
    config = corpus_mix.CorpusMixConfig(sources=[{"corpus": "a", "rows": 10}, {"corpus": b}], state_dir=str(tmp_path))
    out = corpus_mix.run(config)
    mixed = store.read_table("corpus-mix").to_pylist()
    from_a = [r for r in mixed if r["id"].startswith("a")]
    assert len(from_a) == 10 and len(mixed) == 18 and out["sources"] == [a, b]
    assert [int(r["id"][1:]) for r in from_a] == sorted(int(r["id"][1:]) for r in from_a)  # source order kept
    assert out["languages"] == ["de", "en", "fr"]
    assert corpus_mix.run(config)["corpus"] == out["corpus"]
    from interlingua.workflows.train import mixed_sources

    mix = store.manifest("corpus-mix")
    assert mixed_sources(mix) == {"a": a.split("@")[1], "b": b.split("@")[1]}  # what a model trained on it records
    assert mixed_sources(store.manifest("a")) == {}
    _publish(store, "a", _bitext("a", 60, "de"))  # a new version of a source: a new mix
    assert corpus_mix.run(config)["corpus"] != out["corpus"]


def test_corpus_mix_refuses_unknown_sources_and_different_columns(tmp_path):
    store = CorpusStore(str(tmp_path / "corpus"))
    _publish(store, "a", _bitext("a", 5, "de"))
    _publish(store, "c", pa.table({"text": ["x", "y"]}))
    with pytest.raises(UserError, match=r"sources\[1\].corpus: .*nope"):
        corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "nope"}], state_dir=str(tmp_path)))
    with pytest.raises(UserError, match=r"sources\[1\] c@\S+ differs from sources\[0\] a@\S+: lacks id, src, tgt, "
                                        r"src_lang, tgt_lang; has extra text \(hint: ") as refused:
        corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "c"}], state_dir=str(tmp_path)))
    assert "\n" not in str(refused.value)
    with pytest.raises(ConfigError, match="sources"):
        load_config(corpus_mix.CorpusMixConfig, None, ["sources=[]"])


def test_corpus_mix_ids_stay_unique_when_sources_share_ids(tmp_path):
    """Each source kept its own ids, so a mix of two corpora numbered from 0 repeated them, and train's hold-out by
    id dropped rows of the other source. When ids repeat, every id becomes s<k>:<id>; a mix whose ids are
    distinct keeps them (and its version)."""
    store = CorpusStore(str(tmp_path / "corpus"))
    first, second = _bitext("a", 3, "de"), _bitext("b", 2, "fr")
    _publish(store, "a", first.set_column(0, "id", pa.array(["0", "1", "2"])))
    _publish(store, "b", second.set_column(0, "id", pa.array(["1", "2"])))
    out = corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "b", "rows": 1}],
                                                    state_dir=str(tmp_path)))
    mixed = store.read_table(*out["corpus"].split("@")).to_pylist()
    assert [(r["id"], r["src"]) for r in mixed] == [("s0:0", "a source 0"), ("s0:1", "a source 1"),
                                                    ("s0:2", "a source 2"), (f"s1:{int(mixed[3]['src'][-1]) + 1}", mixed[3]["src"])]
    assert store.manifest(*out["corpus"].split("@")).config["ids"] == "s{k}:{id}"
    _publish(store, "c", _bitext("c", 2, "fr"))
    distinct = corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "c"}], name="m2",
                                                         state_dir=str(tmp_path)))
    assert [r["id"] for r in store.read_table("m2").to_pylist()] == ["0", "1", "2", "c0", "c1"]
    assert "ids" not in store.manifest(*distinct["corpus"].split("@")).config


def test_corpus_mix_prefixes_integer_ids_as_text(tmp_path):
    """Hand-published corpora with int64 ids that repeat: the s<k>:<id> prefix raised ArrowInvalid after the version
    was opened."""
    store = CorpusStore(str(tmp_path / "corpus"))
    _publish(store, "a", _bitext("a", 2, "de").set_column(0, "id", pa.array([0, 1])))
    _publish(store, "b", _bitext("b", 2, "fr").set_column(0, "id", pa.array([1, 2])))
    out = corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "b"}], state_dir=str(tmp_path)))
    mixed = store.read_table(*out["corpus"].split("@"))
    assert mixed.column("id").to_pylist() == ["s0:0", "s0:1", "s1:1", "s1:2"] and mixed.schema.field("id").type == pa.string()


def test_corpus_mix_refuses_a_source_listed_twice(tmp_path):
    """The same version listed twice was mixed silently (16 rows, 8 distinct): refused in one line, whether the
    two spellings are the same or resolve to the same version."""
    store = CorpusStore(str(tmp_path / "corpus"))
    pinned = _publish(store, "a", _bitext("a", 3, "de"))
    with pytest.raises(ConfigError, match=r"sources\[1\] a is also sources\[0\]: .*\(hint: .*rows"):
        load_config(corpus_mix.CorpusMixConfig, None, ["sources=[{corpus: a}, {corpus: a, rows: 2}]"])
    with pytest.raises(UserError, match=rf"^sources\[1\] {pinned} is also sources\[0\]: .*\(hint: .*rows[^\n]*$"):
        corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": pinned}], state_dir=str(tmp_path)))
    assert store.corpus_names() == ["a"]


def test_corpus_mix_takes_list_columns_whatever_their_item_field_is_called(tmp_path):
    """A bitext-corpus version records its token lists as ``list<item: string>``, a re-published one (corpus-mix,
    hard-negatives output) as ``list<element: string>``: the same column, refused as different types (the recorded
    strings were compared). A list of another item type is still refused, named."""
    store = CorpusStore(str(tmp_path / "corpus"))
    item = _bitext("a", 3, "de").append_column("src_tokens", pa.array([["a"], ["b", "c"], []], pa.list_(pa.string())))
    element_type = pa.list_(pa.field("element", pa.string()))
    element = _bitext("b", 2, "fr").append_column("src_tokens", pa.array([["x"], ["y"]], element_type))
    _publish(store, "a", item), _publish(store, "b", element)
    assert store.manifest("a").columns["src_tokens"] != store.manifest("b").columns["src_tokens"]
    out = corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "b"}], state_dir=str(tmp_path)))
    assert out["rows"] == 5
    assert store.read_table("corpus-mix").column("src_tokens").to_pylist() == [["a"], ["b", "c"], [], ["x"], ["y"]]
    _publish(store, "c", _bitext("c", 1, "fr").append_column("src_tokens", pa.array([[1]], pa.list_(pa.int64()))))
    with pytest.raises(UserError, match=r"types otherwise src_tokens \(list<item: int64>, not list<item: string>\)"):
        corpus_mix.run(corpus_mix.CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "c"}], state_dir=str(tmp_path)))


def test_gettext_catalogs_found_through_an_fsspec_url(locale_dir):
    plain = gettext_bitext.find_catalogs(str(locale_dir), ["de", "fr"], ["apt"])
    url = gettext_bitext.find_catalogs(f"file://{locale_dir}", ["de", "fr"], ["apt"])
    assert url == {lang: [f"file://{p}" for p in paths] for lang, paths in plain.items()} and len(plain["de"]) == 1
    assert gettext_bitext.catalogs_digest(url) == gettext_bitext.catalogs_digest(plain)
