"""``interlingua run meaning-head`` logs each seed's per-epoch losses as ``train.<variant>.seed<SEED>.<loss>``, the
seed's value (as ``absent`` does and the console prints), not its position in ``seeds``: with ``seeds=[1,2]`` the keys
were ``seed0``/``seed1``, so ``seed1`` named seed 2's losses here and seed 1's in ``absent``."""

from __future__ import annotations

from types import SimpleNamespace

import mlflow.tracking

from interlingua.workflows import meaning_head
from interlingua.workflows.meaning_head import MeaningHeadConfig


class _Pairs:
    def __len__(self) -> int:
        return 20

    def rows(self, indices):
        return list(indices)


def _logged_keys(monkeypatch, seeds: list[int]) -> dict[str, list[float]]:
    """The metric keys ``_train_all`` then ``_log_histories`` log (training stubbed: one epoch whose losses are the
    seed), with the values logged under each."""
    from interlingua.trainers.disentangle import train

    def fake_train(train_rows, validation, languages, settings):
        row = {"epoch": 1, "train_loss": float(settings.seed), "val_loss": float(settings.seed)}
        return SimpleNamespace(history=[row], best_epoch=1, model=None)

    logged: dict[str, list[float]] = {}

    class Client:
        def log_batch(self, run_id, metrics):
            for metric in metrics:
                logged.setdefault(metric.key, []).append(metric.value)

    monkeypatch.setattr(train, "train_disentangle", fake_train)
    monkeypatch.setattr(mlflow.tracking, "MlflowClient", Client)
    config = MeaningHeadConfig(seeds=seeds, ablations=["reconstruction"])
    variants = {"meaning head": list(config.train.terms), "meaning head −reconstruction": ["meaning_cross"]}
    _, histories = meaning_head._train_all(config, _Pairs(), ["en", "es"], variants)
    meaning_head._log_histories("run", histories)
    return logged


def test_the_loss_keys_name_each_seed_by_its_value(monkeypatch):
    logged = _logged_keys(monkeypatch, [3, 5])
    assert logged == {f"train.{variant}.seed{seed}.{loss}": [float(seed)]
                      for variant in ("meaning_head", "meaning_head_minus-reconstruction")
                      for seed in (3, 5) for loss in ("train_loss", "val_loss")}
