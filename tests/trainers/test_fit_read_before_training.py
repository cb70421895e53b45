"""fit reads a lazy dataset first only when its workers would hold every CPU of the Ray cluster."""

from __future__ import annotations

import pytest


class _Lazy:
    """A lazy Ray dataset as _read_before_training sees it: materialize() is the read."""

    def __init__(self):
        self.materialized = False

    def materialize(self):
        self.materialized = True
        return self


@pytest.mark.parametrize("cluster_cpus, workers, read_first", [(2, 2, True), (3, 2, False), (8, 2, False),
                                                                (4, 4, True)])
def test_a_lazy_dataset_is_read_first_only_when_the_workers_hold_every_cpu(monkeypatch, cluster_cpus, workers,
                                                                           read_first):
    """4508382 materialized every lazy dataset, so fit(..., store.read_ray(corpus)) on a cluster with CPUs to spare
    had to hold the whole corpus in the object store before step 1; it streams again there."""
    import ray

    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.fit import _read_before_training

    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": float(cluster_cpus)})
    dataset = _Lazy()
    assert _read_before_training(dataset, TrainConfig(num_workers=workers)) is dataset
    assert dataset.materialized is read_first
