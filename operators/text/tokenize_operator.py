"""Ray Data operator: tokenize text columns, one language per column."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from interlingua.operators.base import Batch, Operator
from interlingua.operators.text.moses_tokenizer import tokenize


class TokenizeOperator(Operator):
    """Adds ``<column>_tokens`` (space-joined tokens) for each ``column -> lang`` in ``columns``.

    Input batch: the text columns. Output: the same batch plus one token column per text column;
    an empty or blank text gives an empty token string.
    """

    num_cpus: ClassVar[float] = 1.0
    concurrency: ClassVar[int | tuple[int, int]] = (1, 4)
    batch_size: ClassVar[int | None] = 1024
    name: ClassVar[str] = "tokenize"

    def __init__(self, columns: dict[str, str], escape: bool = False):
        if not columns:
            raise ValueError("columns must map at least one text column to its language, got {}")
        self.columns = dict(columns)
        self.escape = escape

    def __call__(self, batch: Batch) -> Batch:
        for column, lang in self.columns.items():
            if column not in batch:
                raise ValueError(f"column {column!r} is not in the batch; columns are {sorted(batch)}")
            batch[f"{column}_tokens"] = np.array(
                [" ".join(tokenize(str(text), lang, escape=self.escape)) for text in batch[column]], dtype=object
            )
        return batch
