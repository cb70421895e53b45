"""Training checkpoints that a rerun can trust: found on disk, complete only when sealed.

Ray Train copies each worker's checkpoint folder into ``<storage>/<name>/checkpoint_*`` and only afterwards
records it in its own snapshot; a driver killed in between leaves a folder Ray does not know (and a rerun
used to start at step 1). So each worker *seals* its part of a checkpoint before handing it to Ray:

- ``rng-rank<r>.npy`` — the worker's torch RNG state (dropout continues exactly where it stopped);
- ``complete-rank<r>.json`` — written last: the step, the world size, the final metrics and the size of
  every file of this worker's part.

A checkpoint folder is **complete** when the markers of all ranks are there and every file they list exists
with the listed size (Ray copies files in any order, so the marker alone could arrive before the data).
:func:`latest_complete` scans a run folder and returns the complete checkpoint with the highest step; a
rerun resumes from it whatever Ray's snapshot says. Nothing here unpickles: markers are JSON, RNG states
``.npy`` read with ``allow_pickle=False``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from interlingua.trainers.worker_output import show

MARKER_PREFIX = "complete-rank"
RNG_PREFIX = "rng-rank"
CUDA_SUFFIX = "-cuda.npy"  # the worker's CUDA generators' states, one row per visible device


@dataclass(frozen=True)
class CheckpointInfo:
    """A complete checkpoint folder: where, at which step, and the metrics reported with it."""

    path: str
    step: int
    metrics: dict = field(default_factory=dict)


def seal(folder: str | os.PathLike, *, rank: int, world_size: int, step: int, metrics: dict | None = None) -> None:
    """Finish this worker's part of a checkpoint in ``folder``: its RNG state, then its marker, written last."""
    import torch

    folder = Path(folder)
    np.save(folder / f"{RNG_PREFIX}{rank}.npy", torch.get_rng_state().numpy())
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # dropout on a GPU draws from the device's generator
        np.save(folder / f"{RNG_PREFIX}{rank}{CUDA_SUFFIX}", np.stack([s.numpy() for s in torch.cuda.get_rng_state_all()]))
    files = {p.relative_to(folder).as_posix(): p.stat().st_size
             for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.startswith(MARKER_PREFIX)}
    marker = {"step": int(step), "rank": int(rank), "world_size": int(world_size), "files": files,
              "metrics": {k: v for k, v in (metrics or {}).items() if isinstance(v, (int, float, str))}}
    partial = folder / f".{MARKER_PREFIX}{rank}.json.partial"
    partial.write_text(json.dumps(marker, sort_keys=True), encoding="utf-8")
    os.replace(partial, folder / f"{MARKER_PREFIX}{rank}.json")


def complete_checkpoint(folder: str | os.PathLike) -> CheckpointInfo | None:
    """``folder``'s :class:`CheckpointInfo` when every rank sealed it and all listed files are in place."""
    folder = Path(folder)
    markers = []
    for path in sorted(folder.glob(f"{MARKER_PREFIX}*.json")):
        try:
            markers.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None
    if not markers:
        return None
    world = markers[0].get("world_size")
    steps = {m.get("step") for m in markers}
    if not isinstance(world, int) or sorted(m.get("rank") for m in markers) != list(range(world)) or len(steps) != 1:
        return None
    for marker in markers:
        for relative, size in marker.get("files", {}).items():
            target = (folder / relative).resolve()
            if folder.resolve() not in target.parents or not target.is_file() or target.stat().st_size != size:
                return None
    rank0 = next(m for m in markers if m["rank"] == 0)
    return CheckpointInfo(str(folder), int(steps.pop()), dict(rank0.get("metrics", {})))


def latest_complete(run_dir: str | os.PathLike) -> CheckpointInfo | None:
    """The complete checkpoint with the highest step among ``<run_dir>/checkpoint_*`` (None if none)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return None
    found = [info for folder in run_dir.glob("checkpoint_*") if folder.is_dir()
             if (info := complete_checkpoint(folder)) is not None]
    return max(found, key=lambda info: (info.step, info.path), default=None)


def restore_rng(folder: str | os.PathLike, rank: int) -> bool:
    """Set torch's RNG to the state ``rank`` sealed in ``folder``, and its CUDA generators' when it sealed them and this
    worker sees as many devices; False when the folder has no state for ``rank``."""
    import torch

    from interlingua.core.safe_load import load_array

    path = Path(folder) / f"{RNG_PREFIX}{rank}.npy"
    if not path.is_file():
        return False
    torch.set_rng_state(torch.from_numpy(load_array(str(path)).astype(np.uint8)))
    cuda = Path(folder) / f"{RNG_PREFIX}{rank}{CUDA_SUFFIX}"
    if cuda.is_file() and torch.cuda.is_available():
        states = load_array(str(cuda)).astype(np.uint8)
        if states.ndim == 2 and len(states) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all([torch.from_numpy(np.ascontiguousarray(row)) for row in states])
        else:
            show(f"[train] warning: the checkpoint holds {len(states)} CUDA generator state(s), this worker sees "
                 f"{torch.cuda.device_count()} device(s): dropout continues from the seed, not where it stopped")
    return True
