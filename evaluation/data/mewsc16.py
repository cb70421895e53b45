"""MewsC-16 (Nishikawa et al. 2022): per language ``{lang}_sentences.txt`` and ``{lang}_categories.txt``,
line-aligned (one Wikinews topic sentence and its category per line)."""

from __future__ import annotations

from interlingua.evaluation.data.files import join_url, read_lines
from interlingua.evaluation.data.records import LabelledTexts


def load_mewsc16(directory: str, lang: str) -> LabelledTexts:
    """Texts and categories of one language; lines with an empty sentence or category are rejected."""
    sentences_url = join_url(directory, f"{lang}_sentences.txt")
    sentences = read_lines(sentences_url)
    categories = read_lines(join_url(directory, f"{lang}_categories.txt"))
    if len(sentences) != len(categories):
        raise ValueError(f"MewsC-16 {lang}: {len(sentences)} sentences vs {len(categories)} categories; files must be aligned")
    data = LabelledTexts()
    for number, (text, label) in enumerate(zip(sentences, categories), start=1):
        if not text.strip() or not label.strip():
            data.rejected.append((f"{sentences_url}:{number}", "empty sentence or category"))
        else:
            data.texts.append(text)
            data.labels.append(label.strip())
    return data
