"""Deterministic data splits shared by training and evaluation.

``bible_heldout_split`` decides, from a verse id alone, whether a verse is held out for evaluation,
so the training quickstart can exclude exactly the verses the benchmark pack tests on.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

import numpy as np

BIBLE_HELDOUT_SALT = "interlingua-bible-heldout-v1"
BIBLE_HELDOUT_BUCKETS = 31  # ~1/31 of the 31k verses, i.e. ~1000 held-out verses


def _bucket(verse_id: str, salt: str, buckets: int) -> int:
    digest = hashlib.sha256(f"{salt}:{verse_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % buckets


def bible_heldout_split(ids: Iterable[str]) -> np.ndarray:
    """Boolean mask, True for held-out (test) verses: sha256("<salt>:<id>") mod 31 == 0.

    Deterministic per id (independent of order and of the other ids); ~3.2% of the verses,
    about 1000 of the 31k KJV/Spanish verse pairs."""
    return np.array([_bucket(str(i), BIBLE_HELDOUT_SALT, BIBLE_HELDOUT_BUCKETS) == 0 for i in ids], dtype=bool)
