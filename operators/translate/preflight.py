"""Offline checks of one pair's translation settings, before a model loads (:func:`spec_problem`: the settings
alone; :func:`translation_problem`: also what the machine has): what a translate actor would otherwise find out in
its constructor (a missing Apertium mode, a model folder that is not one, an OPUS-MT
model for a language code that names no language), with a hint.

A hub id is checked for its shape only (no network here); the default OPUS-MT id of a pair is refused when its
target is a two-letter code that is not ISO 639-1 (``xx``). Three-letter targets are left to the hub (OPUS-MT
has group models such as ``en-mul`` or ``en-roa``).
"""

from __future__ import annotations

from pathlib import Path

from interlingua.operators.translate.backend import BackendSpec

#: ISO 639-1 codes: a two-letter target outside these has no OPUS-MT model.
ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo
es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg
ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn
no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta
te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu""".split())
#: Files of which a model folder holds at least one, to load its tokenizer from.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "source.spm", "vocab.json", "sentencepiece.bpe.model",
                   "spiece.model")


def is_remote(model: str) -> bool:
    """A URL or registered-model spec: neither a local folder nor a hub id (checked where it is read)."""
    return "://" in model or model.startswith("models:/")


def local_folder_problem(model: str, what: str) -> str | None:
    """For ``model`` naming a local path: why it is not a usable folder (``""`` if it is); ``None``: not a local
    path (a hub id, checked for its shape only, or a URL)."""
    path = Path(model).expanduser()
    if is_remote(model):
        return None
    if path.exists():
        if not path.is_dir():
            return f"{what} {model} is a file, not a model folder"
        return "" if (path / "config.json").is_file() else f"{what} folder {model} has no config.json"
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(model)
        hub_id = not model.startswith((".", "~"))
    except HFValidationError:
        hub_id = False
    if not hub_id:
        return f"{what} folder {model} does not exist (nor is it a Hugging Face hub id)"
    return None


def spec_problem(spec: BackendSpec, pair: str) -> str:
    """Why ``spec`` cannot translate ``pair`` anywhere, whatever the machine has (the default OPUS-MT model of a
    two-letter target that is no ISO 639-1 code), or ``""``."""
    from interlingua.operators.translate.factory import default_model, parse_pair

    _, target = parse_pair(pair)
    if spec.backend != "apertium" and spec.model is None and len(target) == 2 and target not in ISO_639_1:
        return (f"{target!r} is not an ISO 639-1 language code: there is no OPUS-MT model {default_model(spec, pair)}; "
                f"fix languages, or set translate.{target}.model")
    return ""


def translation_problem(spec: BackendSpec, pair: str) -> str:
    """Why ``spec`` cannot translate ``pair`` on this machine (offline checks), or ``""``."""
    from interlingua.operators.translate.factory import default_model, parse_pair

    source, target = parse_pair(pair)
    model = default_model(spec, pair)
    if spec.backend == "apertium":
        return _apertium_problem(source, target, model)
    problem = local_folder_problem(model, f"{spec.backend} model")
    if problem is None:
        return spec_problem(spec, pair)
    if problem:
        return f"{problem}: set translate.{target}.model to a Marian/CTranslate2 model folder or a hub id"
    folder = Path(model).expanduser()
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return (f"{spec.backend} model folder {model} has no tokenizer files ({', '.join(TOKENIZER_FILES)}): "
                "save the tokenizer beside the model (tokenizer.save_pretrained)")
    return _target_token_problem(folder / "vocab.json", spec, target) or _conversion_problem(spec, folder, target)


def _conversion_problem(spec: BackendSpec, folder: Path, target: str) -> str:
    """A Marian folder CTranslate2 would convert into garbage (its decoder start row is not zero)."""
    from interlingua.operators.translate.ctranslate2_backend import is_ctranslate2_folder, start_row_problem

    if spec.backend != "ctranslate2" or is_ctranslate2_folder(folder):
        return ""
    try:
        problem = start_row_problem(folder)
    except Exception as err:  # a corrupt weights file too (RuntimeError, SafetensorError): one line naming its type
        first = next((line for line in str(err).splitlines() if line.strip()), "")
        return f"ctranslate2 model folder {folder} does not load as a transformers model ({type(err).__name__}: {first})"
    return f"{problem} (translate.{target}.backend)" if problem else ""


def _target_token_problem(vocab: Path, spec: BackendSpec, target: str) -> str:
    """The model's ``>>xx<<`` tokens (its ``vocab.json``, where it has one) against ``target_token`` and the pair."""
    import json

    from interlingua.operators.translate.backend import language_codes, resolve_target_token

    if not vocab.is_file():
        return ""
    try:
        vocabulary = json.loads(vocab.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return f"{vocab} is not readable JSON ({err})"
    try:
        resolve_target_token(language_codes(vocabulary), spec.target_token, target)
    except ValueError as err:
        return f"{err} (translate.{target}.target_token)"
    return ""


def _apertium_problem(source: str, target: str, mode: str) -> str:
    from interlingua.operators.translate.apertium_backend import apertium_available, install_hint

    if apertium_available(mode):
        return ""
    return f"apertium mode {mode!r} ({source} -> {target}) is not installed: {install_hint(mode)}"
