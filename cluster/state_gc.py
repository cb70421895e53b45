"""What the state folder holds that nothing refers to any more, and pruning it (``interlingua gc``).

Reference rules (everything else is kept and listed with why):

=====================  ==========================================================================
``ray_results/NAME``    Ray Train results of a run (checkpoints: DeepSpeed state + encoder). Pruned once
                        a registered model version comes from that run (the name ends with the first 8
                        characters of the MLflow run id): the model then lives in the registry, once.
                        Runs with no registered version are kept (they may be resumed).
``model_cache/mlflow-*``  registry download cache. Kept while an alias holds the version it caches.
``model_cache/fsspec-*``  copies of remote model URLs (fetched again on use); ``*.partial-PID``: interrupted
                        downloads (kept while process PID is alive on this machine and the folder changed
                        in the last day: a copy being made).
``~/.cache/interlingua/ct2/*.partial-PID``  interrupted CTranslate2 conversions (the same rule); finished
                        conversions are kept.
``mlartifacts/RUN_ID``  artifacts of runs that no longer exist or were deleted in MLflow.
``mlartifacts/models/m-*``  logged models that no registered version refers to and whose run is gone.
``amr_retrofit/RUN_ID``  a retrofit run's extended base encoder, once that run's model is registered.
=====================  ==========================================================================

Corpus versions are never touched here: their retention is the corpus store's (it keeps what a pointer,
a pin or a registered model's ``interlingua.corpus_versions`` tag refers to).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

_RUN_SUFFIX = re.compile(r"-([0-9a-f]{8})$")


@dataclass(frozen=True)
class GcItem:
    kind: str
    path: Path
    size: int
    prune: bool
    reason: str


@dataclass(frozen=True)
class RegistryView:
    """What the registry refers to: versions' runs and logged models, and the versions aliases hold."""

    version_runs: dict[str, str]          # run id -> "models:/NAME/VERSION"
    version_model_ids: set[str]           # logged-model ids (m-...) of registered versions
    alias_held: set[tuple[str, str]]      # (name, version) that some alias names
    live_runs: set[str]                   # run ids that exist and are not deleted


def registry_view(client) -> RegistryView:
    from mlflow.entities import ViewType

    version_runs: dict[str, str] = {}
    model_ids: set[str] = set()
    held: set[tuple[str, str]] = set()
    for model in _paged(client.search_registered_models):
        held |= {(model.name, str(v)) for v in (model.aliases or {}).values()}
    for version in _paged(client.search_model_versions):
        uri = f"models:/{version.name}/{version.version}"
        if version.run_id:
            version_runs[version.run_id] = uri
        for text in (getattr(version, "model_id", None), version.source):
            match = re.search(r"\b(m-[0-9a-f]{32})\b", str(text or ""))
            if match:
                model_ids.add(match.group(1))
    live = set()
    experiments = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    if experiments:
        live = {r.info.run_id for r in _paged(lambda **kw: client.search_runs(experiments, run_view_type=ViewType.ACTIVE_ONLY, **kw))}
    return RegistryView(version_runs, model_ids, held, live)


def plan_gc(state: Path, view: RegistryView, *, local_artifacts: Path | None,
            ct2_cache: Path | None = None) -> list[GcItem]:
    """Every item of the state folder that gc considers, with its decision. ``local_artifacts``: the
    local MLflow artifact root to check for orphans (None when the tracking store is remote); ``ct2_cache``:
    the CTranslate2 conversion cache, for interrupted conversions."""
    items: list[GcItem] = []
    for folder in _subfolders(state / "ray_results"):
        run = _registered_run(folder.name, view)
        items.append(GcItem("ray results", folder, folder_size(folder), run is not None,
                            f"its model is registered ({run})" if run else "no registered version comes from this run (resumable)"))
    for folder in _subfolders(state / "amr_retrofit"):
        uri = view.version_runs.get(folder.name)
        items.append(GcItem("training input", folder, folder_size(folder), uri is not None,
                            f"its model is registered ({uri})" if uri else "its run has no registered version yet"))
    for folder in _subfolders(state / "model_cache"):
        items.append(_cache_item(folder, view))
    if ct2_cache is not None:
        items += [_partial_item(folder, "ct2 conversion", "interrupted conversion")
                  for folder in _subfolders(ct2_cache) if ".partial-" in folder.name]
    if local_artifacts is not None:
        items += _orphaned_artifacts(local_artifacts, view)
    return items


def prune(items: list[GcItem]) -> int:
    """Delete the items marked for pruning; returns the bytes freed."""
    freed = 0
    for item in items:
        if item.prune and item.path.exists():
            shutil.rmtree(item.path) if item.path.is_dir() else item.path.unlink()
            freed += item.size
    return freed


def folder_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def human_size(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover


def _registered_run(name: str, view: RegistryView) -> str | None:
    match = _RUN_SUFFIX.search(name)
    if not match:
        return None
    return next((uri for run_id, uri in view.version_runs.items() if run_id.startswith(match.group(1))), None)


def _cache_item(folder: Path, view: RegistryView) -> GcItem:
    from interlingua.models.load import CACHE_SOURCE

    if ".partial-" in folder.name:
        return _partial_item(folder, "registry cache", "interrupted download")
    size = folder_size(folder)
    if folder.name.startswith("fsspec-"):
        return GcItem("url cache", folder, size, True, "copy of a remote model URL (fetched again on use)")
    source = folder / CACHE_SOURCE
    if not source.is_file():
        return GcItem("registry cache", folder, size, True, "cache entry without a recorded source")
    pinned = source.read_text(encoding="utf-8").strip()
    name, _, version = pinned.removeprefix("models:/").rpartition("/")
    held = (name, version) in view.alias_held
    return GcItem("registry cache", folder, size, not held,
                  f"{pinned} is held by an alias" if held else f"no alias holds {pinned}")


#: A partial copy whose process is alive is left alone unless it has not changed for this long.
_PARTIAL_GRACE_SECONDS = 24 * 3600


def _partial_item(folder: Path, kind: str, what: str) -> GcItem:
    """A ``NAME.partial-PID`` folder (``models.load.cached_copy``): pruned unless process PID is alive on this
    machine and the folder changed within a day (a copy being made now; pruning it would fail that process)."""
    import os
    import time

    size = folder_size(folder)
    pid = folder.name.rpartition(".partial-")[2]
    alive = False
    if pid.isdigit():
        try:
            os.kill(int(pid), 0)
            alive = True
        except ProcessLookupError:
            alive = False
        except PermissionError:  # another user's live process
            alive = True
    recent = time.time() - folder.stat().st_mtime < _PARTIAL_GRACE_SECONDS
    if alive and recent:
        return GcItem(kind, folder, size, False, f"being written by process {pid}")
    return GcItem(kind, folder, size, True, what)


def _orphaned_artifacts(root: Path, view: RegistryView) -> list[GcItem]:
    import yaml

    items = []
    for folder in _subfolders(root):
        if re.fullmatch(r"[0-9a-f]{32}", folder.name) and folder.name not in view.live_runs:
            items.append(GcItem("orphaned artifacts", folder, folder_size(folder), True,
                                "its run was deleted or does not exist"))
    for folder in _subfolders(root / "models"):
        if folder.name in view.version_model_ids:
            continue
        mlmodel = folder / "artifacts" / "MLmodel"
        run_id = (yaml.safe_load(mlmodel.read_text(encoding="utf-8")) or {}).get("run_id") if mlmodel.is_file() else None
        if run_id in view.live_runs:
            continue  # an unregistered model its (live) run still refers to
        items.append(GcItem("orphaned model", folder, folder_size(folder), True,
                            "no registered version refers to it and its run is gone"))
    return items


def _subfolders(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []


def _paged(search):
    token = None
    while True:
        page = search(max_results=500, page_token=token) if token else search(max_results=500)
        yield from page
        token = getattr(page, "token", None)
        if not token:
            return
