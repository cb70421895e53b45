"""A frozen base encoder followed by a trained meaning head (Tiyajamorn et al. 2021): the composed encoder.

The head is MLP_M, one feed-forward layer ``act(W e + b)`` over the base's L2-normalized sentence
embedding ``e``; the composed encoder's vector is the meaning embedding ``ê_M``.

Two folder layouts, both marked by ``interlingua_composed.json``:

* **transformer base** (anything :class:`~interlingua.models.sentence_encoder.SentenceEncoder` loads):
  a sentence-transformers module stack ``Transformer -> Pooling -> Normalize -> Dense`` (the Dense module
  holds MLP_M as ``model.safetensors``), so ``SentenceTransformer(folder)`` returns the same vectors as
  :func:`~interlingua.models.load.load_encoder` with ``normalize=False``.
* **spec base** (``use``: not a transformer): the marker names the base spec and ``head/`` holds the
  Dense module. Only specs in :data:`SPEC_BASES` are accepted: the folder may come from a shared registry,
  and a spec such as ``py:module:factory`` would run code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from interlingua.core.confined import lies_inside, path_inside
from interlingua.core.errors import UserError
from interlingua.models.protocol import TextEncoder, l2_normalize

COMPOSED_CONFIG = "interlingua_composed.json"
#: Head activation name -> the torch class path sentence-transformers' Dense config stores.
ACTIVATIONS = {"identity": "torch.nn.modules.linear.Identity", "tanh": "torch.nn.modules.activation.Tanh"}
#: Non-transformer bases a composed folder may name.
SPEC_BASES = ("use",)


class MeaningHead(nn.Module):
    """MLP_M: ``activation(Linear(in_dim -> out_dim))``; ``activation`` in :data:`ACTIVATIONS`."""

    def __init__(self, in_dim: int, out_dim: int, activation: str = "identity"):
        super().__init__()
        if in_dim < 1 or out_dim < 1:
            raise ValueError(f"head dims must be >= 1; got in_dim={in_dim}, out_dim={out_dim}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}; got {activation!r}")
        self.linear = nn.Linear(in_dim, out_dim)
        self.activation_name = activation
        self.activation = nn.Tanh() if activation == "tanh" else nn.Identity()

    @property
    def in_dim(self) -> int:
        return self.linear.in_features

    @property
    def out_dim(self) -> int:
        return self.linear.out_features

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.activation(self.linear(embeddings))

    def save_dense(self, folder: str | Path) -> Path:
        """Write the head as a sentence-transformers ``Dense`` module folder (config + safetensors)."""
        from sentence_transformers.sentence_transformer.modules import Dense

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        dense = Dense(self.in_dim, self.out_dim, bias=True, activation_function=type(self.activation)(),
                      init_weight=self.linear.weight.detach().clone(), init_bias=self.linear.bias.detach().clone())
        dense.save(str(folder))
        return folder

    @classmethod
    def load_dense(cls, folder: str | Path, within: str | Path | None = None) -> "MeaningHead":
        """Read a ``Dense`` folder written by :meth:`save_dense` (safetensors only; the activation must be
        one of :data:`ACTIVATIONS`). ``within``: the model folder ``folder`` is part of; both files must lie inside it
        (:func:`~interlingua.core.confined.lies_inside`: a link out of it is refused)."""
        from safetensors.torch import load_file

        folder = Path(folder)
        if within is not None:
            for name in ("config.json", "model.safetensors"):
                lies_inside(within, folder / name, str(folder / name))
        config = _read_json(folder / "config.json")
        by_path = {path: name for name, path in ACTIVATIONS.items()}
        activation = by_path.get(config.get("activation_function", ""))
        if activation is None:
            raise UserError(f"{folder}: head activation {config.get('activation_function')!r} is not one of "
                            f"{sorted(ACTIVATIONS.values())}")
        weights_file = folder / "model.safetensors"
        if not weights_file.is_file():
            raise UserError(f"{folder}: no model.safetensors (the head weights)")
        weights = load_file(str(weights_file))
        head = cls(int(config["in_features"]), int(config["out_features"]), activation)
        try:
            head.linear.load_state_dict({"weight": weights["linear.weight"], "bias": weights["linear.bias"]})
        except (KeyError, RuntimeError) as err:
            raise UserError(f"{weights_file}: head weights do not match its config ({err})") from err
        return head


class MeaningHeadEncoder(nn.Module):
    """``encode(texts)`` = head(base.encode(texts), L2-normalized), optionally L2-normalized again.

    A :class:`~interlingua.models.protocol.TextEncoder` that ``interlingua embed``, ``interlingua eval`` and
    the ``embed`` operator use like any other encoder."""

    def __init__(self, base: TextEncoder, head: MeaningHead, name: str = ""):
        super().__init__()
        if base.dim != head.in_dim:
            raise ValueError(f"head expects {head.in_dim}-d inputs; base encoder {base.name!r} gives {base.dim}-d")
        self.base = base  # an nn.Module for transformer bases, a plain object for USE
        self.head = head.eval()
        self.name = name or f"meaning-head({base.name})"

    @property
    def dim(self) -> int:
        return self.head.out_dim

    def embed_base(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        from interlingua.models.encode import encode_texts

        return encode_texts(self.base, texts, batch_size=batch_size, normalize=True)

    @torch.no_grad()
    def apply_head(self, base_embeddings: np.ndarray) -> np.ndarray:
        """The head over already computed base embeddings (normalized here, as in training)."""
        x = torch.as_tensor(l2_normalize(base_embeddings), dtype=torch.float32, device=self.head.linear.weight.device)
        return self.head(x).cpu().numpy().astype(np.float32)

    def encode(self, texts: Sequence[str], batch_size: int = 32, normalize: bool = True,
               show_progress: bool = False) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.apply_head(self.embed_base(texts, batch_size))
        return l2_normalize(out).astype(np.float32) if normalize else out

    def save(self, folder: str | Path, *, base_folder: str | Path | None = None, base_spec: str | None = None) -> Path:
        """Write the composed folder. Give ``base_folder`` (a sentence-transformers / our encoder folder,
        copied in) for a transformer base, or ``base_spec`` (one of :data:`SPEC_BASES`) otherwise."""
        return save_composed(self.head, folder, base_folder=base_folder, base_spec=base_spec)

    @classmethod
    def from_folder(cls, folder: str | Path, name: str = "") -> "MeaningHeadEncoder":
        folder = Path(folder)
        stack = _head_stack(folder)
        if stack is not None and not (folder / COMPOSED_CONFIG).is_file():
            # a sentence-transformers save of the stack (e.g. the MLflow flavor) keeps the modules, not our marker
            from interlingua.models.sentence_encoder import SentenceEncoder

            return cls(SentenceEncoder.from_folder(folder), MeaningHead.load_dense(stack, folder), name=name or str(folder))
        marker = _read_json(folder / COMPOSED_CONFIG)
        if not isinstance(marker, dict) or marker.get("kind") != "meaning_head":
            kind = marker.get("kind") if isinstance(marker, dict) else None
            raise UserError(f"{folder / COMPOSED_CONFIG}: kind {kind!r}; expected 'meaning_head'")
        head_folder = path_inside(folder, marker.get("head"), f"{folder / COMPOSED_CONFIG}: \"head\"")
        head = MeaningHead.load_dense(head_folder, folder)
        base_spec = marker.get("base_spec")
        if base_spec is not None:
            if base_spec not in SPEC_BASES:
                raise UserError(f"{folder / COMPOSED_CONFIG}: base_spec {base_spec!r} is not one of {SPEC_BASES}")
            from interlingua.models.resolve import resolve_encoder

            base = resolve_encoder(base_spec)
        else:
            from interlingua.models.sentence_encoder import SentenceEncoder

            base = SentenceEncoder.from_folder(folder)
        return cls(base, head, name=name or str(folder))


def save_composed(head: MeaningHead, folder: str | Path, *, base_folder: str | Path | None = None,
                  base_spec: str | None = None) -> Path:
    """See :meth:`MeaningHeadEncoder.save`."""
    if (base_folder is None) == (base_spec is None):
        raise ValueError("give exactly one of base_folder (transformer base) and base_spec (e.g. 'use')")
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} exists and is not empty; the composed encoder needs a fresh folder")
    if base_spec is not None:
        if base_spec not in SPEC_BASES:
            raise ValueError(f"base_spec must be one of {SPEC_BASES}; got {base_spec!r}")
        head.save_dense(folder / "head")
        _write_json(folder / COMPOSED_CONFIG, {"kind": "meaning_head", "base_spec": base_spec, "head": "head"})
        return folder
    base_folder = Path(base_folder)
    modules = _base_modules(base_folder)
    shutil.copytree(base_folder, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns(COMPOSED_CONFIG, "README.md"))
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    if not modules[-1]["type"].endswith("Normalize"):
        normalize_dir = f"{len(modules)}_Normalize"
        (folder / normalize_dir).mkdir(exist_ok=True)
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": normalize_dir, "type": _type_path(Normalize)})
    dense_dir = f"{len(modules)}_Dense"
    head.save_dense(folder / dense_dir)
    modules.append({"idx": len(modules), "name": str(len(modules)), "path": dense_dir, "type": _type_path(Dense)})
    _write_json(folder / "modules.json", modules)
    _write_json(folder / COMPOSED_CONFIG, {"kind": "meaning_head", "head": dense_dir})
    return folder


def _base_modules(base_folder: Path) -> list[dict]:
    """The base's module list: Transformer + Pooling (+ Normalize); a folder without ``modules.json`` (ours
    before saving, or a plain HF folder) is refused: save it with ``SentenceEncoder.save`` first."""
    path = base_folder / "modules.json"
    if not path.is_file():
        raise ValueError(f"{base_folder} has no modules.json; save the base with SentenceEncoder.save first")
    modules = _read_json(path)
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        raise ValueError(f"{base_folder}: base modules {kinds}; a meaning head composes with Transformer + Pooling "
                         "(+ Normalize) only")
    return modules


def is_composed_folder(folder: str | Path) -> bool:
    """Our marker, or the module stack Transformer -> Pooling -> Normalize -> Dense (a head we can read)."""
    return (Path(folder) / COMPOSED_CONFIG).is_file() or _head_stack(Path(folder)) is not None


def _head_stack(folder: Path) -> Path | None:
    """The Dense module's folder when ``modules.json`` is exactly Transformer, Pooling, Normalize, Dense (its
    ``path`` must lie inside ``folder``: :class:`UserError` otherwise)."""
    path = folder / "modules.json"
    if not path.is_file():
        return None
    try:
        modules = json.loads(path.read_text(encoding="utf-8"))
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    except (json.JSONDecodeError, AttributeError, TypeError):
        return None
    if kinds != ["Transformer", "Pooling", "Normalize", "Dense"]:
        return None
    dense = path_inside(folder, modules[3].get("path"), f"{path}: modules[3].path")
    return dense if (dense / "config.json").is_file() else None


def _type_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__name__}"


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} is missing") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{path} is not valid JSON ({err})") from err


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
