"""A pack another pack builder version made (``interlingua eval --pack DIR``, ``promote``, a recipe's ``pack:``) is used
as it is, with one line that says so and how to rebuild it, once per pack and process."""

import json
from dataclasses import asdict

import pytest

from interlingua.evaluation.pack import build
from interlingua.evaluation.pack.build import PACK_VERSION, PackSizes, read_manifest
from interlingua.evaluation.tasks.pack_tasks import pack_task_specs
from interlingua.workflows import pack_eval


@pytest.fixture(autouse=True)
def nothing_noted_yet(monkeypatch):
    monkeypatch.setattr(build, "_NOTED", set(), raising=False)


def _pack(folder, version, seed=0, **sizes):
    folder.mkdir()
    task = {"name": "bible_retrieval", "kind": "retrieval", "language": "en-es", "file": "bible_retrieval.parquet"}
    manifest = {"version": version, "seed": seed, "sizes": {**asdict(PackSizes()), **sizes}, "tasks": [task], "skipped": []}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_version_1_pack_is_used_and_named_once(tmp_path, capsys):
    folder = _pack(tmp_path / "old", 1, seed=3, bible_pairs=500)
    assert [spec.name for spec in pack_task_specs(folder)] == ["bible_retrieval"]  # interlingua eval --pack, promote
    assert pack_eval.ensure_pack(str(folder), tmp_path / "state") == folder  # a recipe's pack:
    assert read_manifest(folder)["version"] == 1
    shown = capsys.readouterr()
    assert shown.err.splitlines() == [
        f"benchmark pack: {folder} was built by pack builder version 1, now {PACK_VERSION} (before version 2 its "
        "bible_retrieval keeps test verses whose text is in training); rebuild it: interlingua bench-pack "
        f"--out {folder} --seed 3 --bible-pairs 500"]
    assert "pack builder" not in shown.out


def test_the_rebuild_command_quotes_a_folder_with_a_space(tmp_path, capsys):
    """Pasted as printed, the command gave argparse two words for --out."""
    import shlex

    folder = _pack(tmp_path / "old pack", 1)
    read_manifest(folder)
    command = capsys.readouterr().err.strip().split("rebuild it: ", 1)[1]
    assert shlex.split(command) == ["interlingua", "bench-pack", "--out", str(folder)]


def test_a_pack_newer_than_this_builder_is_named_without_the_version_1_reason(tmp_path, capsys):
    read_manifest(_pack(tmp_path / "newer", PACK_VERSION + 1))
    assert capsys.readouterr().err.strip() == (
        f"benchmark pack: {tmp_path / 'newer'} was built by pack builder version {PACK_VERSION + 1}, now {PACK_VERSION}; "
        f"rebuild it: interlingua bench-pack --out {tmp_path / 'newer'}")


def test_a_pack_of_this_version_is_read_without_a_word(tmp_path, capsys):
    folder = _pack(tmp_path / "new", PACK_VERSION)
    pack_task_specs(folder)
    pack_eval.ensure_pack(str(folder), tmp_path / "state")
    assert capsys.readouterr() == ("", "")


def test_the_default_pack_is_rebuilt_not_named(tmp_path, capsys):
    """``<state>/bench-pack`` of another version is built again (test_ensure_pack); the check that finds it says
    nothing of a rebuild by hand."""
    folder = _pack(tmp_path / "bench-pack", 1)
    assert pack_eval._outdated(folder) == f"version 1, now {PACK_VERSION}"
    assert capsys.readouterr() == ("", "")
