"""A pack's manifest.json is input (a pack folder may be shared or damaged): one that is not JSON, holds no task list,
or a task without its keys is refused in one line naming the file, with the rebuild; it was a KeyError or
AttributeError traceback ("failed", exit 1). A pack whose only task is of a kind this version does not know has nothing
this one can run: one line saying it needs a newer interlingua (tests/evaluation/test_pack_newer_kind.py)."""

import re

import pytest

from interlingua.evaluation.pack.build import MANIFEST


@pytest.mark.parametrize("text, message", [
    ('{"tasks": [', r"manifest\.json is not valid JSON \(.*\); rebuild the pack: interlingua bench-pack --out \S*pack$"),
    ("[1, 2]", r"manifest\.json has no list of tasks \(a JSON object with a 'tasks' list expected\); rebuild"),
    ('{"tasks": {"name": "x"}}', r"manifest\.json has no list of tasks"),
    ('{"tasks": [{"name": "x", "kind": "retrieval"}]}', r"manifest\.json: task 0 has no string language, file; rebuild"),
    ('{"tasks": [7]}', r"manifest\.json: task 0 has no string name, kind, language, file; rebuild"),
    ('{"tasks": [{"name": "x", "kind": "weird", "language": "en-de", "file": "x.parquet"}]}',
     r"manifest\.json: task 'x' has kind 'weird', which needs a newer interlingua \(this one runs retrieval, mining, "
     r"clustering, title_lead\); upgrade interlingua to run it, or select other tasks$"),
    ('{"tasks": [{"name": "tl", "kind": "title_lead", "language": "de", "file": "t.parquet"}]}',
     r"manifest\.json: task 'tl' is a title_lead task with language 'de', not a pair such as 'en-de'; rebuild the pack"),
])
def test_a_bad_pack_manifest_is_one_line_before_any_encoder_loads(tmp_path, monkeypatch, capsys, text, message):
    from interlingua.models import resolve
    from interlingua.workflows.cli import main

    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / MANIFEST).write_text(text)
    monkeypatch.setattr(resolve, "resolve_encoder", lambda spec, wrap_leaf=None: pytest.fail(f"{spec} resolved"))
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    assert main(["eval", "--model", "use", "--pack", str(tmp_path / "pack"), "--seeds", "1", "--no-cache",
                 "--out", str(tmp_path / "o")]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("benchmark pack:")]
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "o").exists()  # a refused eval makes no --out folder (nor its embedding cache)


def test_a_workflows_eval_tasks_check_gives_a_damaged_manifest_its_rebuild_hint_only(tmp_path):
    """A workflow's eval_tasks check (before training) prefixed a damaged manifest's line with 'eval_tasks:' and the
    eval_tasks hint, which cannot mend it."""
    from interlingua.core.errors import UserError
    from interlingua.workflows.pack_eval import check_tasks

    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / MANIFEST).write_text("[1]")
    with pytest.raises(UserError) as caught:
        check_tasks(tmp_path / "pack", ["all"])
    assert str(caught.value).endswith("rebuild the pack: interlingua bench-pack --out " + str(tmp_path / "pack"))
    assert not str(caught.value).startswith("eval_tasks:") and "hint: --set eval_tasks" not in str(caught.value)
