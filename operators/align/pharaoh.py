"""Pharaoh alignment format: ``"i-j i-j ..."`` with 0-based source index ``i`` and target index ``j``."""

from __future__ import annotations

from collections.abc import Iterable

Link = tuple[int, int]


def target_first(link: Link) -> tuple[int, int]:
    """The sort key of a link by (target, source): the order ``fast_align`` prints a forward alignment in."""
    return link[1], link[0]


def format_pharaoh(links: Iterable[Link], by_target: bool = False) -> str:
    """Links -> ``"0-0 1-2"``, sorted so equal sets give equal strings: by (source, target), atools' order (and
    ``fast_align -r``'s, one link per source word), or with ``by_target`` by (target, source), the order ``fast_align``
    prints a forward alignment in (one link per target word)."""
    links = set(links)
    negative = next((link for link in sorted(links) if link[0] < 0 or link[1] < 0), None)
    if negative is not None:
        raise ValueError(f"link {negative} has a negative index; Pharaoh indices are 0-based positions")
    return " ".join(f"{i}-{j}" for i, j in sorted(links, key=target_first if by_target else None))


def parse_pharaoh(text: str) -> list[Link]:
    """``"0-0 1-2"`` -> ``[(0, 0), (1, 2)]``; an empty or blank string is the empty alignment.

    Raises ``ValueError`` naming the token when one is not ``<int>-<int>`` with non-negative ints written in ASCII
    digits (``str.isdigit`` also takes ``'１'``, ``'٣'`` and ``'²'``, which atools and fast_align do not read).
    """
    links: list[Link] = []
    for token in text.split():
        left, sep, right = token.partition("-")
        if not sep or not (left.isascii() and left.isdigit() and right.isascii() and right.isdigit()):
            raise ValueError(f"Pharaoh link {token!r} is not of the form i-j with non-negative integers")
        links.append((int(left), int(right)))
    return links
