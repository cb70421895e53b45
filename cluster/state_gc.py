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
``tmp/*``               temporary folders (an eflomal run's text, lexical tables, ...) left by a process killed
                        before it removed them. One made on this machine (its name says so): pruned when no
                        process holds it (``core.tempdir_lock``) and nothing in it changed for a day. One made
                        on another machine, or whose machine its name does not tell: its lock cannot be seen
                        from here (NFS), so pruned only when nothing in it changed for a week.
                        ``tmp/u<uid>/eflomal-*``: this user's seeded eflomal binaries, the week's rule, this
                        installation's never. Other users' folders are theirs (listed, never pruned; root's
                        gc judges them all).
=====================  ==========================================================================

Corpus versions are never touched here: their retention is the corpus store's (it keeps what a pointer,
a pin or a registered model's ``interlingua.corpus_versions`` tag refers to).

A state folder may be shared, so what it holds is untrusted: gc never follows a symbolic link. A link where a
folder above is expected (``mlartifacts/models``, ``model_cache``, ...) or in place of an item is listed once as
``skip`` (kind ``symbolic link``, with its target) and neither entered, sized nor removed; sizes count regular files
only, without entering linked folders; deletion opens every folder on the way from the walked root without following
links, so a folder swapped for a link after planning is not followed either.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from interlingua.core.paging import paged
from interlingua.core.processes import process_alive

_RUN_SUFFIX = re.compile(r"-([0-9a-f]{8})$")


@dataclass(frozen=True)
class GcItem:
    kind: str
    path: Path
    size: int
    prune: bool
    reason: str
    root: Path | None = None  # the folder the walk started from (trusted); prune opens the path from it, no link followed


#: The kind of the note on a symbolic link found where gc walks (never followed, never pruned).
SYMLINK = "symbolic link"
#: Kinds of what gc leaves alone without deciding (``interlingua gc`` always lists them, as ``skip``).
NOTES = (SYMLINK, "unreadable")


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
    for model in paged(client.search_registered_models):
        held |= {(model.name, str(v)) for v in (model.aliases or {}).values()}
    for version in paged(client.search_model_versions):
        uri = f"models:/{version.name}/{version.version}"
        if version.run_id:
            version_runs[version.run_id] = uri
        for text in (getattr(version, "model_id", None), version.source):
            match = re.search(r"\b(m-[0-9a-f]{32})\b", str(text or ""))
            if match:
                model_ids.add(match.group(1))
    live = set()
    experiments = [e.experiment_id for e in paged(client.search_experiments, view_type=ViewType.ALL)]
    if experiments:
        live = {r.info.run_id for r in paged(client.search_runs, experiment_ids=experiments,
                                             run_view_type=ViewType.ACTIVE_ONLY)}
    return RegistryView(version_runs, model_ids, held, live)


def plan_gc(state: Path, view: RegistryView, *, local_artifacts: Path | None,
            ct2_cache: Path | None = None) -> list[GcItem]:
    """Every item of the state folder that gc considers, with its decision. ``local_artifacts``: the
    local MLflow artifact root to check for orphans (None when the tracking store is remote); ``ct2_cache``:
    the CTranslate2 conversion cache, for interrupted conversions."""
    items: list[GcItem] = []
    for folder in _subfolders(state, "ray_results", items):
        run = _registered_run(folder.name, view)
        items.append(GcItem("ray results", folder, folder_size(folder), run is not None,
                            f"its model is registered ({run})" if run else "no registered version comes from this run (resumable)",
                            state))
    for folder in _subfolders(state, "amr_retrofit", items):
        uri = view.version_runs.get(folder.name)
        items.append(GcItem("training input", folder, folder_size(folder), uri is not None,
                            f"its model is registered ({uri})" if uri else "its run has no registered version yet", state))
    for folder in _subfolders(state, "model_cache", items):
        items.append(_cache_item(folder, view, state))
    if ct2_cache is not None:
        items += [_partial_item(folder, "ct2 conversion", "interrupted conversion", ct2_cache)
                  for folder in _subfolders(ct2_cache, "", items, lambda name: ".partial-" in name)]
    if local_artifacts is not None:
        items += _orphaned_artifacts(local_artifacts, view, state)
    items += _temporary_items(state, items)
    return items


def prune(items: list[GcItem]) -> int:
    """Delete the items marked for pruning; returns the bytes freed. Each is reached from its ``root`` without
    following a link (:func:`_remove_below`): one that became a link, or moved, since planning is left alone."""
    freed = 0
    for item in items:
        if item.prune and item.root is not None and _remove_below(item.root, item.path):
            freed += item.size
    return freed


def folder_size(path: Path) -> int:
    """Bytes of the regular files in ``path`` (or of ``path`` itself), never following a link."""
    return _size_and_newest_change(path)[0]


def _size_and_newest_change(path: Path) -> tuple[int, float]:
    """In one walk never following a link: the bytes of the regular files in ``path`` (or of ``path`` itself), and
    the latest modification time of ``path`` and of everything in it; ``(0, inf)`` when it is gone (nothing to
    decide)."""
    try:
        info = path.lstat()
    except OSError:
        return 0, float("inf")
    if not stat.S_ISDIR(info.st_mode):
        return (info.st_size if stat.S_ISREG(info.st_mode) else 0), info.st_mtime
    total, newest, pending = 0, info.st_mtime, [str(path)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    found = entry.stat(follow_symlinks=False)
                    newest = max(newest, found.st_mtime)
                    if stat.S_ISDIR(found.st_mode):
                        pending.append(entry.path)
                    elif stat.S_ISREG(found.st_mode):
                        total += found.st_size
        except OSError:
            continue
    return total, newest


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


def _cache_item(folder: Path, view: RegistryView, root: Path) -> GcItem:
    from interlingua.models.load import CACHE_SOURCE

    if ".partial-" in folder.name:
        return _partial_item(folder, "registry cache", "interrupted download", root)
    size = folder_size(folder)
    if folder.name.startswith("fsspec-"):
        return GcItem("url cache", folder, size, True, "copy of a remote model URL (fetched again on use)", root)
    pinned = _read_small(folder, CACHE_SOURCE)
    if pinned is None:
        return GcItem("registry cache", folder, size, True, "cache entry without a recorded source", root)
    pinned = pinned.strip()
    name, _, version = pinned.removeprefix("models:/").rpartition("/")
    held = (name, version) in view.alias_held
    return GcItem("registry cache", folder, size, not held,
                  f"{pinned} is held by an alias" if held else f"no alias holds {pinned}", root)


#: A partial copy whose process is alive is left alone unless it has not changed for this long.
_PARTIAL_GRACE_SECONDS = 24 * 3600


def _partial_item(folder: Path, kind: str, what: str, root: Path) -> GcItem:
    """A ``NAME.partial-PID`` folder (``models.load.cached_copy``): pruned unless process PID is alive on this
    machine and the folder changed within a day (a copy being made now; pruning it would fail that process)."""
    import time

    size = folder_size(folder)
    pid = folder.name.rpartition(".partial-")[2]
    recent = time.time() - folder.lstat().st_mtime < _PARTIAL_GRACE_SECONDS
    if _alive(pid) and recent:
        return GcItem(kind, folder, size, False, f"being written by process {pid}", root)
    return GcItem(kind, folder, size, True, what, root)


#: A temporary folder in which nothing changed for this long, and that no process holds, was left behind.
_TEMPORARY_GRACE_SECONDS = 24 * 3600
#: The same for a folder made on another machine (or one its name does not tell): no lock of it can be seen from here.
_UNSEEN_LOCK_GRACE_SECONDS = 7 * 24 * 3600


def _temporary_items(state: Path, notes: list[GcItem]) -> list[GcItem]:
    """The folders in ``<state>/tmp`` (other users' ``u<uid>`` folders not entered) and this user's seeded eflomal
    binaries: pruned when stale (:func:`_temporary_item`); this installation's binary never."""
    from interlingua.core.state_tmp import is_binary_folder_name, is_user_folder_name, user_folder_name
    from interlingua.operators.align.eflomal_backend import current_binary_folder_name

    mine, current = user_folder_name(), current_binary_folder_name()
    binaries = Path("tmp", mine) if mine is not None else Path("tmp")
    items = []
    for folder in _subfolders(state, "tmp", notes, lambda name: not is_user_folder_name(name)):
        if mine is None and folder.name == current:
            continue  # no user ids (Windows): the binary's folder is here, listed below
        items.append(_temporary_item(folder, "temporary folder", state))
    if mine is not None or current is not None:
        for folder in _subfolders(state, binaries, notes, is_binary_folder_name):
            if folder.name == current:
                items.append(GcItem("eflomal binary", folder, folder_size(folder), False,
                                    "this installation's seeded eflomal binary", state))
            elif mine is not None:
                items.append(_temporary_item(folder, "eflomal binary", state))
    return items


def _temporary_item(folder: Path, kind: str, root: Path) -> GcItem:
    """Pruned when a process killed left ``folder``: another user's is theirs (unless gc runs as root); one made on this
    machine, when no process holds it and nothing in it changed for a day; any other, whose lock cannot be seen from
    here (``core.tempdir_lock``), when nothing in it changed for a week."""
    import time

    from interlingua.core.tempdir_lock import folder_host, held, this_host
    from interlingua.core.state_tmp import euid

    uid = euid()
    try:
        owner = folder.lstat().st_uid
    except OSError:
        owner = uid
    if uid not in (None, 0) and owner != uid:
        return GcItem(kind, folder, 0, False, f"another user's (uid {owner}): theirs to remove", root)
    size, newest = _size_and_newest_change(folder)
    if held(str(folder)):
        return GcItem(kind, folder, size, False, "in use by a running process", root)
    host = folder_host(folder.name)
    age = time.time() - newest
    if host is not None and host == this_host():
        if age < _TEMPORARY_GRACE_SECONDS:
            return GcItem(kind, folder, size, False, "changed within a day (may be in use)", root)
        return GcItem(kind, folder, size, True, "left behind (unchanged for over a day, no process holds it)", root)
    made = f"made on {host}" if host is not None else "made on a machine its name does not tell"
    if age < _UNSEEN_LOCK_GRACE_SECONDS:
        return GcItem(kind, folder, size, False, f"{made} (its lock cannot be seen from here): kept until "
                      "unchanged for a week", root)
    return GcItem(kind, folder, size, True, f"left behind ({made}, unchanged for over a week)", root)


def _alive(pid: str) -> bool:
    """Whether ``pid`` (ASCII digits) names a live process on this machine. 0 (the caller's process group) and a
    number no process id can be (``os.kill`` raises OverflowError) name no process that writes a copy."""
    if not re.fullmatch(r"[0-9]+", pid):
        return False
    try:
        return process_alive(int(pid))
    except ValueError:  # 0, or too large for a process id
        return False


def _orphaned_artifacts(artifacts: Path, view: RegistryView, state: Path) -> list[GcItem]:
    """Orphans in the local artifact folder, walked from ``state`` when it lies inside it (so a link in its place
    is not followed), else from itself."""
    import yaml

    root, relative = (state, artifacts.relative_to(state)) if artifacts.is_relative_to(state) else (artifacts, Path())
    items: list[GcItem] = []
    for folder in _subfolders(root, relative, items, lambda name: re.fullmatch(r"[0-9a-f]{32}", name) is not None):
        if folder.name not in view.live_runs:
            items.append(GcItem("orphaned artifacts", folder, folder_size(folder), True,
                                "its run was deleted or does not exist", root))
    for folder in _subfolders(root, relative / "models", items):
        if folder.name in view.version_model_ids:
            continue
        try:
            mlmodel = yaml.safe_load(_read_small(folder, "artifacts/MLmodel") or "")
        except yaml.YAMLError:
            mlmodel = None
        run_id = mlmodel.get("run_id") if isinstance(mlmodel, dict) else None
        if isinstance(run_id, str) and run_id in view.live_runs:
            continue  # an unregistered model its (live) run still refers to
        items.append(GcItem("orphaned model", folder, folder_size(folder), True,
                            "no registered version refers to it and its run is gone", root))
    return items


def _subfolders(root: Path, relative: str | Path, notes: list[GcItem], wanted=lambda name: True) -> list[Path]:
    """The real folders in ``root/relative`` whose name is ``wanted``, never following a link: a link on the way
    below ``root`` or among the wanted entries is appended to ``notes`` once (kept, not entered)."""
    folder = root
    for part in Path(relative).parts:
        folder = folder / part
        if folder.is_symlink():
            notes.append(_link_note(folder, root))
            return []
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as err:
        notes.append(GcItem("unreadable", folder, 0, False, f"cannot be listed ({err.strerror})", root))
        return []
    found = []
    for entry in entries:
        if not wanted(entry.name):
            continue
        if entry.is_symlink():
            notes.append(_link_note(Path(entry.path), root))
        elif entry.is_dir(follow_symlinks=False):
            found.append(Path(entry.path))
    return found


def _link_note(path: Path, root: Path) -> GcItem:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return GcItem(SYMLINK, path, 0, False, f"-> {target}; gc never follows a link (remove the link yourself if "
                  "nothing needs it)", root)


def _read_small(folder: Path, relative: str, limit: int = 1 << 20) -> str | None:
    """The text of the regular file ``folder/relative`` when no part of ``relative`` is a link and it is at most
    ``limit`` bytes (a cache's source, a logged model's MLmodel); None otherwise."""
    path = folder
    for part in Path(relative).parts:
        path = path / part
        try:
            info = path.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode):
            return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _remove_below(root: Path, path: Path) -> bool:
    """Remove ``path`` (a folder or a file below ``root``) with :meth:`StoreFolders.remove_tree`, which opens every
    folder from ``root`` down with ``O_NOFOLLOW`` and ``rmtree``s relative to its parent's descriptor (never
    following links inside). False when it is gone, is a link (left for its owner), or a folder on the way is a
    link or not a folder."""
    from fsspec.implementations.local import LocalFileSystem

    from interlingua.core.no_follow import StoreFolders

    try:
        return StoreFolders(LocalFileSystem(), str(root)).remove_tree(str(path), keep_link=True)
    except (OSError, ValueError):  # StoreLinkError is a ValueError, as is a path not below root
        return False
