"""Mixed training inputs for AMR retrofitting: Algorithm 1 of Cai et al. 2022.

Every slot of a training example (premise, entailment or contradiction of an NLI triple) exists in
English and, translated, in other languages, each with its parsed, linearized AMR graph. For each slot:
draw a language l uniformly; if l is not English the input is the AMR graph parsed from the
translation into l; if l is English the input is the English text or its AMR graph, each with
probability 0.5 (``english_graph_probability``).

A drawn language whose graph is missing (the parser failed) is counted in
:attr:`MixedTrainingSampler.unavailable` and the draw is repeated among the languages that do have one;
the English text is always a valid input.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from interlingua.trainers.objectives.options import require_probability


@dataclass(frozen=True)
class AMRVariant:
    """One language version of a slot: its text and its linearized AMR graph (None if parsing failed)."""

    text: str
    graph: str | None


@dataclass(frozen=True)
class MixedInput:
    """The chosen input of a slot: its language, whether it is a graph, and the string to encode."""

    language: str
    is_graph: bool
    content: str


class MixedTrainingSampler:
    """Chooses the input of every slot per Algorithm 1 (seeded, reproducible).

    Args:
        languages: languages to draw from, English included.
        english: the code of English in ``languages``.
        english_graph_probability: probability that an English draw uses the graph instead of the text.
        seed: seed of the sampler's own random generator.
    """

    def __init__(
        self,
        languages: Sequence[str],
        english: str = "en",
        english_graph_probability: float = 0.5,
        seed: int = 0,
    ) -> None:
        if len(set(languages)) != len(languages) or english not in languages:
            raise ValueError(f"languages must be distinct and include english={english!r}, got {list(languages)}")
        self.languages = list(languages)
        self.english = english
        self.english_graph_probability = require_probability("english_graph_probability", english_graph_probability)
        self.random = random.Random(seed)
        self.unavailable: Counter[tuple[str, str]] = Counter()

    def choose(self, variants: Mapping[str, AMRVariant]) -> MixedInput:
        """The input for one slot from its language versions (``variants[english]`` is required)."""
        if self.english not in variants:
            raise ValueError(f"every slot needs its {self.english!r} version, got languages {sorted(variants)}")
        candidates = list(self.languages)
        while True:
            language = self.random.choice(candidates)
            if language == self.english:
                return self._english_input(variants[language])
            variant = variants.get(language)
            if variant is not None and variant.graph:
                return MixedInput(language, True, variant.graph)
            self.unavailable[(language, "no translation" if variant is None else "no graph")] += 1
            candidates.remove(language)

    def mix_batch(self, slots: Sequence[Mapping[str, AMRVariant]]) -> list[MixedInput]:
        """:meth:`choose` for every slot, in order."""
        return [self.choose(slot) for slot in slots]

    def _english_input(self, variant: AMRVariant) -> MixedInput:
        if self.random.random() < self.english_graph_probability:
            if variant.graph:
                return MixedInput(self.english, True, variant.graph)
            self.unavailable[(self.english, "no graph")] += 1
        return MixedInput(self.english, False, variant.text)


#: The slots of an NLI triple, in the loss's argument order.
TRIPLE_ROLES: tuple[str, ...] = ("premise", "entailment", "contradiction")


def mixed_triples(
    rows: Iterable[Mapping[str, object]],
    languages: Sequence[str],
    english: str = "en",
    english_graph_probability: float = 0.5,
    seed: int = 0,
) -> tuple[list[dict], Counter]:
    """Mixed training triples (Algorithm 1) from the rows of an ``amr-corpus`` version.

    ``rows`` are dicts with the corpus columns ``source_id``, ``role`` (premise / entailment /
    contradiction), ``lang``, ``text`` and ``linearized`` (the linearized graph; empty when the sentence
    was not parsed). Rows are grouped into triples by ``source_id``; each slot's language versions in
    ``languages`` (English is always included) become :class:`AMRVariant` s, and a
    :class:`MixedTrainingSampler` seeded with ``seed`` picks the input of every slot. Triples come out
    sorted by source id (the result does not depend on the row order), each as a dict with the three
    slot strings plus ``source_id`` and, per slot, ``<role>_lang`` and ``<role>_is_graph``.

    A triple whose English premise, entailment or contradiction text is missing is skipped. The counter
    holds ``triples``, ``skipped_missing_english``, ``inputs_text``, ``inputs_graph``,
    ``rows_ignored`` (other languages or roles), ``rows_duplicate`` (a repeated source/role/language:
    the first one is kept) and ``unavailable.<lang>.<reason>`` (the sampler's
    :attr:`~MixedTrainingSampler.unavailable`: a drawn language without translation or graph, redrawn;
    an English graph draw without a graph, given the English text).
    """
    languages = list(dict.fromkeys([english, *languages]))
    counts: Counter = Counter()
    groups: dict[str, dict[str, dict[str, AMRVariant]]] = {}
    for row in rows:
        role, lang = str(row.get("role") or ""), str(row.get("lang") or "")
        if role not in TRIPLE_ROLES or lang not in languages:
            counts["rows_ignored"] += 1
            continue
        slot = groups.setdefault(str(row.get("source_id") or ""), {}).setdefault(role, {})
        if lang in slot:
            counts["rows_duplicate"] += 1
            continue
        graph = str(row.get("linearized") or "").strip()
        slot[lang] = AMRVariant(text=str(row.get("text") or ""), graph=graph or None)

    sampler = MixedTrainingSampler(languages, english=english,
                                   english_graph_probability=english_graph_probability, seed=seed)
    triples: list[dict] = []
    for source_id in sorted(groups):
        slots = groups[source_id]
        if not all(role in slots and english in slots[role] and slots[role][english].text for role in TRIPLE_ROLES):
            counts["skipped_missing_english"] += 1
            continue
        triple: dict = {"source_id": source_id}
        for role in TRIPLE_ROLES:
            chosen = sampler.choose(slots[role])
            triple[role] = chosen.content
            triple[f"{role}_lang"] = chosen.language
            triple[f"{role}_is_graph"] = chosen.is_graph
            counts["inputs_graph" if chosen.is_graph else "inputs_text"] += 1
        triples.append(triple)
    counts["triples"] = len(triples)
    counts.setdefault("skipped_missing_english", 0)
    for (lang, reason), n in sampler.unavailable.items():
        counts[f"unavailable.{lang}.{reason.replace(' ', '_')}"] += n
    return triples, counts
