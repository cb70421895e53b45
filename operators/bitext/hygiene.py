"""Bitext hygiene: deterministic sampling, empty-line, length-ratio and duplicate filters, counted.

Each filter has a name; :class:`BitextHygiene` counts the pairs every filter removes and keeps a
reject record per removed pair, so the corpus manifest can state how many pairs each step took.
Order: ``empty`` -> ``sample`` -> ``length_ratio`` -> ``duplicate``.

- ``sample``: keep a pair when ``u < fraction``, ``u`` a uniform number derived from a BLAKE2b hash
  of (seed, language pair, source, target). The decision is a pure function of the pair, so it is
  the same on any worker, in any order and at any shard size (Tiyajamorn et al. 2021 used 5%).
- ``length_ratio``: reject when max(len) / min(len) in whitespace tokens exceeds ``max_length_ratio``
  (Moses ``clean-corpus-n.perl`` applies ratio 9).
- ``duplicate``: exact (source, target) repeats after whitespace normalization; the first is kept.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class HygieneSettings:
    sample_fraction: float = 1.0
    seed: int = 0
    max_length_ratio: float = 9.0
    deduplicate: bool = True

    def __post_init__(self) -> None:
        if not 0.0 < self.sample_fraction <= 1.0:
            raise ValueError(f"sample_fraction must be in (0, 1], got {self.sample_fraction}")
        if not self.max_length_ratio >= 1.0:
            raise ValueError(f"max_length_ratio must be >= 1, got {self.max_length_ratio}")


def sample_unit(seed: int, pair: str, src: str, tgt: str) -> float:
    """A number in [0, 1) fixed by (seed, language pair, source, target)."""
    digest = hashlib.blake2b(f"{seed}\x1f{pair}\x1f{src}\x1f{tgt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


@dataclass
class BitextHygiene:
    """Streaming filter for one language pair; ``counts`` and ``rejects`` fill as pairs pass."""

    settings: HygieneSettings
    language_pair: str
    counts: Counter = field(default_factory=Counter)
    rejects: list[dict] = field(default_factory=list)
    _seen: set[bytes] = field(default_factory=set, repr=False)

    def filter(self, pairs: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        """Yield the pairs that pass every filter, in input order."""
        for number, (src, tgt) in enumerate(pairs):
            self.counts["input"] += 1
            reason = self._reason(src, tgt)
            if reason is None:
                self.counts["kept"] += 1
                yield src, tgt
            else:
                self.counts[reason] += 1
                if reason != "sampled_out":
                    self.rejects.append({"index": number, "pair": self.language_pair, "reason": reason, "src": src, "tgt": tgt})

    def mark_seen(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Count ``pairs`` as already seen (not as input): a later equal pair is a duplicate.
        Used by an incremental refresh, whose new inputs are deduplicated against the pairs it keeps."""
        if self.settings.deduplicate:
            self._seen.update(_pair_key(src.split(), tgt.split()) for src, tgt in pairs)

    def _reason(self, src: str, tgt: str) -> str | None:
        src_tokens, tgt_tokens = src.split(), tgt.split()
        if not src_tokens or not tgt_tokens:
            return "empty"
        s = self.settings
        if s.sample_fraction < 1.0 and sample_unit(s.seed, self.language_pair, src, tgt) >= s.sample_fraction:
            return "sampled_out"
        longer, shorter = max(len(src_tokens), len(tgt_tokens)), min(len(src_tokens), len(tgt_tokens))
        if longer / shorter > s.max_length_ratio:
            return "length_ratio"
        if s.deduplicate:
            key = _pair_key(src_tokens, tgt_tokens)
            if key in self._seen:
                return "duplicate"
            self._seen.add(key)
        return None


def _pair_key(src_tokens: list[str], tgt_tokens: list[str]) -> bytes:
    return hashlib.blake2b(f"{' '.join(src_tokens)}\x1f{' '.join(tgt_tokens)}".encode(), digest_size=16).digest()
