"""Load a :class:`SentenceEncoder` from wherever it lives.

=====================================  ==========================================================
``models:/NAME@ALIAS``, ``models:/NAME/3``  MLflow model registry (downloaded to a local cache)
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
from pathlib import Path

from interlingua.models.combined import COMBINED_FILE, is_combined_folder
from interlingua.models.sentence_encoder import SentenceEncoder
from interlingua.core.errors import UserError

MLFLOW_SCHEMES = ("models:/", "runs:/")


def load_encoder(uri: str, *, pooling: str | None = None, max_length: int | None = None,
                 prefix: str | None = None, cache_dir: str | os.PathLike | None = None) -> SentenceEncoder:
    """Resolve ``uri`` to a local folder and load it (see the module docstring for accepted forms)."""
    folder = resolve_model_folder(uri, cache_dir=cache_dir)
    encoder = load_encoder_folder(folder, pooling=pooling, max_length=max_length, prefix=prefix)
    encoder.name = uri
    return encoder


def load_encoder_folder(folder: str, **options):
    """A local encoder folder: a :class:`SentenceEncoder`, or a saved combination of two
    (:data:`~interlingua.models.combined.COMBINED_FILE`) whose parts get ``options``."""
    from interlingua.models.combined import is_combined_folder, load_combined

    if is_combined_folder(folder):
        return load_combined(folder, lambda part: SentenceEncoder.from_folder(part, **options))
    return SentenceEncoder.from_folder(folder, **options)


def resolve_model_folder(uri: str, cache_dir: str | os.PathLike | None = None) -> str:
    """A local folder holding the model files for ``uri`` (downloads when remote)."""
    if uri.startswith(MLFLOW_SCHEMES):
        return _from_mlflow(uri, _cache(cache_dir))
    if uri.startswith("file://"):
        uri = uri[len("file://"):]
    if "://" in uri:
        return _from_fsspec(uri, _cache(cache_dir))
    path = Path(uri).expanduser()
    if path.exists():
        if not (path / "config.json").exists() and not is_combined_folder(path):
            raise UserError(f"{path} is not a model folder: no config.json in it")
        return str(path)
    if uri.startswith((".", "/", "~")) or uri.count("/") > 1:
        raise UserError(f"model folder {uri!r} does not exist")
    return _from_hub(uri)


def find_model_root(folder: str | Path) -> str:
    """The folder (``folder`` or one below it) that holds ``config.json`` (or a saved combination)."""
    folder = Path(folder)
    if (folder / "config.json").exists() or is_combined_folder(folder):
        return str(folder)
    combined = sorted(folder.rglob(COMBINED_FILE), key=lambda p: len(p.parts))
    if combined:
        return str(combined[0].parent)
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


def _from_mlflow(uri: str, cache: Path) -> str:
    """Download the model behind ``uri`` once per immutable version; aliases are resolved on every call."""
    import mlflow

    try:
        pinned = pin_registry_uri(uri)  # aliases move: ask the registry which version the URI names now
        target = cache / ("mlflow-" + hashlib.sha1(pinned.encode()).hexdigest()[:16])
        complete = target / ".complete"
        if not complete.exists():
            shutil.rmtree(target, ignore_errors=True)
            partial = cache / (target.name + f".partial-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            local = mlflow.artifacts.download_artifacts(artifact_uri=pinned, dst_path=str(partial))
            (partial / ".complete").write_text(os.path.relpath(local, partial) + "\n", encoding="utf-8")
            try:
                partial.rename(target)
            except OSError:  # another process published the same version first
                shutil.rmtree(partial, ignore_errors=True)
        local = target / complete.read_text(encoding="utf-8").strip()
    except Exception as err:  # MlflowException has many subclasses; report them all plainly
        raise UserError(f"could not fetch {uri} from MLflow ({mlflow.get_tracking_uri()}): {err}") from err
    return find_model_root(local)


def pin_registry_uri(uri: str) -> str:
    """``models:/NAME@ALIAS`` -> ``models:/NAME/VERSION`` (the version the alias names now); other URIs
    (``models:/NAME/VERSION``, ``runs:/...``) already name immutable artifacts and are returned as they are."""
    if not uri.startswith("models:/") or "@" not in uri:
        return uri
    from mlflow.tracking import MlflowClient

    name, _, rest = uri[len("models:/"):].partition("@")
    alias, _, subpath = rest.partition("/")
    version = MlflowClient().get_model_version_by_alias(name, alias).version
    return f"models:/{name}/{version}" + (f"/{subpath}" if subpath else "")


def _from_fsspec(uri: str, cache: Path) -> str:
    import fsspec

    fs, root = fsspec.core.url_to_fs(uri)
    if not fs.exists(root):
        raise UserError(f"model URL {uri!r} does not exist")
    target = cache / ("fsspec-" + hashlib.sha1(uri.encode()).hexdigest()[:16])
    if not (target / "config.json").exists():
        target.mkdir(parents=True, exist_ok=True)
        fs.get(root.rstrip("/") + "/", str(target) + "/", recursive=True)
    return find_model_root(target)


def _from_hub(repo_id: str) -> str:
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id)
    except Exception as err:
        raise UserError(
            f"could not load {repo_id!r} from the Hugging Face hub ({type(err).__name__}: {err}); "
            "offline, pass a local folder, an fsspec URL or models:/NAME@ALIAS") from err
