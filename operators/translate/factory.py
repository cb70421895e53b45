"""Build the translator for one language pair from its :class:`BackendSpec`."""

from __future__ import annotations

from interlingua.operators.translate.backend import OPUS_MT_TEMPLATE, BackendSpec, Translator


def parse_pair(pair: str) -> tuple[str, str]:
    """``"en-es"`` → ``("en", "es")``."""
    source, sep, target = pair.partition("-")
    if not sep or not source or not target:
        raise ValueError(f"language pair must look like 'en-es', got {pair!r}")
    return source, target


def default_model(spec: BackendSpec, pair: str) -> str:
    """The model a spec uses for ``pair`` when it names none."""
    from interlingua.operators.translate.apertium_backend import apertium_mode

    source, target = parse_pair(pair)
    if spec.model:
        return spec.model
    if spec.backend == "apertium":
        return apertium_mode(source, target)
    return OPUS_MT_TEMPLATE.format(source=source, target=target)


def make_translator(spec: BackendSpec, pair: str) -> Translator:
    """The backend object translating ``pair`` as ``spec`` says."""
    model = default_model(spec, pair)
    target = parse_pair(pair)[1]
    if spec.backend == "marian":
        from interlingua.operators.translate.marian_backend import MarianTranslator

        return MarianTranslator(spec, model, target=target)
    if spec.backend == "ctranslate2":
        from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator

        return CTranslate2Translator(spec, model, target=target)
    from interlingua.operators.translate.apertium_backend import ApertiumTranslator

    return ApertiumTranslator(spec, model, mark_unknown=spec.mark_unknown)
