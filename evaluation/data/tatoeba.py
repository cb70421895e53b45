"""Tatoeba test sets as distributed with LASER/XTREME: ``tatoeba.{lang}-eng.{lang}`` and
``tatoeba.{lang}-eng.eng``, one sentence per line, aligned by line."""

from __future__ import annotations

from interlingua.evaluation.data.files import join_url, read_lines
from interlingua.evaluation.data.records import ParallelTexts


def load_tatoeba(directory: str, lang: str) -> ParallelTexts:
    """Source = ``lang`` sentences, target = English. Raises ValueError when the files are not aligned."""
    source = read_lines(join_url(directory, f"tatoeba.{lang}-eng.{lang}"))
    target = read_lines(join_url(directory, f"tatoeba.{lang}-eng.eng"))
    if len(source) != len(target):
        raise ValueError(f"tatoeba {lang}-eng: {len(source)} {lang} lines vs {len(target)} eng lines; files must be aligned")
    return ParallelTexts(source=source, target=target)
