"""The fast tokenizer path gives AutoTokenizer's ids (tiny model, and the real e5 asset when built)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_models import SENTENCES, build_tiny_bert

from interlingua.models.transformer_files import load_tokenizer

E5 = Path(".interlingua/assets/e5-small")


def _same_ids(folder: Path, texts: list[str]) -> None:
    from transformers import AutoTokenizer

    reference, fast = AutoTokenizer.from_pretrained(folder), load_tokenizer(folder)
    for max_length in (6, 64):
        a = reference(texts, padding=True, truncation=True, max_length=max_length)
        b = fast(texts, padding=True, truncation=True, max_length=max_length)
        assert a["input_ids"] == b["input_ids"] and a["attention_mask"] == b["attention_mask"]
    assert fast.pad_token_id == reference.pad_token_id


def test_tiny_bert_tokenizer_ids_match(tmp_path):
    _same_ids(build_tiny_bert(tmp_path / "m"), [*SENTENCES, "", "UPPER case  spaces"])


@pytest.mark.skipif(not (E5 / "tokenizer.json").is_file(), reason="e5-small asset not built (interlingua assets)")
def test_e5_tokenizer_ids_match():
    _same_ids(E5, ["query: The Lord is my shepherd.", "Jehová es mi pastor.", "日本語のテキスト <mask>", ""])
