"""Weight-space interpolation of two encoders of one architecture (WiSE-FT, Wortsman et al. 2022,
"Robust fine-tuning of zero-shot models"): θ(α) = (1 − α)·θ_first + α·θ_second, parameter by parameter.

With ``first`` the base encoder and ``second`` a model fine-tuned from it, α = 0 is the base, α = 1 the
fine-tuned model, and values in between keep much of the fine-tuning gain on the tasks it targets while giving
back much of what fine-tuning lost elsewhere (the paper's finding for zero-shot robustness). The result is one
ordinary sentence-transformers folder — same size and speed as either part — unlike an output concatenation.

Both folders must hold the same tensors (names, shapes, dtypes) and the same tokenizer; anything else is an
error naming the first difference. A sentence-transformers module with weights of its own (a ``Dense`` head's
``2_Dense/model.safetensors``) is interpolated like the transformer, tensor by tensor with the same checks: both
folders must have the same weighted modules. Each must be one transformer encoder: a combined encoder (two parts) or a
composed one (base + meaning head) is refused. Weights are read and written as safetensors only.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from interlingua.core.errors import UserError

WEIGHTS = "model.safetensors"
VOCABULARY_FILES = ("sentencepiece.bpe.model", "vocab.txt")


def interpolate_state(first: dict, second: dict, alpha: float) -> dict:
    """``{name: (1 − α)·first[name] + α·second[name]}`` computed in float32 and cast back to the tensor's dtype;
    integer tensors (e.g. position ids) must be equal and are kept."""
    import torch

    _check_alpha(alpha)
    _check_same_tensors(*({name: (tuple(t.shape), t.dtype) for name, t in state.items()} for state in (first, second)))
    mixed = {}
    for name, a in first.items():
        b = second[name]
        if a.is_floating_point():
            mixed[name] = torch.lerp(a.float(), b.float(), alpha).to(a.dtype).contiguous()
        else:
            if not torch.equal(a, b):
                raise UserError(f"integer tensor {name!r} differs between the two encoders")
            mixed[name] = b.clone()
    return mixed


def interpolate_folders(first: str | Path, second: str | Path, alpha: float, out: str | Path, *,
                        checked: bool = False) -> Path:
    """Write the interpolated encoder to ``out``: a copy of ``second`` (its modules, pooling, tokenizer and
    settings) whose transformer weights are θ(α), in the sentence-transformers layout (a plain Hugging Face
    ``second`` gets the one :class:`~interlingua.models.sentence_encoder.SentenceEncoder` reads from it: mean
    pooling). ``first``/``second`` are local model folders (the folder with ``config.json`` and
    ``model.safetensors``; :func:`interlingua.models.load.resolve_model_folder` gives one for any URI).
    ``checked``: the caller has already run :func:`check_folders` on these folders and ``alpha`` (the workflow
    does, before its MLflow run), so they are not checked (nor their tokenizers parsed) a second time."""
    from interlingua.models.sentence_encoder import add_layout
    from safetensors.torch import load_file, save_file

    first, second, out = Path(first), Path(second), Path(out)
    if not checked:
        check_folders(first, second, alpha)
    files = weight_files(second)
    mixed = {name: interpolate_state(load_file(str(first / name)), load_file(str(second / name)), alpha)
             for name in files}
    if out.exists():
        shutil.rmtree(out)
    top = {WEIGHTS, "README.md"}  # the card: of second, not of the result; the weights: written below
    shutil.copytree(second, out, ignore=lambda folder, names: [
        name for name in names if (Path(folder) == second and name in top) or
        (Path(folder).parent == second and f"{Path(folder).name}/{name}" in files)])
    for name, tensors in mixed.items():
        save_file(tensors, str(out / name), metadata={"format": "pt", "interlingua.interpolation_alpha": repr(alpha)})
    return add_layout(out)


def weight_files(folder: str | Path) -> list[str]:
    """The safetensors weights an interpolation mixes, relative to ``folder``: ``model.safetensors`` (the
    transformer's) and each module folder's (``2_Dense/model.safetensors``: a sentence-transformers module with
    weights of its own)."""
    folder = Path(folder)
    return [WEIGHTS] * (folder / WEIGHTS).is_file() + sorted(
        f"{sub.name}/{WEIGHTS}" for sub in folder.iterdir() if sub.is_dir() and (sub / WEIGHTS).is_file())


def check_folders(first: str | Path, second: str | Path, alpha: float) -> None:
    """What :func:`interpolate_folders` refuses, checked without loading weights, one line each: ``alpha`` outside
    [0, 1], a folder that is not one transformer (:func:`check_one_transformer`) or has no safetensors weights,
    different tokenizer vocabularies, tokenizer normalization, pre-tokenization or lowercasing, pooling or prefix
    (the result would take the second's), different weighted modules, and different tensors (names, shapes, dtypes,
    from the safetensors headers of the transformer and of each module).
    A caller that must refuse before it starts anything (the ``interpolate`` workflow, before its MLflow run) calls
    it first."""
    _check_alpha(alpha)
    first, second = Path(first), Path(second)
    check_one_transformer("first", first)
    check_one_transformer("second", second)
    headers = []
    for folder in (first, second):
        if not (folder / WEIGHTS).is_file():
            raise UserError(f"{folder} has no {WEIGHTS}; interpolation reads safetensors weights only")
        unread = sorted(sub.name for sub in folder.iterdir() if sub.is_dir() and (sub / "pytorch_model.bin").is_file()
                        and not (sub / WEIGHTS).is_file())
        if unread:
            raise UserError(f"{folder}: module {unread[0]} has pytorch_model.bin and no {WEIGHTS}; interpolation "
                            "reads safetensors weights only (hint: re-save the model with sentence-transformers, "
                            "which writes safetensors)")
        headers.append({(name, tensor): entry for name in weight_files(folder)
                        for tensor, entry in _tensor_header(folder / name).items()})
    if _vocabulary(first) != _vocabulary(second):
        raise UserError(f"{first} and {second} have different tokenizer vocabularies; interpolation needs one")
    for what, a, b in zip(("the tokenizer's normalizer", "the tokenizer's pre-tokenizer", "lowercasing (do_lower_case)",
                           "pooling", "prefix", "lowercasing (sentence_bert_config.json's do_lower_case)"),
                          _text_settings(first), _text_settings(second)):
        if a is not None and b is not None and a != b:
            raise UserError(f"{first} and {second} differ in {what}: {_difference(a, b)}; the result would silently "
                            "take the second's (hint: interpolate two encoders that read text alike, e.g. a base and a "
                            "model fine-tuned from it)")
    modules = [{name.rsplit("/", 1)[0] for name, _ in header if name != WEIGHTS} for header in headers]
    if modules[0] != modules[1]:
        raise UserError(f"the two encoders have different weighted modules ({', '.join(sorted(modules[0])) or 'none'} "
                        f"vs {', '.join(sorted(modules[1])) or 'none'}); interpolation needs one architecture, a head "
                        "included")
    _check_same_tensors(*({_tensor_label(*key): entry for key, entry in header.items()} for header in headers))


def _check_same_tensors(a: dict, b: dict) -> None:
    """:class:`UserError` unless ``a`` and ``b`` (``{name: (shape, dtype)}``, from the weights or their headers) hold
    the same tensor names, each with one shape and dtype."""
    if a.keys() != b.keys():
        only_first, only_second = sorted(set(a) - set(b))[:3], sorted(set(b) - set(a))[:3]
        raise UserError(f"the two encoders hold different tensors (only in the first: {only_first}, only in the "
                        f"second: {only_second}); interpolation needs one architecture")
    for name, (shape, dtype) in a.items():
        if (tuple(shape), dtype) != (tuple(b[name][0]), b[name][1]):
            raise UserError(f"tensor {name!r}: {tuple(shape)} {dtype} vs {tuple(b[name][0])} {b[name][1]}; "
                            "interpolation needs one architecture")


def _tensor_label(file: str, tensor: str) -> str:
    """A tensor's name in messages: its own for the transformer's, ``2_Dense/linear.weight`` for a module's."""
    return tensor if file == WEIGHTS else f"{file.rsplit('/', 1)[0]}/{tensor}"


def check_one_transformer(label: str, folder: str | Path) -> None:
    """:class:`UserError` (one line) when ``folder`` is not one transformer encoder: a combined encoder (two parts)
    or a composed one (base + meaning head, whose head the interpolation would drop for ``first`` and keep unmixed
    for ``second``)."""
    from interlingua.models.combined import is_combined_folder
    from interlingua.models.meaning_head import is_composed_folder

    folder = Path(folder)
    if is_combined_folder(folder):
        raise UserError(f"{label}: {folder} is a combination of two encoders, not one transformer; interpolation "
                        "needs two encoders of one architecture (hint: interpolate one of its parts, "
                        f"{folder / 'first'} or {folder / 'second'})")
    if is_composed_folder(folder):
        raise UserError(f"{label}: {folder} is a composed encoder (base + meaning head), not one transformer; "
                        "interpolation mixes transformer weights only and would drop or keep its head unmixed (hint: "
                        "interpolate the base encoders, then train a meaning head on the result)")


def _check_alpha(alpha: float) -> None:
    if not 0.0 <= alpha <= 1.0:
        raise UserError(f"alpha must be in [0, 1] (0: the first encoder, 1: the second), got {alpha}")


def _vocabulary(folder: Path) -> list[str]:
    """Digests of what decides token ids: the ``model`` part of ``tokenizer.json`` (vocabulary, merges; Unigram
    scores to 5 decimals, since a re-save prints floats differently) and any vocabulary file; other tokenizer
    settings may be re-serialized differently by a save and are not compared."""
    digests = []
    if (folder / "tokenizer.json").exists():
        model = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8")).get("model") or {}
        if isinstance(model.get("vocab"), list):  # Unigram: (piece, score); a re-save may print scores differently
            model = {**model, "vocab": [[piece, round(float(score), 5)] for piece, score in model["vocab"]]}
        digests.append("tokenizer.json:" + hashlib.sha256(json.dumps(model, sort_keys=True).encode()).hexdigest())
    for name in VOCABULARY_FILES:
        if (folder / name).exists():
            digests.append(f"{name}:" + hashlib.sha256((folder / name).read_bytes()).hexdigest())
    return digests


def _text_settings(folder: Path) -> tuple:
    """How the encoder in ``folder`` turns text into input: the normalizer and pre-tokenizer of its
    ``tokenizer.json``, ``do_lower_case`` of its ``tokenizer_config.json``, its pooling and prefix (None where the
    folder does not say), and whether ``sentence_bert_config.json``'s ``do_lower_case`` lowercases the input (no file
    or no key: it does not)."""
    from interlingua.models.sentence_encoder import folder_pooling_and_prefix, lowercases_input
    from interlingua.models.transformer_files import json_or_empty

    tokenizer = _canonical_tokenizer(folder) or json_or_empty(folder / "tokenizer.json")
    config = json_or_empty(folder / "tokenizer_config.json")
    return (tokenizer.get("normalizer"), tokenizer.get("pre_tokenizer"), config.get("do_lower_case"),
            *folder_pooling_and_prefix(folder),
            lowercases_input(folder))


def _canonical_tokenizer(folder: Path) -> dict:
    """``tokenizer.json`` as the tokenizers library writes it back after loading it (so two spellings of one
    setting, e.g. an older Metaspace's ``add_prefix_space`` and a newer ``prepend_scheme``, compare equal); ``{}``
    when there is none or it does not load."""
    path = folder / "tokenizer.json"
    if not path.is_file():
        return {}
    try:
        from tokenizers import Tokenizer

        return json.loads(Tokenizer.from_file(str(path)).to_str())
    except Exception:  # noqa: BLE001 - a file the library cannot read is compared as written
        return {}


def _difference(a, b) -> str:
    """``a vs b``, or for two dicts the keys whose values differ (``lowercase: True vs False``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [key for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
        return ", ".join(f"{key}: {a.get(key)!r} vs {b.get(key)!r}" for key in keys[:3])
    return f"{a!r} vs {b!r}"


def _tensor_header(path: Path) -> dict[str, tuple[list[int], str]]:
    """{tensor name: (shape, dtype)} from a safetensors file's header (8-byte little-endian length, then JSON)."""
    import struct

    try:
        with open(path, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(length))
    except (OSError, ValueError, struct.error) as err:
        raise UserError(f"{path} is not a readable safetensors file: {err}") from None
    return {name: (list(entry["shape"]), entry["dtype"]) for name, entry in header.items() if name != "__metadata__"}
