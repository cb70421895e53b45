"""A model folder may come from a shared registry: every path its JSON names (a meaning head's folder, a Dense
module's ``path``, a combination's parts, an MLmodel's data folder) and the head files read there stay inside it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from interlingua.core.confined import path_inside
from interlingua.core.errors import UserError
from interlingua.models.meaning_head import COMPOSED_CONFIG, MeaningHead, save_composed


class FakeUSE:
    name, dim = "fake-use", 8

    def encode(self, texts):
        return np.ones((len(texts), 8), dtype=np.float32)


@pytest.fixture
def use_head(tmp_path, monkeypatch):
    """A composed folder over the ``use`` spec base (stood in for), and a valid Dense folder outside it."""
    import interlingua.models.resolve as resolve

    monkeypatch.setattr(resolve, "_resolve_single", lambda spec: FakeUSE())
    torch.manual_seed(0)
    folder = save_composed(MeaningHead(8, 8, "identity"), tmp_path / "model", base_spec="use")
    outside = MeaningHead(8, 8, "identity").save_dense(tmp_path / "outside_head")
    return folder, outside


def _marker(folder, head):
    (folder / COMPOSED_CONFIG).write_text(json.dumps({"kind": "meaning_head", "base_spec": "use", "head": head}))


@pytest.mark.parametrize("head", ["../outside_head", "head/../../outside_head", "ABSOLUTE", None, ["head"]])
def test_a_head_path_out_of_the_model_folder_is_refused(use_head, head):
    from interlingua.models.load import load_encoder

    folder, outside = use_head
    _marker(folder, str(outside) if head == "ABSOLUTE" else head)
    with pytest.raises(UserError, match=rf"^{folder / COMPOSED_CONFIG}: \"head\": .* is not a path inside {folder} "
                                        r"\(hint: .*\)$"):
        load_encoder(str(folder))


def test_a_head_folder_or_file_linked_out_of_the_model_folder_is_refused(use_head):
    from interlingua.models.load import load_encoder

    folder, outside = use_head
    assert load_encoder(str(folder)).dim == 8  # as saved: loads
    shutil.rmtree(folder / "head")
    (folder / "head").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UserError, match=rf"\"head\": 'head' is not a path inside {folder}"):
        load_encoder(str(folder))
    (folder / "head").unlink()
    (folder / "head").mkdir()
    (folder / "head" / "config.json").symlink_to(outside / "config.json")
    shutil.copy(outside / "model.safetensors", folder / "head" / "model.safetensors")
    with pytest.raises(UserError, match=rf"^{folder / 'head' / 'config.json'}: '{outside / 'config.json'}' is not a "
                                        rf"path inside {folder}"):
        load_encoder(str(folder))


def test_a_dense_module_path_out_of_the_model_folder_is_refused(tmp_path):
    from tiny_models import build_tiny_bert

    from interlingua.models.load import load_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    base = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"), pooling="mean", max_length=16)
    base.save(tmp_path / "base")
    folder = save_composed(MeaningHead(32, 8, "tanh"), tmp_path / "model", base_folder=tmp_path / "base")
    (folder / COMPOSED_CONFIG).unlink()  # as the MLflow flavor stores it: the module stack alone
    modules = json.loads((folder / "modules.json").read_text())
    shutil.move(folder / modules[3]["path"], tmp_path / "outside_dense")
    modules[3]["path"] = "../outside_dense"
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(UserError, match=rf"^{folder / 'modules.json'}: modules\[3\]\.path: '../outside_dense' is not a "
                                        rf"path inside {folder}"):
        load_encoder(str(folder))


def test_a_combination_part_linked_out_of_the_folder_is_refused(tmp_path):
    from interlingua.models.combined import COMBINED_FILE, load_combined

    folder = tmp_path / "combined"
    (folder / "second").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (folder / "first").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (folder / COMBINED_FILE).write_text(json.dumps({"mode": "concat", "parts": ["first", "second"]}))
    loaded = []
    with pytest.raises(UserError, match=rf"{COMBINED_FILE}: parts\[0\]: 'first' is not a path inside {folder}"):
        load_combined(folder, loaded.append)
    assert loaded == []


def test_an_mlmodel_data_path_must_be_a_relative_path_inside(tmp_path):
    from interlingua.models.load import encoder_folder_of_mlflow_model

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "model" / "artifacts").mkdir(parents=True)
    (tmp_path / "model" / "artifacts" / "encoder").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    for path in (5, "artifacts/encoder", str(tmp_path / "elsewhere")):
        mlmodel = {"flavors": {"python_function": {"artifacts": {"encoder": {"path": path}}}}}
        with pytest.raises(UserError, match=r"its MLmodel's data path: .* is not a path inside"):
            encoder_folder_of_mlflow_model(tmp_path / "model", "models:/m/1", mlmodel=mlmodel)


def test_path_inside(tmp_path):
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (tmp_path / "via").symlink_to(root, target_is_directory=True)
    assert path_inside(root, "a/b", "f: k") == (root / "a" / "b").resolve()
    assert path_inside(root, "a/../a/b", "f: k") == (root / "a" / "b").resolve()
    assert path_inside(tmp_path / "via", "a", "f: k") == (root / "a").resolve()  # the user's own link to the root
    assert path_inside(root, "../root/a", "f: k") == (root / "a").resolve()  # out and back in: inside
    for bad in ("", ".", "a/..", "..", "../elsewhere", str(root / "a"), None, 3):
        with pytest.raises(UserError, match=r"^f: k: .* is not a path inside"):
            path_inside(root, bad, "f: k")
