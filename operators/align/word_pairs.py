"""Word pairs for explicit-alignment objectives (Wu & Dredze 2020, "Do Explicit Alignments Robustly
Improve Multilingual Encoders?", section 3).

From a symmetrized alignment, in the order of the authors' released code (``Bitext._process_align``
in shijie-wu/crosslingual-nlp): first drop links whose two words are identical strings (copied
names, numbers and punctuation would make alignment trivially easy), *then* keep only the
one-to-one links among the links left (the source word has no other remaining link and the target
word has no other remaining link). So a word whose only other link was to an identical word keeps
its link: ``Paris is big`` / ``Paris Parisienne grande`` with links 0-0, 0-1, 2-2 keeps 0-1 and
2-2. Each kept word is represented by its *first* subword: the position of that subword in the
encoder's input ids (special tokens included, so positions index the encoder's output directly).

Every link that is not kept is counted under a reason in :class:`WordPairStats`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from interlingua.operators.align.pharaoh import Link


@dataclass
class WordPairStats:
    """Links seen and links dropped, by reason."""

    links: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, int]:
        return {"links": self.links, "kept": self.kept, **{f"dropped_{k}": v for k, v in sorted(self.dropped.items())}}


def one_to_one_links(links: Iterable[Link]) -> list[Link]:
    """Links whose source index and target index each occur in exactly one link, sorted."""
    links = set(links)
    src_counts = Counter(i for i, _ in links)
    tgt_counts = Counter(j for _, j in links)
    return sorted((i, j) for i, j in links if src_counts[i] == 1 and tgt_counts[j] == 1)


def first_subword_positions(tokenizer, words: Sequence[str], max_length: int | None = None) -> list[int | None]:
    """Position of each word's first subword in ``tokenizer``'s input ids (``None``: no subword).

    ``tokenizer`` is a Hugging Face *fast* tokenizer (it must report ``word_ids``); the words are
    encoded as one pre-split sequence with special tokens, truncated to ``max_length`` if given.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"tokenizer must be a fast (Rust) Hugging Face tokenizer reporting word_ids, got {type(tokenizer).__name__}")
    if not words:
        return []
    encoding = tokenizer(list(words), is_split_into_words=True, add_special_tokens=True, truncation=max_length is not None, max_length=max_length)
    positions: list[int | None] = [None] * len(words)
    for position, word in enumerate(encoding.word_ids()):
        if word is not None and positions[word] is None:
            positions[word] = position
    return positions


def word_pairs(
    src_words: Sequence[str],
    tgt_words: Sequence[str],
    links: Iterable[Link],
    src_positions: Sequence[int | None],
    tgt_positions: Sequence[int | None],
    stats: WordPairStats | None = None,
) -> list[tuple[int, int]]:
    """(source first-subword position, target first-subword position) for each kept link.

    ``src_positions`` / ``tgt_positions`` come from :func:`first_subword_positions`. Steps, each
    counting the links it drops under its reason: ``out_of_range`` (link index negative or beyond the sentence;
    such a link takes no part in the later steps), ``identical`` (same string on both sides), then
    ``not_one_to_one`` (computed over the links the first two steps left), then ``no_subword``
    (word lost to truncation or produced no subword).
    """
    stats = stats if stats is not None else WordPairStats()
    links = set(links)
    stats.links += len(links)
    different: list[Link] = []
    for i, j in links:
        if not (0 <= i < len(src_words) and 0 <= j < len(tgt_words)):  # a negative index would count from the end
            stats.dropped["out_of_range"] += 1
        elif src_words[i] == tgt_words[j]:
            stats.dropped["identical"] += 1
        else:
            different.append((i, j))
    kept_links = one_to_one_links(different)
    stats.dropped["not_one_to_one"] += len(different) - len(kept_links)
    pairs: list[tuple[int, int]] = []
    for i, j in kept_links:
        if src_positions[i] is None or tgt_positions[j] is None:
            stats.dropped["no_subword"] += 1
        else:
            pairs.append((src_positions[i], tgt_positions[j]))
    stats.kept += len(pairs)
    return pairs
