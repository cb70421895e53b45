"""A pack task's tables are checked (their schemas) before any encoder loads: a missing, unreadable or incomplete
table was found by the task's run, after every --model had loaded (and after whole tasks ran for the first)."""

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.evaluation.pack.build import MANIFEST, PACK_VERSION


def _pack(folder, tables, tasks):
    folder.mkdir()
    for name, columns in tables.items():
        if isinstance(columns, str):
            (folder / name).write_text(columns)
        else:
            pq.write_table(pa.table({column: ["x"] for column in columns}), folder / name)
    (folder / MANIFEST).write_text(json.dumps({"version": PACK_VERSION, "tasks": tasks}))


GOOD = {"name": "good_retrieval", "kind": "retrieval", "language": "en-de", "file": "good.parquet"}


@pytest.mark.parametrize("tables, task, message", [
    ({}, {"name": "lost", "kind": "clustering", "language": "de", "file": "lost.parquet"},
     r"\S*lost\.parquet not found \(pack task 'lost' reads it; rebuild the pack: interlingua bench-pack --out \S*pack\)"),
    ({"text.parquet": "not parquet"}, {"name": "text", "kind": "clustering", "language": "de", "file": "text.parquet"},
     r"\S*text\.parquet is not a readable parquet table \(.*; rebuild the pack: interlingua bench-pack --out \S*pack\)"),
    ({"r.parquet": ("source", "tgt")}, {"name": "r", "kind": "retrieval", "language": "en-de", "file": "r.parquet"},
     r"\S*r\.parquet has no column target \(pack task 'r', a retrieval task, reads source, target; rebuild"),
    ({"m.parquet": ("split", "side", "id", "text"), "g.parquet": ("split", "src_id")},
     {"name": "m", "kind": "mining", "language": "de-en", "file": "m.parquet", "gold_file": "g.parquet"},
     r"\S*g\.parquet has no column tgt_id \(pack task 'm', a mining task, reads split, src_id, tgt_id; rebuild"),
    ({"t.parquet": ("title_en", "lead_de", "title_de")},
     {"name": "t", "kind": "title_lead", "language": "en-de", "file": "t.parquet"}, r"t\.parquet has no column lead_en "),
])
def test_a_bad_pack_table_is_refused_before_any_encoder_loads(tmp_path, monkeypatch, capsys, tables, task, message):
    from interlingua.models import resolve
    from interlingua.workflows.cli import main

    _pack(tmp_path / "pack", {"good.parquet": ("source", "target"), **tables}, [GOOD, task])
    monkeypatch.setattr(resolve, "resolve_encoder", lambda spec, wrap_leaf=None: pytest.fail(f"{spec} resolved"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    assert main(["eval", "--model", "use,minilm", "--pack", str(tmp_path / "pack"), "--seeds", "1", "--no-cache",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(message, err), err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_a_task_not_chosen_is_not_checked(tmp_path):
    """Only the chosen tasks' tables are read: a pack whose other task lost its table still evaluates --tasks good."""
    from interlingua.evaluation.runner import select_tasks
    from interlingua.evaluation.tasks.pack_tasks import pack_task_specs

    _pack(tmp_path / "pack", {"good.parquet": ("source", "target")},
          [GOOD, {"name": "lost", "kind": "clustering", "language": "de", "file": "lost.parquet"}])
    assert [t.name for t in select_tasks(pack_task_specs(tmp_path / "pack"), ["good_retrieval"])] == ["good_retrieval"]
    with pytest.raises(ValueError, match="lost.parquet not found"):
        select_tasks(pack_task_specs(tmp_path / "pack"), ["all"])


def test_a_workflows_eval_tasks_check_names_a_bad_table_with_the_rebuild_hint_only(tmp_path):
    """A workflow checks its eval_tasks before training: a chosen task's missing table is refused there too, with the
    rebuild hint, not the eval_tasks hint a pattern that matches nothing gets."""
    from interlingua.core.errors import UserError
    from interlingua.workflows.pack_eval import check_tasks

    _pack(tmp_path / "pack", {"good.parquet": ("source", "target")},
          [GOOD, {"name": "lost", "kind": "clustering", "language": "de", "file": "lost.parquet"}])
    check_tasks(tmp_path / "pack", ["good_retrieval"])
    with pytest.raises(UserError) as caught:
        check_tasks(tmp_path / "pack", ["all"])
    assert "lost.parquet not found" in str(caught.value) and "hint: --set eval_tasks" not in str(caught.value)
    with pytest.raises(UserError, match=r"eval_tasks: task 'nope' matches nothing.*hint: --set eval_tasks"):
        check_tasks(tmp_path / "pack", ["nope"])
