"""DeepSpeed checkpoints are read without unpickling code.

DeepSpeed's torch checkpoint engine calls ``torch.load(..., weights_only=False)``, which runs whatever a
crafted file in a shared ``storage_path`` asks for. :func:`load_weights_only` replaces that call on an
engine with ``torch.load(..., weights_only=True)``: tensors, containers and primitive values load; the
few DeepSpeed types its checkpoints hold (ZeRO stage enum, loss scaler) are allow-listed by name; any
other object is refused with an error naming the file.
"""

from __future__ import annotations

import importlib

#: DeepSpeed classes found in its own checkpoints (module, attribute); missing ones are skipped.
_DEEPSPEED_TYPES = (
    ("deepspeed.runtime.zero.config", "ZeroStageEnum"),
    ("deepspeed.runtime.fp16.loss_scaler", "LossScaler"),
    ("deepspeed.runtime.fp16.loss_scaler", "DynamicLossScaler"),
    ("deepspeed.utils.tensor_fragment", "fragment_address"),  # ZeRO 1/2 optimizer states: a (numel, start) dataclass
)


def _allowed_types() -> list[type]:
    found = []
    for module, name in _DEEPSPEED_TYPES:
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return found


def safe_torch_load(path: str, map_location=None):
    """``torch.load`` of a checkpoint file with ``weights_only=True`` and DeepSpeed's own types allowed."""
    import pickle

    import torch

    with torch.serialization.safe_globals(_allowed_types()):
        try:
            return torch.load(path, map_location=map_location, weights_only=True)
        except pickle.UnpicklingError as err:
            lines = str(err).splitlines()
            what = next((line.strip() for line in lines if "Unsupported global" in line), lines[0] if lines else "")
            raise RuntimeError(f"refusing checkpoint file {path}: it holds objects other than tensors and plain "
                               f"values ({what.split('. Please use')[0]})") from None


def load_weights_only(engine) -> None:
    """Make ``engine.load_checkpoint`` read its files through :func:`safe_torch_load`."""
    checkpoint_engine = getattr(engine, "checkpoint_engine", None)
    if checkpoint_engine is not None:
        checkpoint_engine.load = safe_torch_load
