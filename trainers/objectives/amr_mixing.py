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
from collections.abc import Mapping, Sequence
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
