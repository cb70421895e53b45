"""A checkpoint counts only when every rank sealed it and its files are all there; the newest complete one
on disk wins, whatever Ray recorded (a driver killed after the copy but before Ray's bookkeeping)."""

import json

import numpy as np
import pytest
import torch

from interlingua.trainers.engine.checkpoints import complete_checkpoint, latest_complete, restore_rng, seal


def _part(folder, rank, world, step, payload=b"weights"):
    (folder / "deepspeed").mkdir(parents=True, exist_ok=True)
    (folder / "deepspeed" / f"rank{rank}.bin").write_bytes(payload * (rank + 1))
    seal(folder, rank=rank, world_size=world, step=step, metrics={"loss": 1.5, "step": step, "skip": [1]})


def test_sealed_by_all_ranks_is_complete_with_step_and_metrics(tmp_path):
    folder = tmp_path / "checkpoint_a"
    _part(folder, 0, 2, 4)
    assert complete_checkpoint(folder) is None  # rank 1 has not sealed yet
    _part(folder, 1, 2, 4)
    info = complete_checkpoint(folder)
    assert (info.step, info.metrics) == (4, {"loss": 1.5, "step": 4})
    marker = json.loads((folder / "complete-rank1.json").read_text())
    assert marker["files"]["deepspeed/rank1.bin"] == 14  # each rank lists the files of its part with their sizes
    assert marker["files"]["rng-rank1.npy"] == (folder / "rng-rank1.npy").stat().st_size


def test_missing_or_short_files_make_it_incomplete(tmp_path):
    folder = tmp_path / "checkpoint_a"
    _part(folder, 0, 1, 2)
    (folder / "deepspeed" / "rank0.bin").write_bytes(b"wei")  # a copy cut short
    assert complete_checkpoint(folder) is None
    (folder / "deepspeed" / "rank0.bin").unlink()
    assert complete_checkpoint(folder) is None


def test_latest_complete_takes_the_highest_complete_step_on_disk(tmp_path):
    run = tmp_path / "run"
    for name, step in (("checkpoint_2026-01-01_00-00-03", 6), ("checkpoint_2026-01-01_00-00-01", 2),
                       ("checkpoint_2026-01-01_00-00-02", 4)):
        _part(run / name, 0, 1, step)
    (run / "checkpoint_2026-01-01_00-00-03" / "deepspeed" / "rank0.bin").unlink()  # step 6: copy never finished
    (run / "checkpoint_2026-01-01_00-00-04").mkdir()  # a folder with no marker at all
    assert latest_complete(run).step == 4
    assert latest_complete(tmp_path / "nothing") is None


def test_rng_state_round_trips(tmp_path):
    torch.manual_seed(3)
    torch.rand(5)
    _part(tmp_path, 0, 1, 1)
    expected = torch.rand(4)
    torch.manual_seed(99)
    assert restore_rng(tmp_path, 0)
    torch.testing.assert_close(torch.rand(4), expected)
    assert not restore_rng(tmp_path, 1)
    assert np.load(tmp_path / "rng-rank0.npy", allow_pickle=False).dtype == np.uint8


def test_cuda_generators_are_sealed_and_restored(tmp_path, monkeypatch, capsys):
    """On a GPU, dropout draws from the CUDA generators: a resumed run re-seeded them (seed + rank) and repeated the
    masks of the first steps. Their states are sealed beside the CPU one and restored (CUDA mocked here)."""
    states = [torch.arange(16, dtype=torch.uint8), torch.arange(16, 32, dtype=torch.uint8)]
    restored = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: states)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", lambda new: restored.extend(new))
    _part(tmp_path, 1, 2, 5)
    saved = np.load(tmp_path / "rng-rank1-cuda.npy", allow_pickle=False)
    assert saved.dtype == np.uint8 and saved.shape == (2, 16)
    assert restore_rng(tmp_path, 1)
    assert [t.tolist() for t in restored] == [s.tolist() for s in states]
    assert complete_checkpoint(tmp_path) is None  # rank 0 of 2 has not sealed: the file is listed, not a checkpoint
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # another machine's device count: CPU state only
    restored.clear()
    assert restore_rng(tmp_path, 1) and restored == []
    assert "holds 2 CUDA generator state(s), this worker sees 1 device(s)" in capsys.readouterr().out


def test_no_cuda_file_without_cuda(tmp_path):
    _part(tmp_path, 0, 1, 1)
    assert not (tmp_path / "rng-rank0-cuda.npy").exists()
