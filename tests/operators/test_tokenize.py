"""Moses tokenization (escaping off), detokenization and CJK character segmentation."""

import numpy as np
import pytest

from interlingua.operators.text.cjk_segmentation import join_cjk, segment_cjk
from interlingua.operators.text.moses_tokenizer import detokenize, tokenize
from interlingua.operators.text.tokenize_operator import TokenizeOperator


def test_moses_splits_punctuation_without_escaping():
    assert tokenize("Tom & Jerry's \"car\".", "en") == ["Tom", "&", "Jerry", "'s", '"', "car", '"', "."]
    assert tokenize("Tom & Jerry", "en", escape=True) == ["Tom", "&amp;", "Jerry"]
    assert tokenize("   ", "en") == []


def test_detokenize_inverts_tokenize_on_plain_text():
    text = "¿Dónde está la casa? Está allí, junto al río."
    assert detokenize(tokenize(text, "es"), "es") == text


def test_chinese_and_japanese_are_segmented_per_character():
    assert tokenize("我爱北京。ABC 12", "zh") == ["我", "爱", "北", "京", "。", "ABC", "12"]
    assert tokenize("東京へ行く", "ja-JP") == ["東", "京", "へ", "行", "く"]
    assert segment_cjk(["x東京y"]) == ["x", "東", "京", "y"]
    assert join_cjk(["東", "京", "Tokyo", "へ"]) == ["東京", "Tokyo", "へ"]
    assert detokenize(tokenize("我爱北京", "zh"), "zh") == "我爱北京"


def test_bad_language_code():
    with pytest.raises(ValueError, match="lang"):
        tokenize("x", "e n")


def test_operator_adds_token_columns():
    op = TokenizeOperator({"en": "en", "zh": "zh"})
    out = op({"en": np.array(["Hi, you."], dtype=object), "zh": np.array(["你好"], dtype=object)})
    assert list(out["en_tokens"]) == ["Hi , you ."] and list(out["zh_tokens"]) == ["你 好"]
    with pytest.raises(ValueError, match="'de'"):
        TokenizeOperator({"de": "de"})({"en": np.array(["x"])})
