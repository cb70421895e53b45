"""Deterministic sampling caps on (sentence, entity) pairs: at most ``per_entity`` pairs per entity (EASE: 10k)
and at most ``per_language`` pairs per language (EASE multilingual: 50k).

Every pair gets a priority: the first 8 bytes of BLAKE2b over ``(seed, pair key)``. Pairs are kept in priority
order: first the ``per_entity`` lowest priorities of each entity, then, among those, the ``per_language`` lowest
of each language. The result depends only on the seed and the pair keys (not on sharding or row order).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd


def pair_priority(seed: int, pair_key: str) -> int:
    """A stable pseudo-random 63-bit priority for one pair."""
    digest = hashlib.blake2b(f"{seed}|{pair_key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def capped_mask(
    langs: np.ndarray, entities: np.ndarray, priorities: np.ndarray, per_entity: int, per_language: int
) -> np.ndarray:
    """Boolean mask (same order as the inputs) of the pairs kept under both caps."""
    for name, value in (("per_entity", per_entity), ("per_language", per_language)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} cap must be a positive integer, got {value!r}")
    frame = pd.DataFrame({"lang": langs, "entity": entities, "priority": priorities})
    frame = frame.sort_values("priority", kind="stable")
    within_entity = frame.groupby("entity", sort=False).cumcount() < per_entity
    survivors = frame[within_entity]
    within_language = survivors.groupby("lang", sort=False).cumcount() < per_language
    mask = np.zeros(len(langs), dtype=bool)
    mask[survivors.index[within_language.to_numpy()]] = True
    return mask
