"""Tiny, offline test models: a 2-layer BERT (hidden 32) with a WordPiece tokenizer over a small
English/Spanish vocabulary, saved as a plain Hugging Face folder.

Usage from a test (``tests/`` is put on ``sys.path`` by ``tests/conftest.py``)::

    from tiny_models import build_tiny_bert

    folder = build_tiny_bert(tmp_path / "bert")          # -> Path with config.json + tokenizer
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

#: Whole words in English and Spanish, plus a few word pieces so unknown words split rather than all
#: becoming [UNK]. Prompts used by tests ("query", ":") are included.
WORDS = [
    "the", "a", "cat", "dog", "sits", "runs", "on", "mat", "house", "is", "big", "small", "red", "blue",
    "i", "you", "we", "see", "like", "water", "bread", "book", "reads", "good", "morning", "night",
    "el", "la", "gato", "perro", "se", "sienta", "corre", "en", "alfombra", "casa", "es", "grande",
    "pequeño", "rojo", "azul", "yo", "tu", "nosotros", "veo", "agua", "pan", "libro", "lee", "buenos",
    "dias", "noche", "query", "passage", ":", ".", ",", "?", "!",
    "##s", "##es", "##a", "##o", "##er", "##ing",
]

HIDDEN_SIZE = 32
NUM_LAYERS = 2
NUM_HEADS = 2


def tiny_vocab() -> dict[str, int]:
    """Token -> id for the tiny WordPiece vocabulary (specials first, ids contiguous)."""
    return {token: i for i, token in enumerate(SPECIAL_TOKENS + WORDS)}


def build_tiny_bert(folder: str | Path, seed: int = 0, *, max_positions: int = 64, lowercase: bool = True) -> Path:
    """Write a randomly initialised tiny BertModel + BERT WordPiece tokenizer to ``folder``.

    Deterministic for a given ``seed``. Returns the folder (a plain HF layout: ``config.json``,
    weights, ``tokenizer.json`` / ``tokenizer_config.json``). ``max_positions``: the model's position embeddings;
    ``lowercase``: whether the tokenizer lowercases (a cased one reads "The" as [UNK]).
    """
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = tiny_vocab()
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=lowercase)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=HIDDEN_SIZE,
        num_hidden_layers=NUM_LAYERS,
        num_attention_heads=NUM_HEADS,
        intermediate_size=4 * HIDDEN_SIZE,
        max_position_embeddings=max_positions,
    )
    model = BertModel(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


#: Sentences of different lengths (so length sorting reorders them), all in the tiny vocabulary.
SENTENCES = [
    "the cat sits on the mat",
    "el gato",
    "we like good bread and water",
    "la casa es grande y roja",
    "dog",
    "buenos dias",
    "i see a small blue book on the big red mat",
]


#: Short English-Spanish pairs in the tiny vocabulary (translation-ranking data for engine and workflow tests).
EN_ES_PAIRS = [
    ("the cat sits on the mat", "el gato se sienta en la alfombra"),
    ("the dog runs", "el perro corre"),
    ("the house is big", "la casa es grande"),
    ("the house is small", "la casa es pequeño"),
    ("i see water", "yo veo agua"),
    ("you like bread", "tu pan"),
    ("we read a book", "nosotros libro"),
    ("good morning", "buenos dias"),
    ("good night", "buenos noche"),
    ("the red book", "el libro rojo"),
    ("the blue mat", "la alfombra azul"),
    ("a small cat", "el gato pequeño"),
    ("a big dog", "el perro grande"),
    ("the cat reads", "el gato lee"),
    ("the dog sits", "el perro se sienta"),
    ("we see the house", "nosotros veo la casa"),
]
