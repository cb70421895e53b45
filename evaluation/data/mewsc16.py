"""MewsC-16 (Nishikawa et al. 2022): per language ``{lang}_sentences.txt`` and ``{lang}_categories.txt``,
line-aligned (one Wikinews topic sentence and its category per line).

Read as the reference evaluation (EASE ``downstreams/text-clustering``) does: sentences and categories are
stripped of surrounding whitespace and lines whose sentence is then empty are left out (``skipped``);
the category of every other line is kept as it is, so k = the number of distinct categories kept."""

from __future__ import annotations

from interlingua.evaluation.data.files import join_url, read_lines
from interlingua.evaluation.data.records import LabelledTexts


def load_mewsc16(directory: str, lang: str) -> LabelledTexts:
    """Texts and categories of one language. ValueError when the two files differ in line count."""
    sentences_url = join_url(directory, f"{lang}_sentences.txt")
    categories_url = join_url(directory, f"{lang}_categories.txt")
    sentences, categories = read_lines(sentences_url), read_lines(categories_url)
    if len(sentences) != len(categories):
        raise ValueError(f"MewsC-16 {lang}: {len(sentences)} lines in {sentences_url} vs {len(categories)} in "
                         f"{categories_url}; files must be line-aligned")
    data = LabelledTexts()
    for number, (text, label) in enumerate(zip(sentences, categories), start=1):
        if not text.strip():
            data.skipped.append((f"{sentences_url}:{number}", "empty sentence"))
        else:
            data.texts.append(text.strip())
            data.labels.append(label.strip())
    return data
