"""The operator runner: actor pools from declared resources, one model load per actor, rejects kept."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

from interlingua.operators.base import REJECT_REASON, Operator, reject_column
from interlingua.operators.runner import actor_pool, run_operator, split_rejects


class CountingSquare(Operator):
    """Squares ``x``; records which actor instance (and how many loads) handled each row."""

    name = "square"
    num_cpus = 1.0
    num_gpus = 0.5  # dropped by the runner on a CPU-only cluster
    concurrency = 1
    batch_size = 7

    loads = 0

    def __init__(self, offset: int = 0):
        type(self).loads += 1  # per process: Ray constructs the class once per actor
        self.offset = offset
        self.instance = f"{os.getpid()}-{type(self).loads}"  # unique per construction in this process

    def __call__(self, batch):
        x = batch["x"]
        reasons = reject_column(len(x))
        reasons[x % 5 == 0] = "square: multiple of five"
        batch["y"] = x * x + self.offset
        batch["instance"] = np.array([self.instance] * len(x), dtype=object)
        batch["loads"] = np.full(len(x), type(self).loads)
        batch[REJECT_REASON] = reasons
        return batch


def test_actor_pool_sizes():
    fixed = actor_pool(3)
    assert (fixed.min_size, fixed.max_size) == (3, 3)
    ranged = actor_pool((1, 4))
    assert (ranged.min_size, ranged.max_size) == (1, 4)


@pytest.mark.parametrize("bad", [0, (0, 2), (3, 2)])
def test_actor_pool_rejects_bad_sizes(bad):
    with pytest.raises(ValueError, match="concurrency"):
        actor_pool(bad)


def test_run_operator_requires_operator_class():
    with pytest.raises(TypeError, match="Operator subclass"):
        run_operator(None, lambda batch: batch)


def test_resources_declared_by_class():
    assert CountingSquare.resources() == {"num_cpus": 1.0, "num_gpus": 0.5, "concurrency": 1}
    assert CountingSquare.operator_name() == "square"


def _with_x(ray, n, blocks):
    return ray.data.range(n, override_num_blocks=blocks).map_batches(lambda b: {"x": b["id"]},
                                                                      batch_format="numpy")


def test_run_operator_loads_once_per_actor_and_keeps_every_row(ray_local):
    out = run_operator(_with_x(ray_local, 60, 6), CountingSquare, {"offset": 1}).take_all()

    assert sorted(int(r["x"]) for r in out) == list(range(60))
    for r in out:
        assert r["y"] == r["x"] ** 2 + 1
    # one actor, constructed once, served every batch (60 rows / batch_size 7 -> many calls)
    assert len({r["instance"] for r in out}) == 1
    assert {int(r["loads"]) for r in out} == {1}
    assert sum(1 for r in out if r[REJECT_REASON]) == 12


class HalfCpuSquare(CountingSquare):
    """Two actors of half a CPU each leave a CPU for the read tasks on the 2-CPU test cluster."""

    num_cpus = 0.5


class SlowHalfCpuSquare(HalfCpuSquare):
    """A batch takes 0.1 s, so 40 batches outlast the second actor's start-up (without it, the first actor once
    finished them all alone)."""

    def __call__(self, batch):
        time.sleep(0.1)
        return super().__call__(batch)


def test_run_operator_concurrency_override_uses_two_actors(ray_local):
    out = run_operator(_with_x(ray_local, 400, 20), SlowHalfCpuSquare, concurrency=2, batch_size=10).take_all()
    assert len(out) == 400
    assert len({r["instance"] for r in out}) == 2


def test_split_rejects_keeps_reason_and_original_row():
    batch = {"x": np.array([1, 5, 7, 10]), "text": np.array(["a", "b", "c", "d"], dtype=object),
             REJECT_REASON: np.array(["", "too big", "", "also bad"], dtype=object)}
    kept, rejects = split_rejects(batch, "square")
    assert kept["x"].tolist() == [1, 7]
    assert kept["text"].tolist() == ["a", "c"]
    assert REJECT_REASON not in kept
    assert [(r["operator"], r["reason"]) for r in rejects] == [("square", "too big"), ("square", "also bad")]
    assert [json.loads(r["row"]) for r in rejects] == [{"x": 5, "text": "b"}, {"x": 10, "text": "d"}]


def test_split_rejects_without_reason_column_is_identity():
    batch = {"x": np.arange(3)}
    kept, rejects = split_rejects(batch, "op")
    assert kept is batch and rejects == []


def test_operator_rejects_flow_through_split(ray_local):
    out = run_operator(_with_x(ray_local, 60, 6), CountingSquare)
    batches = list(out.iter_batches(batch_size=None, batch_format="numpy"))
    kept_total, rejects = 0, []
    for batch in batches:
        kept, rej = split_rejects(batch, "square")
        kept_total += len(kept["x"])
        rejects += rej
    assert kept_total + len(rejects) == 60
    assert sorted(json.loads(r["row"])["x"] for r in rejects) == list(range(0, 60, 5))
    assert {r["reason"] for r in rejects} == {"square: multiple of five"}


def test_warm_workers_reuse_the_operator_across_runs_and_rebuild_on_new_arguments(ray_local):
    """Warm mode: same rows and values as the actor pool; a second run reuses the first run's instances."""
    first = run_operator(_with_x(ray_local, 60, 6), HalfCpuSquare, {"offset": 1}, concurrency=2,
                         warm_workers=True).take_all()
    second = run_operator(_with_x(ray_local, 60, 6), HalfCpuSquare, {"offset": 1}, concurrency=2,
                          warm_workers=True).take_all()
    actors = run_operator(_with_x(ray_local, 60, 6), HalfCpuSquare, {"offset": 1}, concurrency=2).take_all()
    key = lambda r: int(r["x"])  # noqa: E731
    for run in (first, second):
        assert [(int(r["x"]), int(r["y"]), r[REJECT_REASON]) for r in sorted(run, key=key)] == \
            [(int(r["x"]), int(r["y"]), r[REJECT_REASON]) for r in sorted(actors, key=key)]
    # no new instance in the second run: every instance it used was built by the first
    assert {r["instance"] for r in second} <= {r["instance"] for r in first}
    other = run_operator(_with_x(ray_local, 20, 2), HalfCpuSquare, {"offset": 2}, concurrency=2,
                         warm_workers=True).take_all()
    assert all(int(r["y"]) == int(r["x"]) ** 2 + 2 for r in other)
    assert not {r["instance"] for r in other} & {r["instance"] for r in first}


def test_warm_operator_keeps_one_instance_per_class():
    from interlingua.operators.runner import warm_operator

    a = warm_operator(CountingSquare, {"offset": 3})
    assert warm_operator(CountingSquare, {"offset": 3}) is a
    b = warm_operator(CountingSquare, {"offset": 4})
    assert b is not a and b.offset == 4
    assert warm_operator(CountingSquare, {"offset": 3}) is not a  # replaced, rebuilt


def test_small_inputs_run_in_this_process_once_loaded_in_declared_batches():
    from interlingua.operators.runner import map_rows

    rows = [{"x": k, "text": f"row {k}"} for k in range(20)]
    before = CountingSquare.loads
    batches = list(map_rows(rows, CountingSquare, {"offset": 1}, in_process_rows=20))
    assert CountingSquare.loads == before + 1  # one instance, here
    assert [len(b["x"]) for b in batches] == [7, 7, 6]  # the class's batch_size
    assert [int(y) for b in batches for y in b["y"]] == [k * k + 1 for k in range(20)]
    assert {b["text"].dtype for b in batches} == {np.dtype(object)} and batches[0]["x"].dtype.kind == "i"
    assert len({i for b in batches for i in b["instance"]}) == 1
    assert {i.split("-")[0] for b in batches for i in b["instance"]} == {str(os.getpid())}
    assert list(map_rows([], CountingSquare, in_process_rows=0)) == []


def test_above_the_threshold_rows_go_to_the_actor_pool_with_the_same_results(ray_local):
    from interlingua.operators.runner import map_rows

    rows = [{"x": k} for k in range(30)]
    on_ray = list(map_rows(rows, HalfCpuSquare, in_process_rows=29, concurrency=2))
    here = list(map_rows(rows, HalfCpuSquare, in_process_rows=30))
    assert {i.split("-")[0] for b in on_ray for i in b["instance"]} != {str(os.getpid())}
    assert sorted((int(x), int(y)) for b in on_ray for x, y in zip(b["x"], b["y"])) == \
        [(int(x), int(y)) for b in here for x, y in zip(b["x"], b["y"])]


class _RecordingDataset:
    """Stands in for a Ray dataset: records what ``map_batches`` was asked for."""

    def map_batches(self, fn, **kwargs):
        self.fn, self.kwargs = fn, kwargs
        return self


class SharesOneGpu(CountingSquare):
    gpu_concurrency = 2


@pytest.mark.parametrize("has_gpus, op_cls, override, expected_pool, expected_gpus", [
    (True, SharesOneGpu, None, 2, 0.5),      # GPUs: the class's gpu_concurrency
    (False, SharesOneGpu, None, 1, 0),       # no GPU: concurrency, GPU request dropped
    (True, CountingSquare, None, 1, 0.5),    # no gpu_concurrency declared: concurrency
    (True, SharesOneGpu, 3, 3, 0.5),         # an explicit concurrency wins
])
def test_pool_size_follows_gpu_concurrency_only_when_actors_get_gpus(monkeypatch, has_gpus, op_cls, override,
                                                                     expected_pool, expected_gpus):
    import interlingua.operators.runner as runner

    monkeypatch.setattr(runner, "cluster_has_gpus", lambda: has_gpus)
    ds = run_operator(_RecordingDataset(), op_cls, concurrency=override)
    pool = ds.kwargs["compute"]
    assert (pool.min_size, pool.max_size) == (expected_pool, expected_pool)
    assert ds.kwargs["num_gpus"] == expected_gpus


def test_gpu_operators_declare_two_actors_per_device():
    from interlingua.operators.embed import Embed
    from interlingua.operators.translate.operator import TranslateOperator

    assert Embed.gpu_concurrency == 2
    assert (TranslateOperator.concurrency, TranslateOperator.gpu_concurrency) == (1, 2)
    assert TranslateOperator.gpu_concurrency * TranslateOperator.num_gpus <= 1  # they fit on one device


def test_embed_pool_grows_to_the_free_cpus_without_gpus(monkeypatch):
    """On CPU, Embed's pool autoscales from 1 to 4 actors of one CPU each (benchmarks/embed_throughput: 1.67x on 2
    cores); with GPUs, two actors share the device."""
    import interlingua.operators.runner as runner
    from interlingua.operators.embed import Embed

    monkeypatch.setattr(runner, "cluster_has_gpus", lambda: False)
    pool = run_operator(_RecordingDataset(), Embed, {"model": "unused"}).kwargs["compute"]
    assert (pool.min_size, pool.max_size) == (1, 4)
    monkeypatch.setattr(runner, "cluster_has_gpus", lambda: True)
    pool = run_operator(_RecordingDataset(), Embed, {"model": "unused"}).kwargs["compute"]
    assert (pool.min_size, pool.max_size) == (2, 2)


def test_declared_cpu_pool_is_capped_at_the_cores_only_on_our_own_local_ray(monkeypatch, ray_local):
    """init_ray's local Ray declares >= 4 logical CPUs on any machine; a declared (min, max) pool must not grow past
    the cores there. Another Ray (a cluster, or a test's ray.init) keeps the declared range; an explicit one wins."""
    import os

    import interlingua.operators.runner as runner
    from interlingua.core.runtime import OWN_RAY_ADDRESS
    from interlingua.operators.embed import Embed

    monkeypatch.setattr(runner, "cluster_has_gpus", lambda: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def pool(**kwargs):
        compute = run_operator(_RecordingDataset(), Embed, {"model": "unused"}, **kwargs).kwargs["compute"]
        return compute.min_size, compute.max_size

    monkeypatch.delenv(OWN_RAY_ADDRESS, raising=False)
    assert pool() == (1, 4)
    monkeypatch.setenv(OWN_RAY_ADDRESS, "127.0.0.1:1")  # some other local Ray of ours, not this one
    assert pool() == (1, 4)
    monkeypatch.setenv(OWN_RAY_ADDRESS, ray_local.get_runtime_context().gcs_address)
    assert pool() == (1, 2)
    assert pool(concurrency=(1, 3)) == (1, 3)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert pool() == (1, 1)
