"""Moses-style tokenization (sacremoses), with CJK segmentation for zh / ja.

Moses' ``tokenizer.perl`` escapes XML-special characters (``&`` -> ``&amp;``) by default; word
alignment and subword mapping need the original characters, so escaping is *off* by default here.
Languages in :data:`~interlingua.operators.text.cjk_segmentation.CJK_LANGUAGES` are Moses-tokenized
and then segmented character by character in CJK runs (see that module).
"""

from __future__ import annotations

from functools import lru_cache

from interlingua.operators.text.cjk_segmentation import CJK_LANGUAGES, join_cjk, segment_cjk


def _check_language(lang: str) -> str:
    if not isinstance(lang, str) or not lang.strip() or not lang.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"lang must be a language code such as 'en' or 'zh', got {lang!r}")
    return lang.strip().lower().split("-")[0].split("_")[0]


@lru_cache(maxsize=64)
def _moses_tokenizer(lang: str):
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang=lang)


@lru_cache(maxsize=64)
def _moses_detokenizer(lang: str):
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang=lang)


def tokenize(text: str, lang: str, *, escape: bool = False, aggressive_dash_splits: bool = False) -> list[str]:
    """``text`` -> tokens for language ``lang`` (ISO 639-1 code; region suffixes are ignored)."""
    lang = _check_language(lang)
    if not text.strip():
        return []
    tokens = _moses_tokenizer(lang).tokenize(text, escape=escape, aggressive_dash_splits=aggressive_dash_splits)
    return segment_cjk(tokens) if lang in CJK_LANGUAGES else tokens


def detokenize(tokens: list[str], lang: str, *, unescape: bool = False) -> str:
    """Tokens -> text (Moses detokenizer; CJK characters are joined without spaces for zh / ja)."""
    lang = _check_language(lang)
    if lang in CJK_LANGUAGES:
        tokens = join_cjk(tokens)
    return _moses_detokenizer(lang).detokenize(tokens, unescape=unescape)
