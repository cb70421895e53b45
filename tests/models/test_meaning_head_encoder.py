"""The composed encoder (frozen base + meaning head): saved as a sentence-transformers module stack that
SentenceTransformer loads with the same vectors as our loader; USE-style spec bases; refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from interlingua.core.errors import UserError
from interlingua.models.meaning_head import COMPOSED_CONFIG, MeaningHead, MeaningHeadEncoder, save_composed


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory):
    from tiny_models import build_tiny_bert

    from interlingua.models.sentence_encoder import SentenceEncoder

    hf = build_tiny_bert(tmp_path_factory.mktemp("bert"))
    folder = tmp_path_factory.mktemp("base")
    SentenceEncoder.from_folder(hf, pooling="mean", max_length=32, prefix="query: ").save(folder)
    return folder


def _head(dim=32, out=32, activation="tanh", seed=0):
    torch.manual_seed(seed)
    return MeaningHead(dim, out, activation)


def test_saved_stack_loads_in_sentence_transformers_with_equal_vectors(base_dir, tmp_path):
    from sentence_transformers import SentenceTransformer
    from tiny_models import SENTENCES

    from interlingua.models.load import load_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    head = _head(out=16)
    folder = save_composed(head, tmp_path / "composed", base_folder=base_dir)
    modules = json.loads((folder / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == ["Transformer", "Pooling", "Normalize", "Dense"]
    assert (folder / modules[-1]["path"] / "model.safetensors").is_file()
    assert not list(folder.rglob("*.bin")) and not list(folder.rglob("*.pt"))

    ours = load_encoder(str(folder))
    assert isinstance(ours, MeaningHeadEncoder) and ours.dim == 16
    st = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    np.testing.assert_allclose(ours.encode(SENTENCES, normalize=False), st.encode(SENTENCES, convert_to_numpy=True),
                               atol=1e-5)
    # independent reference: base vectors (normalized) through W, b and tanh by hand
    base = SentenceEncoder.from_folder(base_dir).encode(SENTENCES, normalize=True)
    w, b = head.linear.weight.detach().numpy(), head.linear.bias.detach().numpy()
    np.testing.assert_allclose(ours.encode(SENTENCES, normalize=False), np.tanh(base @ w.T + b), atol=1e-5)
    normed = ours.encode(SENTENCES)
    np.testing.assert_allclose(np.linalg.norm(normed, axis=1), 1.0, rtol=1e-5)
    # a plain sentence-transformers save of the stack (what the MLflow flavor stores) drops our marker
    st.save(str(tmp_path / "st-save"))
    assert not (tmp_path / "st-save" / COMPOSED_CONFIG).exists()
    resaved = load_encoder(str(tmp_path / "st-save"))
    np.testing.assert_allclose(resaved.encode(SENTENCES, normalize=False), st.encode(SENTENCES, convert_to_numpy=True), atol=1e-5)


def test_spec_base_folder_round_trip(tmp_path, monkeypatch):
    """A non-transformer base (USE) is named by spec; the head comes back bit for bit."""
    import interlingua.models.resolve as resolve

    class FakeUSE:
        name, dim = "fake-use", 8

        def encode(self, texts):
            rng = np.random.default_rng(len(texts))
            return rng.normal(size=(len(texts), 8)).astype(np.float32)

    monkeypatch.setattr(resolve, "_resolve_single", lambda spec: FakeUSE())
    head = _head(8, 8, "identity")
    folder = save_composed(head, tmp_path / "use-head", base_spec="use")
    assert json.loads((folder / COMPOSED_CONFIG).read_text())["base_spec"] == "use"
    from interlingua.models.load import load_encoder

    loaded = load_encoder(str(folder))
    for a, b in zip(loaded.head.state_dict().values(), head.state_dict().values()):
        assert torch.equal(a, b)
    texts = ["a", "b", "c"]
    raw = FakeUSE().encode(texts)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    expected = unit @ head.linear.weight.detach().numpy().T + head.linear.bias.detach().numpy()
    np.testing.assert_allclose(loaded.encode(texts, normalize=False), expected, atol=1e-5)


def test_untrusted_folders_are_refused(tmp_path, base_dir):
    head = _head(8, 8, "identity")
    folder = save_composed(head, tmp_path / "x", base_spec="use")
    (folder / COMPOSED_CONFIG).write_text(json.dumps({"kind": "meaning_head", "base_spec": "py:os:getcwd", "head": "head"}))
    with pytest.raises(UserError, match="base_spec 'py:os:getcwd' is not one of"):
        MeaningHeadEncoder.from_folder(folder)
    config = json.loads((folder / "head" / "config.json").read_text())
    config["activation_function"] = "builtins.eval"
    (folder / "head" / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match="activation"):
        MeaningHead.load_dense(folder / "head")
    with pytest.raises(ValueError, match="exactly one of"):
        save_composed(head, tmp_path / "y")
    with pytest.raises(ValueError, match="not empty"):
        save_composed(head, folder, base_spec="use")


def test_head_dimension_must_match_the_base(base_dir):
    from interlingua.models.sentence_encoder import SentenceEncoder

    with pytest.raises(ValueError, match="expects 8-d inputs"):
        MeaningHeadEncoder(SentenceEncoder.from_folder(base_dir), _head(8, 8))
