"""``align --out`` and ``embed --out`` in a folder that does not exist: made, as ``eval --out`` and ``bench-pack
--out`` are (both refused it: "folder ... does not exist (hint: create it first)"); a run that fails leaves no folder
it made (``eval``'s --out and embedding cache too), as long as it is empty."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.workflows.cli import main

CONST_ENCODER = ("import numpy as np\nclass E:\n    name = 'e'\n    def encode(self, texts):\n"
                 "        return np.ones((len(texts), 3))\ndef make():\n    return E()\n")


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    (tmp_path / "const_encoder.py").write_text(CONST_ENCODER)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "a.en").write_text("a b\nc d\n")
    (tmp_path / "a.de").write_text("x y\nz w\n")
    (tmp_path / "short.de").write_text("x y\n")  # one line fewer than a.en: refused after the outputs are checked
    return tmp_path


def align(folder, out, tgt="a.de") -> int:
    return main(["align", "--src", str(folder / "a.en"), "--tgt", str(folder / tgt), "--out", str(out),
                 "--forward", str(out.parent / "forward" / "f.txt")])


def embed(out, model="py:const_encoder:make") -> int:
    return main(["embed", "--model", model, "one", "two", "--out", str(out)])


def test_align_writes_its_outputs_into_folders_it_makes(folder):
    out = folder / "new" / "deeper" / "out.txt"
    assert align(folder, out) == 0
    assert out.read_text() == "0-0 1-1\n0-0 1-1\n" and (out.parent / "forward" / "f.txt").is_file()
    assert (out.parent / "out.txt.rejects.jsonl").is_file()


def test_embed_writes_its_vectors_into_a_folder_it_makes(folder):
    out = folder / "new" / "deeper" / "v.npy"
    assert embed(out) == 0
    assert np.load(out).shape == (2, 3)


def test_a_failed_align_or_embed_leaves_no_folder_it_made(folder, capsys):
    (folder / "kept").mkdir()  # there before: stays
    assert align(folder, folder / "kept" / "new" / "out.txt", tgt="short.de") == 2
    assert "has 2 lines but" in capsys.readouterr().err  # refused after the outputs were checked
    assert embed(folder / "kept" / "new" / "v.npy", model="py:no_such_module:make") == 2
    assert list((folder / "kept").iterdir()) == []


def one_task_pack(folder) -> str:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from interlingua.evaluation.pack.build import MANIFEST, PACK_VERSION

    folder.mkdir()
    pq.write_table(pa.table({"source": ["a b", "c d"], "target": ["x y", "z w"]}), folder / "r.parquet")
    (folder / MANIFEST).write_text(json.dumps({"version": PACK_VERSION, "tasks": [
        {"name": "r", "kind": "retrieval", "language": "en-de", "file": "r.parquet"}]}))
    return str(folder)


def evaluate(folder, out, model) -> int:
    return main(["eval", "--model", model, "--pack", one_task_pack(folder / "pack"), "--seeds", "1", "--out", str(out)])


def test_a_failed_eval_leaves_no_out_or_cache_folder_it_made(folder, capsys):
    """--out and its embedding-cache were made by the checks and left empty when the model failed to load."""
    (folder / "kept").mkdir()  # there before: stays
    assert evaluate(folder, folder / "kept" / "new" / "o", model=str(folder / "no-such-model")) == 2
    assert "no-such-model" in capsys.readouterr().err  # failed at the model load, after the folders were made
    assert list((folder / "kept").iterdir()) == []


def test_a_failed_eval_keeps_an_out_folder_that_was_there(folder):
    out = folder / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert evaluate(folder, out, model=str(folder / "no-such-model")) == 2
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # its embedding-cache, made and empty: removed


def test_an_eval_failing_mid_run_keeps_the_folders_holding_files(folder, monkeypatch):
    import interlingua.evaluation.runner as runner

    out = folder / "new" / "o"
    monkeypatch.setattr(runner, "evaluate_models", lambda *a, **k: (_ for _ in ()).throw(ValueError("task failed")))
    assert evaluate(folder, out, model="py:const_encoder:make") == 2
    assert list((out / "embedding-cache").glob("*/encoder.txt"))  # the encoder's cache label: kept, with its folders



def test_a_failed_align_leaves_no_save_params_folder_it_made(folder, capsys):
    (folder / "kept").mkdir()
    params = folder / "kept" / "new" / "params"
    assert main(["align", "--src", str(folder / "a.en"), "--tgt", str(folder / "short.de"), "--out",
                 str(folder / "out.txt"), "--save-params", str(params)]) == 2
    assert "has 2 lines but" in capsys.readouterr().err  # refused after --save-params was made
    assert list((folder / "kept").iterdir()) == []
