"""The default benchmark pack (``<state>/bench-pack``): built from the assets, and rebuilt once an asset that was
missing when it was built exists, with the tasks it had unchanged; missing tasks are named, once per process."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.workflows import pack_eval
from interlingua.workflows.assets import build as assets_build
from interlingua.workflows.assets.build import AssetsReport

SMALL_SIZES = {"bible_pairs": 10, "debian_pairs": 10, "mining_gold_per_split": 5, "mining_orphans_per_side": 2,
               "mining_distractors_per_side": 4, "clustering_items": 20, "title_lead_pairs": 8}


def _write_bible(folder):
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"Gen.{c}.{v}" for c in range(1, 11) for v in range(1, 31)]
    pq.write_table(pa.table({"id": ids, "book": ["Gen"] * len(ids), "en": [f"verse {i} in english" for i in range(len(ids))],
                             "es": [f"versiculo {i} en palabras" for i in range(len(ids))]}), folder / "bible-en-es.parquet")


def _write_debian_reference(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for lang in ("de", "fr", "es"):
        n = 40
        pq.write_table(pa.table({"id": [f"p{i}" for i in range(n)], "section": ["s"] * n,
                                 "en": [f"Paragraph number {1000 + i} explains the apt package manager." for i in range(n)],
                                 "tgt": [f"Absatz {lang} {1000 + i} erklärt die Paketverwaltung apt." for i in range(n)]}),
                       folder / f"debian-reference-en-{lang}.parquet")


@pytest.fixture
def state(tmp_path, monkeypatch):
    """A state whose assets hold the Bible only; building assets reports what is on disk (no Debian packages)."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    monkeypatch.setattr(pack_eval, "REFERENCE_SIZES", SMALL_SIZES)
    calls = []

    def fake_build_assets(assets, only=assets_build.ASSET_NAMES, force=False):
        calls.append(tuple(only))
        report = AssetsReport()
        for name, path in (("bible", assets / "bible" / "bible-en-es.parquet"),
                           ("debian-reference", assets / "debian-reference" / "debian-reference-en-de.parquet")):
            if name in only:
                if path.exists():
                    report.skipped[name] = str(path.parent)
                else:
                    report.missing[name] = f"{name}: no Debian packages in this test"
        return report

    monkeypatch.setattr(assets_build, "build_assets", fake_build_assets)
    _write_bible(tmp_path / "assets" / "bible")
    return tmp_path, calls


def _names(folder):
    return [t["name"] for t in json.loads((folder / "manifest.json").read_text())["tasks"]]


def test_pack_is_built_without_a_missing_asset_and_says_so(state, capsys):
    root, calls = state
    folder = pack_eval.ensure_pack(None, root)
    assert folder == root / "bench-pack"
    assert calls == [("bible", "debian-reference")]
    assert "bible_retrieval" in _names(folder) and not any(n.startswith("debian") for n in _names(folder))
    out = capsys.readouterr().out
    for lang in ("de", "fr", "es"):
        assert f"benchmark pack: debian_*_{lang} is not in {folder}" in out
    assert not list(root.glob("bench-pack.*")), "no temporary pack folder is left behind"


def test_pack_is_rebuilt_once_the_missing_asset_exists_and_keeps_its_tasks(state, capsys):
    root, calls = state
    folder = pack_eval.ensure_pack(None, root)
    before = {p.name: p.read_bytes() for p in folder.glob("*.parquet")}
    _write_debian_reference(root / "assets" / "debian-reference")
    capsys.readouterr()

    assert pack_eval.ensure_pack(None, root) == folder
    out = capsys.readouterr().out
    assert f"benchmark pack: rebuilt {folder}" in out and "is not in" not in out
    names = _names(folder)
    assert {"debian_retrieval_de", "debian_mining_fr", "debian_retrieval_es"} <= set(names)
    assert json.loads((folder / "manifest.json").read_text())["skipped"] == []
    for name, data in before.items():  # deterministic: the tasks it had are byte-identical
        assert (folder / name).read_bytes() == data, name

    # complete now: used as it is, the assets are not looked at again
    stamp = (folder / "manifest.json").stat().st_mtime_ns
    calls.clear()
    assert pack_eval.ensure_pack(None, root) == folder
    assert calls == [] and (folder / "manifest.json").stat().st_mtime_ns == stamp
    assert capsys.readouterr().out == ""


def test_pack_still_missing_an_asset_is_not_rebuilt(state, capsys):
    root, _ = state
    folder = pack_eval.ensure_pack(None, root)
    stamp = (folder / "manifest.json").stat().st_mtime_ns
    assert "debian_*_de is not in" in capsys.readouterr().out
    pack_eval.ensure_pack(None, root)
    assert (folder / "manifest.json").stat().st_mtime_ns == stamp
    assert capsys.readouterr().out == ""  # not rebuilt, and its missing tasks were named already


def test_given_pack_with_skipped_tasks_is_used_as_is_and_named(tmp_path, capsys):
    pack = tmp_path / "mypack"
    pack.mkdir()
    (pack / "manifest.json").write_text(json.dumps({"version": 1, "tasks": [], "skipped": [
        {"name": "bible_retrieval", "reason": "no Bible here"}]}))
    assert pack_eval.ensure_pack(str(pack), tmp_path) == pack
    assert f"benchmark pack: bible_retrieval is not in {pack} (no Bible here)" in capsys.readouterr().out


def test_pack_identity_follows_the_manifest(tmp_path):
    from interlingua.workflows.recipe import pack_identity

    pack = tmp_path / "mypack"
    pack.mkdir()
    (pack / "manifest.json").write_text(json.dumps({"version": 1, "tasks": [], "skipped": []}))
    first = pack_identity(str(pack), str(tmp_path))
    assert first == pack_identity(str(pack), str(tmp_path))
    (pack / "manifest.json").write_text(json.dumps({"version": 1, "tasks": [
        {"name": "t", "kind": "clustering", "language": "en", "file": "t.parquet"}], "skipped": []}))
    assert pack_identity(str(pack), str(tmp_path)) != first
    with pytest.raises(Exception, match="has no manifest.json"):
        pack_identity(str(tmp_path / "absent"), str(tmp_path))


def test_pack_made_by_an_older_builder_is_built_again(state, capsys):
    from interlingua.evaluation.pack.build import PACK_VERSION

    root, _ = state
    folder = pack_eval.ensure_pack(None, root)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "version": 1}))
    capsys.readouterr()
    assert pack_eval.ensure_pack(None, root) == folder
    assert f"{folder} was built by another pack builder (version 1, now {PACK_VERSION})" in capsys.readouterr().out
    assert json.loads((folder / "manifest.json").read_text()) == manifest
