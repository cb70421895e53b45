"""Load a :class:`SentenceEncoder` from wherever it lives.

=====================================  ==========================================================
``models:/NAME@ALIAS``, ``models:/NAME/3``  MLflow model registry (read in place from a local artifact store,
                                        else downloaded once per version to a local cache)
``runs:/RUN_ID/path``                   an MLflow run's artifact folder
``/path/to/folder``, ``file://...``     a local folder (ours, sentence-transformers or plain HF)
``s3://...``, ``gs://...``, ``hf://...``  any fsspec URL (copied to a local cache first)
``org/name``                            a Hugging Face hub id
=====================================  ==========================================================
"""

from __future__ import annotations

import hashlib
import shutil
import os
from dataclasses import dataclass
from pathlib import Path

from interlingua.models.meaning_head import COMPOSED_CONFIG, MeaningHeadEncoder, is_composed_folder
from interlingua.core.errors import UserError
from interlingua.models.protocol import TextEncoder
from interlingua.models.registry_uri import parse_registry_uri
from interlingua.models.sentence_encoder import SentenceEncoder, module_names, pooling_refusal
from interlingua.models.transformer_files import require_weights

MLFLOW_SCHEMES = ("models:/", "runs:/")


def load_encoder(uri: str, *, pooling: str | None = None, max_length: int | None = None,
                 prefix: str | None = None, cache_dir: str | os.PathLike | None = None) -> "SentenceEncoder | MeaningHeadEncoder":
    """Resolve ``uri`` to a local folder and load it (see the module docstring for accepted forms)."""
    folder = resolve_model_folder(uri, cache_dir=cache_dir)
    encoder = load_encoder_folder(folder, pooling=pooling, max_length=max_length, prefix=prefix, uri=uri)
    encoder.name, encoder.source_folder = uri, folder
    return encoder


def load_encoder_folder(folder: str | os.PathLike, *, pooling: str | None = None, max_length: int | None = None,
                        prefix: str | None = None, uri: str | None = None) -> "SentenceEncoder | MeaningHeadEncoder":
    """The encoder a local folder holds: a composed encoder (base + meaning head, marked by
    ``interlingua_composed.json``) or a transformer with pooling (a longer sentence-transformers stack is refused:
    :func:`load_text_encoder` runs it)."""
    from interlingua.models.combined import is_combined_folder, load_combined

    if is_combined_folder(folder):  # a saved s/|s| (+) h/|h| combination: both parts, loaded alike
        return load_combined(folder, lambda part: load_encoder_folder(part, pooling=pooling, max_length=max_length,
                                                                      prefix=prefix))
    if is_composed_folder(folder):
        if pooling or max_length or prefix is not None:
            raise UserError(f"{folder} is a composed encoder (base + meaning head); pooling, max_length and "
                            "prefix are fixed by its base and cannot be overridden")
        return MeaningHeadEncoder.from_folder(folder)
    extra = extra_modules(folder)
    if extra:
        raise UserError(f"{uri or folder} stacks sentence-transformers modules {extra} after the transformer, which "
                        "SentenceEncoder does not run; load it with load_text_encoder (or as an --model spec)")
    return SentenceEncoder.from_folder(folder, pooling=pooling, max_length=max_length, prefix=prefix)


def runs_through_sentence_transformers(folder: Path) -> bool:
    """Whether :func:`load_text_encoder` runs ``folder`` through sentence-transformers (a Dense or other extra module,
    a pooling :class:`SentenceEncoder` does not compute) rather than as a :class:`SentenceEncoder`."""
    return bool(extra_modules(folder) or pooling_refusal(folder))


def load_text_encoder(uri: str, *, cache_dir: str | os.PathLike | None = None,
                      mlmodel: dict | None = None) -> TextEncoder:
    """Any encoder folder behind ``uri`` as a :class:`TextEncoder`: a plain transformer + pooling as a
    :class:`SentenceEncoder`; a longer sentence-transformers stack (a Dense head, ...) or a pooling
    :class:`SentenceEncoder` does not compute (``lasttoken``, ``weightedmean``, ``include_prompt`` false, ...) through
    ``SentenceTransformer`` itself, so every module runs as it would there. ``mlmodel``: the ``MLmodel`` of the
    registry version ``uri`` names, when the caller has read it already (:func:`resolve_model_folder`)."""
    folder = resolve_model_folder(uri, cache_dir=cache_dir, mlmodel=mlmodel)
    from interlingua.models.combined import is_combined_folder

    if is_combined_folder(folder):
        encoder = load_encoder_folder(folder)
    elif is_composed_folder(folder):
        encoder = MeaningHeadEncoder.from_folder(folder, name=uri)
    elif not runs_through_sentence_transformers(folder):
        encoder = SentenceEncoder.from_folder(folder)
    else:  # a Dense head, a pooling SentenceEncoder does not compute: every module as sentence-transformers runs it
        from interlingua.models.sentence_transformers_folder import SentenceTransformersFolderEncoder

        encoder = SentenceTransformersFolderEncoder(folder, name=uri)
    encoder.name, encoder.source_folder = uri, folder  # source_folder: the cache keys it by content too
    return encoder


#: Modules SentenceEncoder reproduces (it pools; with a ``Normalize`` module its ``encode`` always normalizes).
PLAIN_MODULES = ("Transformer", "Pooling", "Normalize")


def extra_modules(folder: str | os.PathLike) -> list[str]:
    """Class names of the folder's sentence-transformers modules beyond transformer, pooling and
    normalization ([] for a plain HF folder)."""
    return [n for n in module_names(folder) if n not in PLAIN_MODULES]


def resolve_model_folder(uri: str, cache_dir: str | os.PathLike | None = None, *, mlmodel: dict | None = None) -> str:
    """A local folder holding the model files for ``uri`` (downloads when remote). ``mlmodel``: the MLflow model's
    ``MLmodel`` (:func:`read_mlmodel`) as the caller read it for the version ``uri`` names, so it is not read again."""
    if uri.startswith(MLFLOW_SCHEMES):
        return _from_mlflow(uri, _cache(cache_dir), mlmodel)
    from interlingua.core.local_paths import without_file_scheme

    uri = without_file_scheme(uri)
    if "://" in uri:
        folder = _from_fsspec(uri, _cache(cache_dir))
        require_weights(folder)
        return folder
    path = Path(uri).expanduser()
    if path.exists():
        if not is_model_folder(path):
            raise UserError(f"{path} is not a model folder: no config.json (or {COMPOSED_CONFIG}) in it")
        require_weights(path)
        return str(path)
    if uri.startswith((".", "/", "~")) or uri.count("/") > 1:
        raise UserError(f"model folder {uri!r} does not exist (hint: a model is a folder, a hub id such as "
                        "org/name, models:/NAME@ALIAS or runs:/RUN_ID/PATH; embed and eval also take wordvec:FILE "
                        "and py:module:factory)")
    return from_hub(uri)


def is_model_folder(folder: str | Path) -> bool:
    """Whether ``folder`` holds a model this module loads: ``config.json``, or a composed or combined encoder's marker."""
    from interlingua.models.combined import is_combined_folder

    folder = Path(folder)
    return (folder / "config.json").exists() or is_composed_folder(folder) or is_combined_folder(folder)


def find_model_root(folder: str | Path) -> str:
    """The folder (``folder`` or one below it) that holds ``config.json`` (or a composed or combined encoder's marker:
    the whole encoder, not the ``config.json`` of one of its parts)."""
    from interlingua.models.combined import COMBINED_FILE

    folder = Path(folder)
    if is_model_folder(folder):
        return str(folder)
    markers = sorted([*folder.rglob(COMPOSED_CONFIG), *folder.rglob(COMBINED_FILE)], key=lambda p: len(p.parts))
    if markers:
        return str(markers[0].parent)
    hits = sorted(folder.rglob("config.json"), key=lambda p: len(p.parts))
    for hit in hits:
        if (hit.parent / "tokenizer_config.json").exists():
            return str(hit.parent)
    raise UserError(f"no model folder (config.json + tokenizer) found under {folder}")


def _cache(cache_dir: str | os.PathLike | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    from interlingua.core.runtime import state_dir

    return state_dir() / "model_cache"


def _from_mlflow(uri: str, cache: Path, mlmodel: dict | None = None) -> str:
    """The model behind ``uri``: read in place when the registry's artifacts are local files (the model
    is stored once), else downloaded once per immutable version into ``cache``; aliases are resolved on
    every call."""
    import mlflow

    pinned = location = ""
    try:
        pinned = pin_registry_uri(uri)  # aliases move: ask the registry which version the URI names now
        location = _version_location(pinned)
        local_folder = _local_artifact_folder(location)
        if local_folder is not None:
            return encoder_folder_of_mlflow_model(local_folder, uri, mlmodel)
        def download(partial: Path) -> str:
            (partial / CACHE_SOURCE).write_text(pinned + "\n", encoding="utf-8")
            return mlflow.artifacts.download_artifacts(artifact_uri=pinned, dst_path=str(partial))

        local = cached_copy(cache / ("mlflow-" + hashlib.sha1(pinned.encode()).hexdigest()[:16]), download)
    except UserError:
        raise
    except Exception as err:  # MlflowException has many subclasses: an outage exits 69, the rest 2
        from interlingua.models.registry_errors import registry_error

        raise registry_error(uri, err, pinned=pinned, store=location) from err
    return encoder_folder_of_mlflow_model(local, uri, mlmodel)


#: In each registry download-cache entry: the ``models:/NAME/VERSION`` it holds (read by ``interlingua gc``).
CACHE_SOURCE = "source.txt"


def _version_location(pinned: str) -> str:
    """Where the registry stores the files of ``models:/NAME/VERSION`` (a folder, ``s3://…``); "" for other URIs."""
    if not pinned.startswith("models:/"):
        return ""
    name, _, version = pinned[len("models:/"):].rpartition("/")
    if not version.isdigit():
        return ""
    from mlflow.tracking import MlflowClient

    return MlflowClient().get_model_version_download_uri(name, version)


def _local_artifact_folder(location: str) -> Path | None:
    """A version's storage ``location`` (:func:`_version_location`) when it is a local folder (the default SQLite +
    local artifact store): that folder, read in place instead of copied. None for remote stores and other URIs."""
    if not location:
        return None
    from urllib.parse import unquote, urlparse

    parsed = urlparse(location)
    if parsed.scheme not in ("", "file") or parsed.netloc not in ("", "localhost"):
        return None
    folder = Path(unquote(parsed.path))
    return folder if (folder / "MLmodel").is_file() else None


def read_mlmodel(path: str | Path) -> dict:
    """An MLflow model's ``MLmodel`` file (plain YAML, ``safe_load``: nothing is executed) as a mapping; a
    ``ValueError`` when it holds something else."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds a {type(data).__name__}, not a mapping")
    return data


def encoder_folder_of_mlflow_model(local: str | Path, uri: str = "", mlmodel: dict | None = None) -> str:
    """The sentence-transformers folder inside a downloaded MLflow model, read from its ``MLmodel``
    (plain YAML; ``mlmodel``: as the caller read it already) — nothing in the model is unpickled or executed.

    - ``sentence_transformers`` flavor (what the registry logs now): its data folder, once the model passes
      :func:`~interlingua.models.servable.check_servable` (what ``mlflow.pyfunc.load_model`` of it would run is
      MLflow's sentence-transformers loader, no pickle: the rule ``interlingua promote`` applies).
    - ``python_function`` with a ``python_model`` and an ``encoder`` artifact (the cloudpickled pyfunc
      the registry logged before): the encoder folder among its artifacts; the pickle is never read.
    - a plain folder (``runs:/RUN/path/to/encoder``): the model folder under it.
    """
    from interlingua.models.servable import check_servable, local_files

    local = Path(local)
    if mlmodel is None:
        if not (local / "MLmodel").is_file():
            return find_model_root(local)
        mlmodel = read_mlmodel(local / "MLmodel")
    flavors = mlmodel.get("flavors") or {}
    if "sentence_transformers" in flavors:
        check_servable(mlmodel, local_files(local), uri or str(local))
        data = (flavors.get("python_function") or {}).get("data") or "model.sentence_transformer"
        return _inside(local, data, uri)
    pyfunc = flavors.get("python_function") or {}
    artifacts = pyfunc.get("artifacts") or {}
    if "encoder" in artifacts:
        return find_model_root(_inside(local, artifacts["encoder"].get("path", "artifacts/encoder"), uri))
    raise UserError(f"{uri or local} is an MLflow model with flavors {sorted(flavors)}, not an encoder; "
                    "interlingua loads the 'sentence_transformers' flavor (and, read-only, its older pyfunc layout)")


def _inside(root: Path, relative: str, uri: str) -> str:
    from interlingua.core.confined import path_inside

    folder = path_inside(root, relative, f"{uri or root}: its MLmodel's data path")
    if not folder.is_dir():
        raise UserError(f"{uri or root}: its MLmodel names {relative!r}, which is not a folder inside the model")
    return str(folder)


def pin_registry_uri(uri: str) -> str:
    """``models:/NAME@ALIAS`` -> ``models:/NAME/VERSION`` (the version the alias names now); other URIs
    (``models:/NAME/VERSION``, ``runs:/...``) already name immutable artifacts and are returned as they are. A registry
    failure is :func:`~interlingua.models.registry_errors.registry_error`'s line: an outage exits 69, the rest 2; a
    ``models:/`` URI of neither form is a :class:`UserError` before the registry is asked
    (:func:`registered_uri_problem`)."""
    found = registered_version(uri)
    if found is None:
        return uri
    subpath = parse_registry_uri(uri).subpath
    return found.uri + (f"/{subpath}" if subpath else "")


@dataclass(frozen=True)
class RegisteredVersion:
    """A registered model version and the run that registered it."""

    name: str
    version: str
    run_id: str

    @property
    def uri(self) -> str:
        return f"models:/{self.name}/{self.version}"


def registered_version(uri: str) -> RegisteredVersion | None:
    """The version ``models:/NAME@ALIAS`` (or ``models:/NAME@ALIAS/PATH``) names now, by one registry call; None for
    any other URI (a version, ``runs:/...``, a folder: nothing to look up). A ``models:/`` URI of neither form is a
    :class:`UserError` before the registry is asked (:func:`registered_uri_problem`); a registry failure is
    :func:`~interlingua.models.registry_errors.registry_error`'s line: an outage exits 69, the rest 2."""
    problem = registered_uri_problem(uri)
    if problem:
        raise UserError(problem)
    parsed = parse_registry_uri(uri)
    if parsed is None or not parsed.alias:
        return None
    from mlflow.tracking import MlflowClient

    from interlingua.models.registry_errors import registry_error

    try:
        found = MlflowClient().get_model_version_by_alias(parsed.name, parsed.alias)
    except Exception as err:  # MlflowException has many subclasses
        raise registry_error(uri, err) from err
    return RegisteredVersion(parsed.name, str(found.version), found.run_id)


def registered_uri_problem(uri: str) -> str:
    """Why a ``models:/`` URI names no registered version, or ``""`` (also for any other URI): it needs a name and
    ``@ALIAS`` or ``/VERSION`` after it (MLflow reads a bare ``models:/ID`` as the id of a logged model, which is not
    looked up in the registry, and answers "Logged model with ID … not found"); MLflow 3's logged model
    (``models:/m-<32 hex digits>``) is read as before."""
    parsed = parse_registry_uri(uri)
    if parsed is None or parsed.names_a_model:
        return ""
    name = parsed.name or "NAME"
    return (f"{uri!r} is not a registered model URI: it needs models:/NAME@ALIAS or models:/NAME/VERSION "
            f"(hint: e.g. models:/{name}@champion or models:/{name}/1)")


def _from_fsspec(uri: str, cache: Path) -> str:
    """A local copy of the model folder at ``uri``, fetched once per state of the remote files: the cache entry is
    keyed by the URL and the files' listing (relative path, size, ETag or modification time), so a model replaced
    at the same URL is fetched again. A copy is published (renamed into place, ``.complete`` beside the files) only
    when the download finished; an interrupted one stays a ``*.partial-PID`` folder, which ``interlingua gc`` prunes."""
    from interlingua.core.url_filesystems import url_filesystem

    fs, root = url_filesystem(uri)
    if not fs.exists(root):
        raise UserError(f"model URL {uri!r} does not exist")
    key = hashlib.sha1(f"{uri}\n{_remote_listing(fs, root)}".encode("utf-8")).hexdigest()[:16]

    def download(partial: Path) -> str:
        fs.get(root.rstrip("/") + "/", str(partial / "model") + "/", recursive=True)
        return str(partial / "model")

    return find_model_root(cached_copy(cache / f"fsspec-{key}", download))


def cached_copy(target: Path, fetch) -> Path:
    """The folder a finished copy at ``target`` holds, made first when missing: ``fetch(partial)`` fills a
    ``TARGET.partial-PID`` folder beside it and returns the copied folder; ``.complete`` (that folder, relative)
    is written last and the whole is renamed into place, so an interrupted copy is never taken for a finished
    one (``interlingua gc`` prunes the partial folders)."""
    complete = target / ".complete"
    if not complete.exists():
        shutil.rmtree(target, ignore_errors=True)  # a copy made before the marker existed
        partial = target.parent / f"{target.name}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        local = fetch(partial)
        (partial / ".complete").write_text(os.path.relpath(local, partial) + "\n", encoding="utf-8")
        try:
            partial.rename(target)
        except OSError:  # another process published the same copy first
            shutil.rmtree(partial, ignore_errors=True)
    return target / complete.read_text(encoding="utf-8").strip()


def _remote_listing(fs, root: str) -> str:
    """One line per file under ``root``: relative path, size and the store's change marker (ETag, else the
    modification or creation time). A store that gives neither is keyed by path and size only."""
    from interlingua.core.inputs import change_markers

    lines = []
    for path, info in sorted(fs.find(root, detail=True).items()):
        etag, mtime = change_markers(info)
        marker = next((m for m in (etag, mtime, info.get("created")) if m is not None), "")
        lines.append(f"{path[len(root.rstrip('/')):]}\t{info.get('size')}\t{marker}")
    return "\n".join(lines)


def from_hub(repo_id: str) -> str:
    """The local snapshot folder of hub repository ``repo_id`` (downloaded once by huggingface_hub); offline or
    unknown, a ``UserError`` saying what to pass instead."""
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id)
    except Exception as err:
        first = next((line.strip() for line in str(err).splitlines() if line.strip()), "")
        raise UserError(
            f"could not load {repo_id!r} from the Hugging Face hub ({type(err).__name__}: {first[:200]}); "
            "offline, pass a local folder, an fsspec URL or models:/NAME@ALIAS") from err
