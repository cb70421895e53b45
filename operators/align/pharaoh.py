"""Pharaoh alignment format: ``"i-j i-j ..."`` with 0-based source index ``i`` and target index ``j``."""

from __future__ import annotations

from collections.abc import Iterable

Link = tuple[int, int]


def format_pharaoh(links: Iterable[Link]) -> str:
    """Links -> ``"0-0 1-2"``, sorted by (source, target) so equal sets give equal strings."""
    return " ".join(f"{i}-{j}" for i, j in sorted(set(links)))


def parse_pharaoh(text: str) -> list[Link]:
    """``"0-0 1-2"`` -> ``[(0, 0), (1, 2)]``; an empty or blank string is the empty alignment.

    Raises ``ValueError`` naming the token when one is not ``<int>-<int>`` with non-negative ints.
    """
    links: list[Link] = []
    for token in text.split():
        left, sep, right = token.partition("-")
        if not sep or not left.isdigit() or not right.isdigit():
            raise ValueError(f"Pharaoh link {token!r} is not of the form i-j with non-negative integers")
        links.append((int(left), int(right)))
    return links
