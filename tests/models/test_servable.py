"""A version's ``MLmodel`` and files decide what ``mlflow.pyfunc.load_model`` of it runs: only MLflow's
sentence-transformers loader over safetensors weights passes :func:`check_servable`, one line naming what does not."""

from __future__ import annotations

import pytest

from interlingua.core.errors import UserError
from interlingua.models.servable import check_servable, local_files

GOOD = {"flavors": {
    "python_function": {"data": "model.sentence_transformer", "env": {"conda": "conda.yaml"},
                        "loader_module": "mlflow.sentence_transformers", "python_version": "3.11.7"},
    "sentence_transformers": {"code": None, "pipeline_model_type": "BertModel",
                              "sentence_transformers_version": "6.2.0", "source_model_name": "/tmp/enc"}},
    "metadata": {"interlingua.embedding_dim": 32}}
FILES = ["MLmodel", "conda.yaml", "model.sentence_transformer/model.safetensors",
         "model.sentence_transformer/1_Pooling/config.json", "model.sentence_transformer/tokenizer.json"]


def _with(**python_function):
    return {"flavors": {**GOOD["flavors"], "python_function": {**GOOD["flavors"]["python_function"],
                                                                **python_function}}}


def test_what_the_registry_logs_passes():
    check_servable(GOOD, FILES, "models:/enc/1")
    check_servable({"flavors": {"sentence_transformers": {}}}, FILES, "models:/enc/1")  # no pyfunc: nothing to serve


@pytest.mark.parametrize("mlmodel, files, named", [
    (_with(loader_module="mlflow.pyfunc.model", python_model="python_model.pkl"), FILES,
     "flavors.python_function.loader_module is 'mlflow.pyfunc.model'"),
    ({"flavors": {**GOOD["flavors"], "python_function": {"data": "x"}}}, FILES, "loader_module is None"),
    (_with(python_model="python_model.pkl"), FILES, "flavors.python_function.python_model"),
    (_with(cloudpickle_version="3.0.0"), FILES, "flavors.python_function.cloudpickle_version"),
    ({"flavors": {**GOOD["flavors"], "sklearn": {"pickled_model": "model.pkl"}}}, FILES, "flavors.sklearn.pickled_model"),
    ({"flavors": {**GOOD["flavors"], "sklearn": {"serialization_format": "cloudpickle"}}}, FILES,
     "flavors.sklearn.serialization_format"),
    (_with(code="code"), FILES, "flavors.python_function.code (code MLflow imports"),
    (GOOD, [*FILES, "python_model.pkl"], "holds python_model.pkl, a pickle-based file"),
    (GOOD, [*FILES, "model.sentence_transformer/2_Dense/pytorch_model.bin"], "2_Dense/pytorch_model.bin"),
    ({"flavors": ["sentence_transformers"]}, FILES, "flavors are a list"),
])
def test_a_version_that_would_serve_a_pickle_or_code_is_refused_in_one_line(mlmodel, files, named):
    with pytest.raises(UserError) as err:
        check_servable(mlmodel, files, "models:/enc/7")
    message = str(err.value)
    assert message.startswith("models:/enc/7") and named in message and "hint" in message
    assert len(message.splitlines()) == 1


def test_local_files_lists_every_file_without_entering_links(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "python_model.pkl").write_bytes(b"x")
    (tmp_path / "MLmodel").write_text("flavors: {}")
    (tmp_path / "a" / "loop").symlink_to(tmp_path)
    assert sorted(local_files(tmp_path)) == ["MLmodel", "a/b/python_model.pkl", "a/loop"]
