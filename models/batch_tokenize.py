"""Tokenize a batch of texts into padded tensors straight from a fast (Rust) tokenizer.

``tokenizer(texts, padding=True, truncation=True, max_length=n, return_tensors="pt")`` runs the Rust encoder
(which releases the GIL and uses several threads) and then converts every row in Python: a dict per row, lists
of ids, a list per field, ``torch.tensor`` of nested lists. That conversion holds the GIL, so while a training
step's views are built in the prefetch thread it slows the main thread that launches the step's kernels.
:func:`batch_tokenize` sets the same truncation and padding on the backend (with the tokenizer's own method, as
its call does), encodes, and builds each field with one ``numpy`` array. The ids, attention mask and token type
ids are the same as the call's (tested on XLM-R and BERT tokenizers); a slow (Python) tokenizer, or a transformers
version without the method, takes the call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

_FIELDS = (("input_ids", "ids"), ("attention_mask", "attention_mask"), ("token_type_ids", "type_ids"))
_KEYS = frozenset(key for key, _ in _FIELDS)


def batch_tokenize(tokenizer, texts: Sequence[str], max_length: int) -> dict[str, torch.Tensor]:
    """``input_ids``, ``attention_mask`` (and ``token_type_ids`` where the model takes them) as int64 tensors,
    padded to the longest row and truncated to ``max_length`` tokens: what the tokenizer's own call returns."""
    texts = list(texts)
    encodings = _rust_encode(tokenizer, texts, max_length) if texts else None
    if encodings is None:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        return {key: value for key, value in batch.items() if key in _KEYS}
    names = set(tokenizer.model_input_names) | {"input_ids"}
    return {key: torch.from_numpy(np.array([getattr(e, attribute) for e in encodings], dtype=np.int64))
            for key, attribute in _FIELDS if key in names}


def _rust_encode(tokenizer, texts: list[str], max_length: int):
    """The backend's encodings under the call's settings, or None where this tokenizer has no Rust backend."""
    backend = getattr(tokenizer, "_tokenizer", None)
    configure = getattr(tokenizer, "set_truncation_and_padding", None)
    if not getattr(tokenizer, "is_fast", False) or backend is None or configure is None:
        return None
    if tokenizer.pad_token is None:  # the call raises its own error for padding without a pad token
        return None
    from transformers.tokenization_utils_base import TruncationStrategy
    from transformers.utils import PaddingStrategy

    configure(padding_strategy=PaddingStrategy.LONGEST, truncation_strategy=TruncationStrategy.LONGEST_FIRST,
              max_length=max_length, stride=0, pad_to_multiple_of=None, padding_side=None)
    split = bool(getattr(tokenizer, "split_special_tokens", False))
    if backend.encode_special_tokens != split:
        backend.encode_special_tokens = split
    return backend.encode_batch_fast(texts, add_special_tokens=True)
