"""Hard negative entities for (sentence, entity) pairs, as in EASE (Nishikawa et al. 2022, §3.1).

For a pair whose entity ``e`` was linked from page ``P``, the *allowed* candidates are the entities of the kept
vocabulary (linked more than ``min_entity_links`` times) that are not ``e`` and not linked anywhere on ``P``
(every article link of the page after normalization and redirect resolution, plus ``P``'s own entity). Then:

1. pick one of ``e``'s Wikidata P31 ("instance of") types at random, among the types that have at least ``k``
   allowed candidates (so a type with nothing left to draw never drops a pair another type could serve);
2. draw ``k`` distinct allowed entities of that type.
3. If no single type has ``k`` allowed candidates but their union does (``k > 1`` only), draw from the union:
   every negative still shares a type with ``e``.

A pair whose entity has no type gets no negatives (``entity_has_no_type``), nor one whose types have fewer than
``k`` allowed candidates in all (``no_negative_candidate``); the caller counts and drops them, as the paper does.

Without any type source (``untyped=True``; recorded in the manifest), the candidates of a pair are the kept
entities of the pair's own language (``language_entities[lang]``: the ease-corpus workflow passes the entities
that language's sentences link, so with titles as ids an English pair never gets a ``dewiki:`` negative and the
not-on-page check compares ids of one language); without ``language_entities``, all kept entities.
Draws are deterministic per pair: the random generator is seeded with ``(seed, pair key)``, so the result does
not depend on how the corpus is sharded or in which order pairs are seen.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping

NO_TYPE = "entity_has_no_type"
NO_CANDIDATE = "no_negative_candidate"
_REJECTION_TRIES_PER_DRAW = 8
_UNTYPED = "\0all"  # the untyped pool's key; one per language: "\0all|<lang>"


class HardNegativeSampler:
    """Draws ``k`` same-type, not-on-page negatives per pair (see module doc)."""

    def __init__(
        self,
        kept_entities: Iterable[str],
        entity_types: Mapping[str, tuple[str, ...]],
        k: int = 1,
        seed: int = 0,
        untyped: bool = False,
        language_entities: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k (negatives per pair) must be a positive integer, got {k!r}")
        self.k = k
        self.seed = seed
        self.untyped = untyped
        kept = sorted(set(kept_entities))
        self._kept = frozenset(kept)
        self._types = entity_types
        by_type: dict[str, list[str]] = {}
        if untyped and language_entities is None:
            by_type[_UNTYPED] = kept
        elif untyped:
            for lang, entities in language_entities.items():
                by_type[f"{_UNTYPED}|{lang}"] = sorted(self._kept.intersection(entities))
        else:
            for entity in kept:
                for entity_type in dict.fromkeys(entity_types.get(entity, ())):
                    by_type.setdefault(entity_type, []).append(entity)
        self._by_type = by_type
        self._by_language = untyped and language_entities is not None
        self._untyped_sets = {key: frozenset(pool) for key, pool in by_type.items()} if untyped else {}

    def candidates_of_type(self, entity_type: str) -> list[str]:
        return self._by_type.get(entity_type, [])

    def _types_of(self, entity: str, lang: str | None) -> tuple[str, ...]:
        if self.untyped:
            return (f"{_UNTYPED}|{lang}",) if self._by_language else (_UNTYPED,)
        return tuple(dict.fromkeys(self._types.get(entity, ())))

    def sample(
        self, entity: str, page_entities: Collection[str], pair_key: str, lang: str | None = None
    ) -> tuple[list[str], str | None]:
        """``(negatives, None)`` or ``([], reason)`` for one pair of language ``lang``; ``pair_key`` identifies the
        pair stably. ``lang`` picks the untyped pool when the sampler was given ``language_entities`` (required then:
        without it no pool would match, and every pair would be dropped as having no candidate)."""
        if self._by_language and lang is None:
            raise ValueError("this sampler draws negatives per language (it was given language_entities): "
                             "pass the pair's language as lang=")
        rng = random.Random(f"{self.seed}|{pair_key}")
        types = self._types_of(entity, lang)
        if not types:
            return [], NO_TYPE
        excluded = {e for e in (*page_entities, entity) if e in self._kept}

        def allowed_count(entity_type: str) -> int:
            pool = self._by_type.get(entity_type, ())
            if not pool:
                return 0
            if self.untyped:
                return len(pool) - len(excluded & self._untyped_sets[entity_type])
            return len(pool) - sum(1 for e in excluded if entity_type in self._types.get(e, ()))

        eligible = [t for t in types if allowed_count(t) >= self.k]
        if eligible:
            pool = self._by_type[eligible[rng.randrange(len(eligible))]]
            return self._draw(pool, excluded, rng), None
        union = sorted({c for t in types for c in self._by_type.get(t, ()) if c not in excluded})
        if len(union) < self.k:
            return [], NO_CANDIDATE
        return rng.sample(union, self.k), None

    def _draw(self, pool: list[str], excluded: set[str], rng: random.Random) -> list[str]:
        """``k`` distinct members of ``pool`` outside ``excluded`` (the caller checked that there are enough)."""
        chosen: list[str] = []
        for _ in range(_REJECTION_TRIES_PER_DRAW * self.k):
            if len(chosen) == self.k:
                return chosen
            candidate = pool[rng.randrange(len(pool))]
            if candidate not in excluded and candidate not in chosen:
                chosen.append(candidate)
        if len(chosen) < self.k:
            remaining = [c for c in pool if c not in excluded and c not in chosen]
            chosen.extend(rng.sample(remaining, self.k - len(chosen)))
        return chosen
