"""Checkpoint files are loaded with weights_only: tensors load, a crafted pickle does not run."""

from __future__ import annotations

import pickle

import pytest
import torch

from interlingua.trainers.engine.safe_checkpoint import load_weights_only, safe_torch_load


class _Payload:
    def __reduce__(self):
        import pathlib

        return (pathlib.Path.touch, (pathlib.Path(_Payload.marker),))


def test_tensors_and_values_load(tmp_path):
    path = tmp_path / "ok.pt"
    torch.save({"module": {"w": torch.ones(2)}, "step": 3, "names": ["a"]}, path)
    data = safe_torch_load(str(path))
    assert data["step"] == 3 and torch.equal(data["module"]["w"], torch.ones(2))


def test_crafted_pickle_is_refused_and_never_runs(tmp_path):
    _Payload.marker = str(tmp_path / "pwned")
    path = tmp_path / "evil.pt"
    torch.save({"client_state": _Payload()}, path)
    with pytest.raises(RuntimeError, match="refusing checkpoint file .*evil.pt"):
        safe_torch_load(str(path))
    assert not (tmp_path / "pwned").exists()


def test_engine_loader_is_replaced():
    class Engine:
        class checkpoint_engine:  # noqa: N801 - stands in for DeepSpeed's object
            load = staticmethod(lambda path, map_location=None: pickle.loads(b""))

    engine = Engine()
    load_weights_only(engine)
    assert engine.checkpoint_engine.load is safe_torch_load
