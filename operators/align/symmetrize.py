"""Symmetrization of two directional word alignments, following fast_align's ``atools``.

Both inputs are sets of ``(i, j)`` links in source-target order: ``forward`` from the model that
predicts target words from source words (fast_align default), ``reverse`` from the model run with
``-r`` (its links already flipped back to source-target order, as fast_align prints them).

Heuristics (Koehn et al. 2003, "Statistical Phrase-Based Translation"; Och & Ney 2003), with the
exact procedure of ``atools -c <name>`` (Dyer et al. 2013, fast_align ``src/atools.cc``):

- ``intersect``: links in both directions. ``union``: links in either.
- ``grow-diag``: start from the intersection. Candidates are the union links not yet chosen,
  visited in ascending ``(i, j)`` order. A candidate is added when at least one of its words is
  still unaligned and one of its 8 neighbours (horizontal, vertical, diagonal) is already chosen.
  Additions take effect immediately, so later candidates of the same sweep see them; sweeps
  repeat until one adds nothing.
- ``grow-diag-final``: ``grow-diag``, then one sweep over the forward links and one over the
  reverse links (each in ascending ``(i, j)`` order) adding a link when its source word *or* its
  target word is unaligned.
- ``grow-diag-final-and``: as ``grow-diag-final`` but a final link is added only when *both* its
  source word and its target word are unaligned.

The visiting order matters when candidates compete for the same unaligned word; it is part of the
definition here, so results equal ``atools`` link for link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from interlingua.operators.align.pharaoh import Link

SYMMETRIZATIONS = ("intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")

_NEIGHBOURS_8 = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1))


class _GrowingAlignment:
    """The alignment being grown plus which source / target positions it covers."""

    def __init__(self, start: Iterable[Link]):
        self.links: set[Link] = set()
        self.aligned_src: set[int] = set()
        self.aligned_tgt: set[int] = set()
        for link in start:
            self.add(link)

    def add(self, link: Link) -> None:
        self.links.add(link)
        self.aligned_src.add(link[0])
        self.aligned_tgt.add(link[1])

    def neither_aligned(self, link: Link) -> bool:
        return link[0] not in self.aligned_src and link[1] not in self.aligned_tgt

    def one_or_both_unaligned(self, link: Link) -> bool:
        return link[0] not in self.aligned_src or link[1] not in self.aligned_tgt

    def has_chosen_neighbour(self, link: Link) -> bool:
        i, j = link
        return any((i + di, j + dj) in self.links for di, dj in _NEIGHBOURS_8)

    def grow_diag(self, candidates: Iterable[Link]) -> None:
        """Repeated sweeps over ``candidates`` until a sweep adds nothing (atools' ``Grow``)."""
        pending = sorted(set(candidates) - self.links)
        while pending:
            added: list[Link] = []
            for link in pending:
                if self.one_or_both_unaligned(link) and self.has_chosen_neighbour(link):
                    self.add(link)
                    added.append(link)
            if not added:
                return
            chosen = set(added)
            pending = [link for link in pending if link not in chosen]

    def final(self, directional: Iterable[Link], accept: Callable[[Link], bool]) -> None:
        """One sweep over a directional alignment in ascending order (atools' idempotent ``Grow``)."""
        for link in sorted(set(directional)):
            if link not in self.links and accept(link):
                self.add(link)


def symmetrize(forward: Iterable[Link], reverse: Iterable[Link], method: str = "grow-diag-final-and") -> set[Link]:
    """Combine ``forward`` and ``reverse`` links with ``method`` (one of :data:`SYMMETRIZATIONS`).

    Returns the set of ``(source index, target index)`` links.
    """
    forward_set, reverse_set = set(forward), set(reverse)
    if method == "intersect":
        return forward_set & reverse_set
    if method == "union":
        return forward_set | reverse_set
    if method not in SYMMETRIZATIONS:
        raise ValueError(f"symmetrization method {method!r} is not supported; expected one of {', '.join(SYMMETRIZATIONS)}")
    grown = _GrowingAlignment(forward_set & reverse_set)
    grown.grow_diag(forward_set | reverse_set)
    if method == "grow-diag-final":
        grown.final(forward_set, grown.one_or_both_unaligned)
        grown.final(reverse_set, grown.one_or_both_unaligned)
    elif method == "grow-diag-final-and":
        grown.final(forward_set, grown.neither_aligned)
        grown.final(reverse_set, grown.neither_aligned)
    return grown.links
