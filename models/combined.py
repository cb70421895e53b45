"""Combination of two encoders' outputs, as in Cai et al. (2022) Table 6: s ⊕ h (concat), s + h (sum),
s/‖s‖ ⊕ h/‖h‖ (norm_concat, the AMR-retrofit final embedding) and s/‖s‖ + h/‖h‖ (norm_sum)."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any, Literal, Sequence, get_args

import numpy as np

from interlingua.core.confined import path_inside
from interlingua.models.protocol import TextEncoder, l2_normalize

Combination = Literal["concat", "sum", "norm_concat", "norm_sum"]
#: The modes every combination takes: this numpy one, the trainers' torch ``combine_embeddings``, ``MODE(A|B)`` specs
#: and the ``combine`` workflow.
COMBINATIONS: tuple[str, ...] = get_args(Combination)
#: The modes that combine the parts' raw outputs (not unit-normalized). Until they did (they combined the parts'
#: normalized outputs, the norm_ modes' vectors), so their identities carry :data:`RAW_MARK`: an embedding cache or a
#: corpus version keyed by an identity of before cannot serve those vectors as theirs.
RAW_MODES = ("concat", "sum")
RAW_MARK = "+raw"
#: Marker file of a saved combination: ``{"mode": ..., "parts": ["first", "second"]}``, the parts being
#: encoder folders (sentence-transformers layout) below it.
COMBINED_FILE = "interlingua_combined.json"
PARTS = ("first", "second")


def combination_identity(mode: str, first: str, second: str) -> str:
    """``MODE(first|second)`` of the parts' identities, ``MODE+raw(first|second)`` for :data:`RAW_MODES`."""
    return f"{mode}{RAW_MARK if mode in RAW_MODES else ''}({first}|{second})"


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`COMBINATIONS`, else a ValueError naming them and the closest: the one message of
    a mistyped mode, in a ``MODE(A|B)`` spec, the ``combine`` workflow's ``mode`` and the trainers' combination."""
    if mode not in COMBINATIONS:
        from interlingua.core.config import closest

        close = closest(mode, COMBINATIONS, cutoff=0.5)
        raise ValueError(f"combination mode {mode!r} is not one of {', '.join(COMBINATIONS)}"
                         + (f" (did you mean {close!r}?)" if close else ""))
    return mode


def normalizes(mode: Combination) -> bool:
    """Whether ``mode`` scales each part to unit norm before combining (s/‖s‖, h/‖h‖)."""
    return mode.startswith("norm_")


def sums(mode: Combination) -> bool:
    """Whether ``mode`` adds the parts (equal dims needed) rather than concatenating them."""
    return mode.endswith("sum")


def combine_embeddings(s: np.ndarray, h: np.ndarray, mode: Combination) -> np.ndarray:
    """Combine two (n, d1), (n, d2) arrays; the sums need d1 == d2."""
    check_mode(mode)
    if len(s) != len(h):
        raise ValueError(f"both encoders must embed the same rows; got {len(s)} and {len(h)}")
    if normalizes(mode):
        s, h = l2_normalize(s), l2_normalize(h)
    if sums(mode):
        if s.shape[1] != h.shape[1]:
            raise ValueError(f"mode {mode!r} needs equal dims; got {s.shape[1]} and {h.shape[1]}")
        return np.asarray(s + h, dtype=np.float32)
    return np.concatenate([s, h], axis=1).astype(np.float32)


def check_sum_dims(mode: str, first: tuple[str, int | None], second: tuple[str, int | None]) -> None:
    """ValueError (one line) when ``mode`` sums parts (name, dim) of unequal dims; a dim of None is not checked."""
    (first_name, d1), (second_name, d2) = first, second
    if sums(mode) and None not in (d1, d2) and d1 != d2:
        raise ValueError(f"mode {mode!r} needs encoders of equal dims; first {first_name!r} has {d1}, "
                         f"second {second_name!r} has {d2} (use concat or norm_concat)")


def check_folder_sum_dims(mode: str, first: Any, second: Any) -> None:
    """:func:`check_sum_dims` of two encoder specs by their local folders' dims (:func:`folder_dim`; anything but a
    local folder is not checked)."""
    check_sum_dims(mode, *((spec, folder_dim(spec) if isinstance(spec, str) else None) for spec in (first, second)))


def folder_dim(spec: str) -> int | None:
    """The embedding dim of the encoder in local folder ``spec`` (a path or ``file://`` URL) read from its
    ``config.json`` (``hidden_size``) without loading it; None for anything else (a registry URI, a combined or
    composed encoder, a module stack beyond Transformer, Pooling and Normalize, a config that does not say)."""
    from interlingua.models.meaning_head import is_composed_folder

    from interlingua.core.local_paths import local_path

    folder = local_path(spec)
    try:
        if folder is None or not (folder / "config.json").is_file():
            return None
        if is_combined_folder(folder) or is_composed_folder(folder):
            return None
        if (folder / "modules.json").is_file():
            kinds = {str(m.get("type", "")).rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())}
            if not kinds <= {"Transformer", "Pooling", "Normalize"}:
                return None
        dim = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("hidden_size")
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    return dim if isinstance(dim, int) and not isinstance(dim, bool) else None


class CombinedEncoder:
    """Encodes with both encoders and combines the outputs with ``mode``."""

    def __init__(self, first: TextEncoder, second: TextEncoder, mode: str):
        check_mode(mode)
        # a py: encoder may not say its dim (encode checks)
        check_sum_dims(mode, (first.name, getattr(first, "dim", None)), (second.name, getattr(second, "dim", None)))
        self.first, self.second, self.mode = first, second, mode
        self.name = f"{mode}({first.name}|{second.name})"

    @property
    def dim(self) -> int:
        return self.first.dim if sums(self.mode) else self.first.dim + self.second.dim

    @functools.cached_property
    def identity(self) -> str | None:
        """``MODE(first|second)`` of the parts' content identities
        (:func:`~interlingua.models.identity.encoder_identity`) when both parts know their content; else None, and
        the cache falls back to this encoder's own files or name."""
        from interlingua.models.identity import encoder_identity

        parts = (self.first, self.second)
        if not all(getattr(p, "identity", None) or getattr(p, "source_folder", None) for p in parts):
            return None
        return combination_identity(self.mode, encoder_identity(self.first), encoder_identity(self.second))

    def encode(self, texts: Sequence[str], batch_size: int | None = None, normalize: bool = False) -> np.ndarray:
        """The combined embeddings; ``batch_size`` goes to each part whose ``encode`` takes one (``use``, a
        sentence-transformers folder or word vectors take the texts alone), ``normalize`` scales the result to unit
        norm. ``concat`` and ``sum`` combine the parts' raw outputs (a part that normalizes by default, or by a
        ``Normalize`` module of its folder, is asked not to; one whose ``encode`` takes no ``normalize`` gives what
        its pipeline gives)."""
        raw = self.mode in RAW_MODES
        out = combine_embeddings(_encode_part(self.first, texts, batch_size, raw),
                                 _encode_part(self.second, texts, batch_size, raw), self.mode)
        return l2_normalize(out).astype(np.float32) if normalize else out

    def save(self, path: str | Path) -> Path:
        """Write both parts (each must have ``save(folder)``) and the marker file; ``load_encoder`` reads it back."""
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        for name, part in zip(PARTS, (self.first, self.second)):
            if not callable(getattr(part, "save", None)):
                raise ValueError(f"cannot save {self.name}: its {name} part {part.name!r} has no save()")
            shutil.rmtree(target / name, ignore_errors=True)
            part.save(target / name)
        (target / COMBINED_FILE).write_text(json.dumps({"mode": self.mode, "parts": list(PARTS)}, indent=2) + "\n",
                                            encoding="utf-8")
        return target


class RawPart:
    """A part of a :data:`RAW_MODES` combination as an embedding cache wraps it (``eval``'s): ``encode(texts)`` is what
    the combination reads of the part (its raw pooled output, :func:`_encode_part`), cached under the part's identity
    with :data:`RAW_MARK`, apart from its normalized vectors; so a cached ``concat(A|B)`` gives the uncached one's."""

    def __init__(self, part: TextEncoder):
        self.part, self.name = part, f"{part.name}{RAW_MARK}"

    @property
    def dim(self) -> int:
        return self.part.dim

    @functools.cached_property
    def identity(self) -> str:
        from interlingua.models.identity import encoder_identity

        return f"{encoder_identity(self.part)}{RAW_MARK}"

    def encode(self, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        return _encode_part(self.part, texts, batch_size, raw=True)


def is_combined_folder(folder: str | Path) -> bool:
    return (Path(folder) / COMBINED_FILE).is_file()


def saved_mark(folder: str | Path) -> str:
    """:data:`RAW_MARK` for a saved combination of a raw mode (its files are those written before the mend, so its
    content identity carries the mark), else ``""``."""
    try:
        mode = json.loads((Path(folder) / COMBINED_FILE).read_text(encoding="utf-8")).get("mode")
    except (OSError, ValueError, AttributeError):
        return ""
    return RAW_MARK if mode in RAW_MODES else ""


def load_combined(folder: str | Path, load_part) -> CombinedEncoder:
    """The combination saved in ``folder``; ``load_part(subfolder)`` loads each part."""
    folder = Path(folder)
    try:
        spec = json.loads((folder / COMBINED_FILE).read_text(encoding="utf-8"))
        mode, parts = spec["mode"], spec["parts"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{folder / COMBINED_FILE} is not a valid combination file: {err}") from None
    if not (isinstance(parts, list) and len(parts) == 2 and all(p in PARTS for p in parts)):
        raise ValueError(f"{folder / COMBINED_FILE}: parts must be {list(PARTS)}, got {parts!r}")
    first, second = (path_inside(folder, part, f"{folder / COMBINED_FILE}: parts[{k}]") for k, part in enumerate(parts))
    return CombinedEncoder(load_part(str(first)), load_part(str(second)), mode)


def _encode_part(part: TextEncoder, texts: Sequence[str], batch_size: int | None, raw: bool) -> np.ndarray:
    """``part.encode(texts)``, with ``batch_size`` where it takes one; where ``raw``, ``normalize=False`` where it
    takes one (our transformer encoders normalize by default) and ``pooled=True`` where it takes one (a
    :class:`~interlingua.models.sentence_encoder.SentenceEncoder` whose folder ends in ``Normalize`` otherwise gives
    unit vectors even with ``normalize=False``, as ``embed --no-normalize`` should)."""
    from interlingua.models.encode import takes

    options = {"batch_size": batch_size} if batch_size and takes(part.encode, "batch_size") else {}
    if raw:
        options.update({name: value for name, value in (("normalize", False), ("pooled", True))
                        if takes(part.encode, name)})
    return part.encode(texts, **options)
