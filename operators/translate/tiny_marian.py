"""Build a tiny, randomly initialized Marian (OPUS-MT layout) model folder, for tests and benchmarks.

No OPUS-MT weights are reachable offline, so the Marian and CTranslate2 backends are exercised on a
model with the exact folder layout of ``Helsinki-NLP/opus-mt-*``: ``source.spm`` / ``target.spm``
(SentencePiece unigram models), ``vocab.json`` (shared vocabulary), ``config.json``,
``generation_config.json`` and weights. Its outputs are meaningless but deterministic for a seed; untrained, it
gives about the same output for every input. ``train_steps`` Adam steps on the builder's English → Spanish pairs
(seeded) make its outputs follow the input, so a test comparing two engines can fail; the ``<pad>`` (decoder start)
embedding row is kept zero, as OPUS-MT's is (Marian starts its decoder from a zero vector; CTranslate2's conversion
assumes it).

``generation_config.forced_eos_token_id`` is cleared: transformers otherwise forces ``</s>`` at
the last step when ``max_length`` is reached, which CTranslate2 does not do; without it greedy
decoding is identical in both engines (the design brief's measured fact).
"""

from __future__ import annotations

import json
from pathlib import Path

_CORPUS = [
    "a man is playing the guitar in the park",
    "the woman is reading a book on the beach",
    "two dogs run in the garden",
    "a child is eating an apple",
    "the old man is walking to the store",
    "un hombre toca la guitarra en el parque",
    "la mujer lee un libro en la playa",
    "dos perros corren en el jardin",
    "un nino come una manzana",
    "el anciano camina a la tienda",
]


def _train_spm(prefix: Path, vocab_size: int) -> None:
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_CORPUS * 20),
        model_prefix=str(prefix),
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        unk_id=1,
        bos_id=-1,
        eos_id=0,
        pad_id=-1,
        unk_piece="<unk>",
        eos_piece="</s>",
        hard_vocab_limit=False,
        minloglevel=2,
    )


def build_tiny_marian(
    folder: str | Path,
    *,
    d_model: int = 32,
    layers: int = 1,
    heads: int = 2,
    ffn_dim: int = 64,
    spm_vocab_size: int = 60,
    seed: int = 0,
    positions: int = 256,
    train_steps: int = 0,
) -> Path:
    """Write a tiny random MarianMTModel + MarianTokenizer to ``folder`` (``positions``: its
    ``max_position_embeddings``; ``train_steps``: Adam steps on the builder's pairs first); returns the folder."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    _train_spm(folder / "spm", spm_vocab_size)
    (folder / "spm.model").replace(folder / "source.spm")
    (folder / "spm.vocab").unlink()
    (folder / "target.spm").write_bytes((folder / "source.spm").read_bytes())
    processor = spm.SentencePieceProcessor(model_file=str(folder / "source.spm"))
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    vocab: dict[str, int] = {}
    for piece in pieces:  # OPUS-MT order: the SentencePiece pieces (</s> = 0, <unk> = 1), then <pad> last
        vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(
        source_spm=str(folder / "source.spm"),
        target_spm=str(folder / "target.spm"),
        vocab=str(folder / "vocab.json"),
        source_lang="en",
        target_lang="es",
        model_max_length=positions,  # = max_position_embeddings: longer inputs are truncated, as OPUS-MT's are at 512
    )
    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn_dim,
        decoder_ffn_dim=ffn_dim,
        max_position_embeddings=positions,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=None,
        share_encoder_decoder_embeddings=True,
        scale_embedding=True,
        activation_function="swish",
        static_position_embeddings=True,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    if train_steps:
        _train(model, tokenizer, train_steps)
    model.generation_config.forced_eos_token_id = None
    model.generation_config.max_length = 64
    model.generation_config.num_beams = 1
    model.generation_config.bad_words_ids = None
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _train(model, tokenizer, steps: int) -> None:
    """``steps`` full-batch Adam steps on the corpus's English → Spanish pairs (the sinusoidal positions frozen, the
    ``<pad>`` row, which the tied output layer's gradient moves, set back to zero after each)."""
    import torch

    half = len(_CORPUS) // 2
    batch = tokenizer(_CORPUS[:half], text_target=_CORPUS[half:], return_tensors="pt", padding=True)
    batch["labels"][batch["labels"] == tokenizer.pad_token_id] = -100
    for positions in (model.model.encoder.embed_positions.weight, model.model.decoder.embed_positions.weight):
        positions.requires_grad_(False)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.get_input_embeddings().weight[model.config.decoder_start_token_id] = 0
    model.eval()
