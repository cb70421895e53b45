"""Hard negative entities for (sentence, entity) pairs, as in EASE (Nishikawa et al. 2022, §3.1).

For a pair whose entity ``e`` was linked from page ``P``: pick one of ``e``'s Wikidata P31 ("instance of") types
at random, then draw ``k`` distinct entities of that type that are in the kept vocabulary, are not ``e`` and are
not linked anywhere on ``P`` (nor ``P``'s own entity). A pair whose entity has no type, or whose drawn type has
fewer than ``k`` candidates, gets no negatives; the caller counts and drops it, as the paper does.

Without any type source (``untyped=True``), the candidates are all kept entities (recorded in the manifest).
Draws are deterministic per pair: the random generator is seeded with ``(seed, pair key)``, so the result does
not depend on how the corpus is sharded or in which order pairs are seen.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping

NO_TYPE = "entity_has_no_type"
NO_CANDIDATE = "no_negative_candidate"
_REJECTION_TRIES_PER_DRAW = 8


class HardNegativeSampler:
    """Draws ``k`` same-type, not-on-page negatives per pair (see module doc)."""

    def __init__(
        self,
        kept_entities: Iterable[str],
        entity_types: Mapping[str, tuple[str, ...]],
        k: int = 1,
        seed: int = 0,
        untyped: bool = False,
    ) -> None:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k (negatives per pair) must be a positive integer, got {k!r}")
        self.k = k
        self.seed = seed
        self.untyped = untyped
        kept = sorted(set(kept_entities))
        self._all = kept
        self._types = entity_types
        by_type: dict[str, list[str]] = {}
        for entity in kept:
            for entity_type in entity_types.get(entity, ()):
                by_type.setdefault(entity_type, []).append(entity)
        self._by_type = by_type

    def candidates_of_type(self, entity_type: str) -> list[str]:
        return self._by_type.get(entity_type, [])

    def sample(self, entity: str, page_entities: Collection[str], pair_key: str) -> tuple[list[str], str | None]:
        """``(negatives, None)`` or ``([], reason)`` for one pair; ``pair_key`` identifies the pair stably."""
        rng = random.Random(f"{self.seed}|{pair_key}")
        if self.untyped:
            pool = self._all
        else:
            types = self._types.get(entity, ())
            if not types:
                return [], NO_TYPE
            pool = self._by_type.get(types[rng.randrange(len(types))], [])

        def allowed(candidate: str) -> bool:
            return candidate != entity and candidate not in page_entities

        chosen: list[str] = []
        for _ in range(_REJECTION_TRIES_PER_DRAW * self.k):
            if len(chosen) == self.k or not pool:
                break
            candidate = pool[rng.randrange(len(pool))]
            if allowed(candidate) and candidate not in chosen:
                chosen.append(candidate)
        if len(chosen) < self.k:
            remaining = [c for c in pool if allowed(c) and c not in chosen]
            need = self.k - len(chosen)
            if len(remaining) < need:
                return [], NO_CANDIDATE
            chosen.extend(rng.sample(remaining, need))
        return chosen, None
