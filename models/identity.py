"""What a model is, by content: the key of the embedding cache and of corpus versions built with a model.

A model spec names a place (``./my-encoder``, ``models:/enc@champion``, the e5-small asset inside a state
folder); what sits there can change (a retrained model written over the same folder, an alias moved to
another version) and the same model can sit in many places (two state folders, two machines). Keying
cached embeddings or a corpus version by the spec would serve stale vectors after the first and give two
ids for the same bytes after the second, so both are keyed by :func:`model_identity` instead:

- a folder (a path, ``file://``, ``st:PATH``) or a file (``wordvec:PATH``): ``sha256:`` + :func:`files_digest`
  (a folder our encoder reads: + :func:`reading_mark` where it reads settings it used to ignore, e.g. a plain
  Hugging Face folder's ``+max_length=512``);
- ``models:/NAME@ALIAS``, ``models:/NAME/3``, ``runs:/...``, an fsspec URL or a hub id: the digest of the
  folder :func:`~interlingua.models.load.resolve_model_folder` gives (the alias resolved now);
- the packaged encoders (``use``, ``minilm``), ``spacy:MODEL`` and ``py:module:factory``: the spec itself
  (their files come with installed packages, pinned by the lock file);
- ``MODE(A|B)``: ``MODE(identity of A|identity of B)`` (``concat+raw(…)``, ``sum+raw(…)``: those modes combine
  the parts' raw outputs since they were mended, and must not be taken for their identities of before; a saved
  combination of those modes: its digest + ``+raw``).

A digest is remembered in this process by the path and every file's size, modification and change times, inode and
device: an unchanged folder (two encoders over one model, a corpus config naming it again) is read once, a folder
rewritten in place is read again.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

from interlingua.core.integrity import stat_identity
from interlingua.core.local_paths import local_path, plain_path

DIGEST_PREFIX = "sha256:"
#: Specs whose model ships with an installed package: identified by name.
PACKAGED = ("use", "minilm")
_BY_NAME_PREFIXES = ("spacy:", "py:")
_READ_BYTES = 1 << 22
#: Digests computed in this process, by the path and the stat of every file (see :func:`files_digest`).
_DIGESTS: dict[tuple, str] = {}
_DIGESTS_MAX = 256
#: A file modified or changed this recently (seconds before its hashing started) is not remembered: a second write
#: within the file system's time resolution could keep its times and size with other bytes.
_SETTLE_SECONDS = 2.0
_now = time.time


def files_digest(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes, or of a folder's regular files: for each, in order of its relative
    POSIX path, the path, a NUL, the file's own SHA-256 and a newline. Symbolic links to files are read
    (a Hugging Face snapshot links to its blobs); links to folders are not followed. The folder's own
    location and the files' times do not enter, so a copy elsewhere has the same digest.

    Remembered in this process by the path and each file's relative path, device, inode, size, modification and
    change times (of the file a link points to): a file rewritten, replaced, added or removed changes the key
    (no one can set a change time back), so only an unchanged folder is not read again. Files changed less than
    ``_SETTLE_SECONDS`` before hashing started are not remembered."""
    root = Path(path)
    single = root.is_file()
    if single:
        files = [root]
    elif root.is_dir():
        files = []
        for folder, dirs, names in os.walk(root, followlinks=False):
            dirs.sort()
            files += [Path(folder, n) for n in names if Path(folder, n).is_file()]
        files.sort(key=lambda f: f.relative_to(root).as_posix())
    else:
        raise FileNotFoundError(f"{root} is neither a file nor a folder")
    stats = [file.stat() for file in files]
    key = (os.path.abspath(root), *((file.relative_to(root).as_posix(), *stat_identity(st))
                                    for file, st in zip(files, stats)))
    digest = _DIGESTS.get(key)
    if digest is not None:
        return digest
    started = _now()
    if single:
        digest = _file_sha256(root)
    else:
        folder_digest = hashlib.sha256()
        for file in files:
            folder_digest.update(f"{file.relative_to(root).as_posix()}\0{_file_sha256(file)}\n".encode("utf-8"))
        digest = folder_digest.hexdigest()
    if all(started - max(st.st_mtime, st.st_ctime) > _SETTLE_SECONDS for st in stats):
        if len(_DIGESTS) >= _DIGESTS_MAX:
            _DIGESTS.clear()
        _DIGESTS[key] = digest
    return digest


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


def model_identity(spec: str, *, cache_dir: str | os.PathLike | None = None) -> str:
    """The content identity of the model ``spec`` names now (see the module docstring). Raises what
    :func:`~interlingua.models.load.resolve_model_folder` raises for a spec that names nothing
    (:class:`~interlingua.core.errors.UserError` with a hint)."""
    from interlingua.models.combined import combination_identity, saved_mark
    from interlingua.models.resolve import split_combination

    spec = spec.strip()
    combination = split_combination(spec)
    if combination:
        mode, first, second = combination
        return combination_identity(mode, model_identity(first, cache_dir=cache_dir),
                                    model_identity(second, cache_dir=cache_dir))
    if spec in PACKAGED or spec.startswith(_BY_NAME_PREFIXES):
        return spec
    for prefix in ("st:", "wordvec:"):
        if spec.startswith(prefix):
            return prefix + DIGEST_PREFIX + files_digest(_existing(spec[len(prefix):], spec))
    from interlingua.models.load import resolve_model_folder

    folder = resolve_model_folder(spec, cache_dir=cache_dir)
    return DIGEST_PREFIX + files_digest(folder) + saved_mark(folder) + reading_mark(folder)


def reading_mark(folder: str | os.PathLike) -> str:
    """What the identity of the encoder in ``folder`` adds to its files' digest for how it is read: for a folder our
    encoder reads (a composed encoder's base included), :func:`~interlingua.models.sentence_encoder.reading_mark`
    (``+max_length=N``, ``+do_lower_case``: settings it ignored before); ``""`` for a combination (its parts are
    folders we wrote) and for one sentence-transformers runs (a Dense head, a pooling ours does not compute), which
    it always read as it does."""
    from interlingua.models.combined import is_combined_folder
    from interlingua.models.load import runs_through_sentence_transformers
    from interlingua.models.meaning_head import is_composed_folder
    from interlingua.models.sentence_encoder import reading_mark as encoder_reading_mark

    folder = Path(folder)
    if is_combined_folder(folder):
        return ""
    if not is_composed_folder(folder) and runs_through_sentence_transformers(folder):
        return ""
    return encoder_reading_mark(folder)


def _existing(path: str, spec: str) -> Path:
    from interlingua.core.errors import UserError

    found = Path(path).expanduser()
    if not found.exists():
        raise UserError(f"model spec {spec!r}: {found} does not exist")
    return found


def encoder_identity(encoder) -> str:
    """What the embedding cache keys ``encoder`` by: its ``identity`` when it states one (content already);
    else its ``name``, followed by the digest of ``source_folder`` when it was loaded from files, so a
    model rewritten in place is not served its old vectors (and :func:`reading_mark` where our encoder reads the
    folder); else the name alone."""
    identity = getattr(encoder, "identity", None)
    if identity:
        return str(identity)
    folder = getattr(encoder, "source_folder", None)
    if folder is None:
        return encoder.name
    from interlingua.models.sentence_transformers_folder import SentenceTransformersFolderEncoder

    mark = "" if isinstance(encoder, SentenceTransformersFolderEncoder) else reading_mark(folder)
    return f"{encoder.name}#{DIGEST_PREFIX}{files_digest(folder)}{mark}"


def with_model_files(data: dict[str, Any], *, digests: dict[str, str] | None = None) -> dict[str, Any]:
    """``data`` (a config, or a payload holding one) plus ``model_files``: ``{spec: files_digest}`` for every string
    anywhere in it that names a local model folder, or part of a combination that does (:func:`model_files`).
    What a recipe stage's hash and a corpus version's config count, so a model (a tokenizer, a parser, a translation
    model, a part of ``concat(A|B)``) rewritten in place is not taken for the one used before. ``data`` unchanged
    when it names no model folder: it hashes as before. ``digests``: :func:`model_files` of ``data`` computed on the
    machine that reads the models (a Ray cluster's), instead of here."""
    digests = model_files(data) if digests is None else digests
    return {**data, "model_files": dict(sorted(digests.items()))} if digests else data


def model_files(data: Any) -> dict[str, str]:
    """``{spec: files_digest}`` of every local model folder ``data`` names on this machine (:func:`local_model_folders`)."""
    return {spec: files_digest(_model_folder(spec)) for spec in local_model_folders(data)}


def local_model_folders(value: Any) -> list[str]:
    """The strings anywhere in ``value`` that name a local model folder (a path or ``file://`` URL to a folder
    :func:`~interlingua.models.load.is_model_folder` accepts, ``st:FOLDER``) or word-vector file (``wordvec:FILE``),
    as :func:`_model_folder` reads them, sorted; a combination spec ``MODE(A|B)`` is looked into, so each part that
    names one is among them, inside a part that is itself a combination too."""
    found: set[str] = set()

    def visit(item: Any) -> None:
        if isinstance(item, dict):
            for v in item.values():
                visit(v)
        elif isinstance(item, (list, tuple)):
            for v in item:
                visit(v)
        elif isinstance(item, str):
            if _model_folder(item) is not None:
                found.add(item)
            else:
                visit(_combination_parts(item))

    visit(value)
    return sorted(found)


def _combination_parts(text: str) -> list[str]:
    """The two specs of a combination ``MODE(A|B)`` (stripped, as the encoder resolves them), or none."""
    from interlingua.models.resolve import split_combination

    try:
        combination = split_combination(text)
    except ValueError:  # NAME(A|B) with a NAME no combination has: a text, not a spec
        return []
    return [part.strip() for part in combination[1:]] if combination else []


def _model_folder(text: str) -> Path | None:
    """The local model folder ``text`` names, or None: a path or ``file://`` URL to a folder
    :func:`~interlingua.models.load.is_model_folder` accepts; or, with a prefix :func:`model_identity` reads by its
    files, ``st:FOLDER`` (with ``modules.json`` or ``config.json``, as the encoder takes it) or ``wordvec:FILE`` (the
    word-vector file itself)."""
    for prefix, kind in (("st:", _is_st_folder), ("wordvec:", Path.is_file)):
        if text.startswith(prefix):
            path = plain_path(text[len(prefix):])
            try:
                return path if path is not None and kind(path) else None
            except OSError:  # a string too long or odd for the file system: not a model
                return None
    path = local_path(text)
    if path is None:
        return None
    try:
        if path.is_dir():
            from interlingua.models.load import is_model_folder  # torch comes with it: only for a real folder

            if is_model_folder(path):
                return path
    except OSError:  # a string too long or odd for the file system: not a folder
        pass
    return None


def _is_st_folder(folder: Path) -> bool:
    return (folder / "modules.json").is_file() or (folder / "config.json").is_file()


