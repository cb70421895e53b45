"""Load a Hugging Face transformer and its tokenizer from a local folder, fast.

A cold ``interlingua embed`` spent most of its time in ``AutoModel.from_pretrained`` (random initialization
of 118 M parameters, then a copy of the 470 MB of fp32 weights into them) and in the tokenizer reading
``tokenizer.json`` twice (the Rust parser, then Python's ``json`` for the added tokens). Here:

* :func:`load_transformer` builds the model without initializing its weights and assigns the tensors of
  ``model.safetensors`` as they are: memory-mapped copy-on-write (``safetensors.torch.load_file``), so only
  the pages a forward pass touches are read (a few rows of a 250k-row embedding matrix for a few
  sentences), training writes go to private copies and never to the file. Only when the file's tensors are
  exactly the model's (names, shapes, dtypes); anything else (sharded or ``.bin`` weights, prefixed or legacy
  names, another dtype) goes through ``from_pretrained``. Same values, same buffers, eval mode.
* :func:`load_tokenizer` reads the added tokens from the head of ``tokenizer.json`` and hands them to
  ``from_pretrained``, which then parses the file once (in Rust) instead of twice.
"""

from __future__ import annotations

import json
from pathlib import Path

WEIGHTS_FILE = "model.safetensors"
#: The weights ``from_pretrained`` reads from a folder: one file, or the index of a sharded one.
WEIGHT_FILES = (WEIGHTS_FILE, "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def require_weights(path: str | Path) -> None:
    """A one-line :class:`~interlingua.core.errors.UserError` when the transformer folder ``path`` (its
    ``config.json``) has none of :data:`WEIGHT_FILES` (``from_pretrained`` raised an ``OSError`` for it, deep in a
    workflow or command)."""
    from interlingua.core.errors import UserError

    path = Path(path)
    if (path / "config.json").is_file() and not any((path / name).is_file() for name in WEIGHT_FILES):
        raise UserError(f"{path} has config.json but no model weights (model.safetensors or pytorch_model.bin, or a "
                        "sharded index of them) (hint: copy the weights in, or save the model with save_pretrained)")


def load_transformer(path: str | Path):
    """``AutoModel.from_pretrained(path)``, without random init or a weight copy when the folder allows it."""
    from transformers import AutoModel

    path = Path(path)
    require_weights(path)
    weights = path / WEIGHTS_FILE
    if not weights.is_file():
        return AutoModel.from_pretrained(path)
    from safetensors.torch import load_file
    from transformers import AutoConfig
    from transformers.initialization import no_init_weights

    config = AutoConfig.from_pretrained(path)
    with no_init_weights():
        model = AutoModel.from_config(config)
    state = load_file(weights)  # memory-mapped, copy-on-write
    expected = model.state_dict()
    if set(state) != set(expected) or any(
            state[name].shape != tensor.shape or state[name].dtype != tensor.dtype for name, tensor in expected.items()):
        return AutoModel.from_pretrained(path)
    model.load_state_dict(state, strict=True, assign=True)
    model.tie_weights()
    return model.eval()


def load_tokenizer(path: str | Path):
    """The folder's tokenizer. With a ``tokenizer.json`` it is loaded as a plain ``PreTrainedTokenizerFast``
    (the Rust tokenizer and the special tokens of ``tokenizer_config.json``): the same ids as ``AutoTokenizer``
    gives, without the model-specific class's set-up, which for XLM-R's 250k vocabulary costs more than a
    second of every cold start (``benchmarks/embed_startup.py``)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    path = Path(path)
    if not (path / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(path)
    extra = {}
    if "added_tokens_decoder" not in json_or_empty(path / "tokenizer_config.json"):
        added = added_tokens_of(path / "tokenizer.json")
        if added is not None:
            extra["added_tokens_decoder"] = added
    return PreTrainedTokenizerFast.from_pretrained(path, **extra)


def added_tokens_of(tokenizer_json: Path, head_bytes: int = 1 << 16) -> dict | None:
    """``{id: AddedToken}`` from the ``added_tokens`` list at the head of a ``tokenizer.json`` (the
    ``tokenizers`` library writes it before the normalizer and the vocabulary); ``None`` when it is not
    within the first ``head_bytes`` (the caller then lets ``transformers`` parse the whole file)."""
    from transformers import AddedToken

    with open(tokenizer_json, "rb") as handle:
        head = handle.read(head_bytes).decode("utf-8", errors="ignore")
    key = head.find('"added_tokens"')
    start = head.find("[", key) if key >= 0 else -1
    if start < 0:
        return None
    try:
        tokens, _end = json.JSONDecoder().raw_decode(head, start)
    except json.JSONDecodeError:  # the list goes on past the head
        return None
    added = {}
    for token in tokens:
        token = dict(token)
        token_id = int(token.pop("id"))  # before AddedToken(...), which prints a line for each key it does not know
        added[token_id] = AddedToken(**token)
    return added


def json_or_empty(path: Path) -> dict:
    """The JSON object in ``path``; ``{}`` when it is missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
