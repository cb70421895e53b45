"""Segmentation for scripts written without spaces (Chinese, Japanese).

Moses' tokenizer splits on spaces and punctuation only, so a Chinese or Japanese sentence would
come out as a few very long "words". Here every character of a CJK run becomes its own token:
Han ideographs (CJK Unified Ideographs, extensions A-F and compatibility ideographs), Hiragana,
Katakana (including the half-width forms) and CJK punctuation. Runs of other characters (Latin
words, digits) inside the sentence stay whole. Character-level segmentation needs no dictionary,
is deterministic and is what multilingual encoders' tokenizers do for Han (BERT's
``_tokenize_chinese_chars``); a dictionary segmenter (jieba, MeCab) would give longer words and is
not used. Korean is written with spaces and is left to Moses.

Detokenization joins adjacent CJK characters without a space.
"""

from __future__ import annotations

import re

#: Languages whose text gets character-level CJK segmentation.
CJK_LANGUAGES = frozenset({"zh", "ja"})

_CJK_RANGES = (
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff00-\uffef"  # half-width and full-width forms
    "\U00020000-\U0002ebef"  # CJK extensions B-F
)
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
_CJK_OR_OTHER_RUN = re.compile(f"[{_CJK_RANGES}]|[^{_CJK_RANGES}]+")


def is_cjk(char: str) -> bool:
    """True for one character of a CJK range listed in the module docstring."""
    return bool(_CJK_CHAR.fullmatch(char))


def segment_cjk(tokens: list[str]) -> list[str]:
    """Split each token into single CJK characters and whole non-CJK runs."""
    out: list[str] = []
    for token in tokens:
        out.extend(_CJK_OR_OTHER_RUN.findall(token))
    return out


def join_cjk(tokens: list[str]) -> list[str]:
    """Inverse of :func:`segment_cjk` for detokenization: glue runs of CJK-character tokens."""
    out: list[str] = []
    for token in tokens:
        if out and token and is_cjk(token[0]) and out[-1] and is_cjk(out[-1][-1]):
            out[-1] += token
        else:
            out.append(token)
    return out
