"""Sentence = average of its word vectors (the ABSent / classic baseline).

Vectors come from a word2vec text or binary file (read by gensim's parser) or a spaCy model
with vectors (e.g. ``fr_core_news_md``). Tokens are lower-cased word characters (``\\w+``); a token is
looked up as-is, then lower-cased. Texts with no known token embed to the zero vector."""

from __future__ import annotations

import re
from typing import Callable, Sequence

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """The word tokens (``\\w+`` runs) of ``text``."""
    return _TOKEN.findall(text)


class AveragedWordVectorEncoder:
    """``lookup(word) -> vector or None`` averaged over the tokens of each text. ``identity``: what the embedding cache
    keys the encoder by (:func:`~interlingua.models.identity.encoder_identity`): the content identity of the vectors'
    file; None (keyed by ``name``) where the name says it (an installed spaCy model)."""

    def __init__(self, lookup: Callable[[str], np.ndarray | None], dim: int, name: str, identity: str | None = None):
        if dim < 1:
            raise ValueError(f"dim must be >= 1; got {dim}")
        self._lookup, self.dim, self.name, self.identity = lookup, dim, name, identity

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors = [v for v in (self._word_vector(t) for t in _TOKEN.findall(text)) if v is not None]
            if vectors:
                out[row] = np.mean(vectors, axis=0)
        return out

    def _word_vector(self, token: str) -> np.ndarray | None:
        vector = self._lookup(token)
        return vector if vector is not None else self._lookup(token.lower())


def from_keyed_vectors(path: str) -> AveragedWordVectorEncoder:
    """Load word vectors: ``.bin`` (word2vec binary) or word2vec text. gensim's own ``.kv`` files (``KeyedVectors.save``)
    are pickles and are refused: they can run code when loaded. Its ``identity`` is the file's content
    (:func:`~interlingua.models.identity.model_identity`, hashed before it is read), so a file rewritten in place is
    not served the vectors cached for its old bytes, whatever path names it."""
    from gensim.models import KeyedVectors

    from interlingua.core.safe_load import refuse_pickle_format
    from interlingua.models.identity import model_identity

    refuse_pickle_format(path, "convert once with KeyedVectors.load(p).save_word2vec_format('vectors.bin', "
                               "binary=True) and pass the .bin")
    spec = f"wordvec:{path}"
    identity = model_identity(spec)
    vectors = KeyedVectors.load_word2vec_format(path, binary=path.endswith(".bin"))
    return AveragedWordVectorEncoder(lambda w: vectors[w] if w in vectors.key_to_index else None, vectors.vector_size,
                                     spec, identity)


def from_spacy(model_name: str) -> AveragedWordVectorEncoder:
    """Use the static vectors table of an installed spaCy model (e.g. ``fr_core_news_md``)."""
    import spacy

    vocab = spacy.load(model_name, exclude=["tagger", "parser", "ner", "lemmatizer", "attribute_ruler", "morphologizer", "senter"]).vocab
    if vocab.vectors.shape[0] == 0:
        raise ValueError(f"spaCy model {model_name!r} has no word vectors")

    def lookup(word: str) -> np.ndarray | None:
        key = vocab.strings[word] if word in vocab.strings else None
        return np.asarray(vocab.vectors[key]) if key is not None and key in vocab.vectors else None

    return AveragedWordVectorEncoder(lookup, vocab.vectors.shape[1], f"spacy:{model_name}")
