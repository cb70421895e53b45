"""A pack built by a newer interlingua may hold a task of a kind this one does not run: its manifest was refused whole,
so none of its tasks could be evaluated. That task is now skipped with one line (its name, its kind, "needs a newer
interlingua") and the others run; a selection of that task alone is refused in one line with the hint."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.evaluation.pack.build import MANIFEST, PACK_VERSION
from letter_encoder import LETTER_ENCODER_MODULE

ENCODER_MODULE = LETTER_ENCODER_MODULE
GOOD = {"name": "good_retrieval", "kind": "retrieval", "language": "en-de", "file": "good.parquet"}
NEWER = {"name": "newer_paraphrase", "kind": "paraphrase", "language": "en-de", "file": "paraphrase.parquet"}


@pytest.fixture()
def pack(tmp_path):
    folder = tmp_path / "pack"
    folder.mkdir()
    pq.write_table(pa.table({"source": ["abc", "def", "ghij"], "target": ["abd", "eef", "hij"]}), folder / "good.parquet")
    (folder / MANIFEST).write_text(json.dumps({"version": PACK_VERSION, "tasks": [GOOD, NEWER]}))
    return folder


def _eval(tmp_path, monkeypatch, pack, *arguments):
    from interlingua.workflows.cli import main

    (tmp_path / "letters_newer.py").write_text(ENCODER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    return main(["eval", "--model", "py:letters_newer:make", "--pack", str(pack), "--seeds", "1", "--no-cache",
                 "--out", str(tmp_path / "o"), *arguments])


def _newer_lines(err):
    return [line for line in err.splitlines() if "needs a newer interlingua" in line]


def test_a_task_of_a_newer_kind_is_skipped_with_one_line_and_the_others_run(tmp_path, monkeypatch, capsys, pack):
    assert _eval(tmp_path, monkeypatch, pack) == 0
    [line] = _newer_lines(capsys.readouterr().err)
    assert "task 'newer_paraphrase' has kind 'paraphrase', which needs a newer interlingua" in line
    assert "skipped" in line
    document = json.loads((tmp_path / "o" / "results.json").read_text())
    assert {m["task"] for m in document["measurements"]} == {"good_retrieval"}


def test_a_selection_skips_it_once_per_process(pack, capsys):
    from interlingua.evaluation.runner import select_tasks
    from interlingua.evaluation.tasks.pack_tasks import pack_task_specs

    for _ in range(2):  # a workflow selects its tasks before training and again to evaluate
        assert [t.name for t in select_tasks(pack_task_specs(pack), ["all"])] == ["good_retrieval"]
    assert len(_newer_lines(capsys.readouterr().err)) == 1


@pytest.mark.parametrize("selected", ["newer_paraphrase", "paraphrase", "newer_*"])
def test_naming_only_a_task_of_a_newer_kind_is_one_line_with_the_hint(tmp_path, monkeypatch, capsys, pack, selected):
    assert _eval(tmp_path, monkeypatch, pack, "--tasks", selected) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == _newer_lines(err) and len(err.splitlines()) == 1, err
    assert err.endswith("which needs a newer interlingua (this one runs retrieval, mining, clustering, title_lead); "
                        "upgrade interlingua to run it, or select other tasks")
    assert not (tmp_path / "o").exists()


def test_a_damaged_entry_without_a_kind_is_still_refused_with_the_rebuild(pack):
    from interlingua.evaluation.tasks.pack_tasks import pack_task_specs

    (pack / MANIFEST).write_text(json.dumps({"version": PACK_VERSION, "tasks": [
        GOOD, {key: value for key, value in NEWER.items() if key != "kind"}]}))
    with pytest.raises(ValueError, match=r"manifest\.json: task 1 has no string kind; rebuild the pack: "):
        pack_task_specs(pack)
