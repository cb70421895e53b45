"""fast_align's E-step sharded over Ray actors (:mod:`~interlingua.operators.align.fast_align_em`).

Each actor holds one contiguous shard of the encoded pairs for the whole run: it finds its shard's
distinct cells (the initial pass), receives the sorted entry keys (one shared object), builds their
hash and resolves its cells to entries once (while the driver prepares the M-step's groups), then per
iteration receives the current tables (one shared object in the object store) and returns its
expected counts. The driver sums the counts in shard order, optimizes the tensions and normalizes
(on as many threads as there are actors: they wait for the tables meanwhile), so the result depends
only on the shard boundaries, never on which actor finishes first.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from interlingua.operators.align.fast_align_em import EncodedCorpus, Entries, EStepShard, sorted_distinct


class _ShardActor:
    """One shard's E-step work; ``busy`` counts the wall seconds spent inside its methods."""

    def __init__(self, src, tgt, src_start, tgt_start, stride, settings=None):
        self.busy = 0.0
        if settings is not None:
            warm_up(settings)  # numba's compiled code loaded at start-up, not in the first iteration
        self.shard = EStepShard(np.asarray(src), np.asarray(tgt), np.asarray(src_start), np.asarray(tgt_start), stride)

    def ready(self) -> bool:
        return True

    def distinct_keys(self) -> np.ndarray:
        with self._timed():
            return self.shard.distinct_keys()

    def resolve(self, keys: np.ndarray, stride: int) -> bool:
        with self._timed():
            self.shard.resolve(Entries.from_keys(keys, stride))
        return True

    def e_step(self, tables, tensions, settings):
        with self._timed():
            t_forward, t_reverse = tables
            return self.shard.e_step(t_forward, t_reverse, tensions, settings)

    def accounting(self) -> dict[str, float]:
        """Wall seconds busy in the methods above and CPU seconds of the actor's process so far."""
        return {"busy_s": self.busy, "process_cpu_s": time.process_time()}

    @contextmanager
    def _timed(self):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.busy += time.perf_counter() - start


def warm_up(settings) -> None:
    """Run the shard work once on a one-pair corpus (loads numba's cached machine code in this process)."""
    tiny = EStepShard(np.array([2, 3]), np.array([4]), np.array([0, 2]), np.array([0, 1]), 5)
    keys = sorted_distinct(np.concatenate((tiny.distinct_keys(), [1 * 5 + 4, 2 * 5 + 1, 3 * 5 + 1])))  # + NULL cells
    tiny.resolve(Entries.from_keys(keys, 5))
    tiny.e_step(np.full(keys.size, 0.5), np.full(keys.size, 0.5), (4.0, 4.0), settings)


class RayExecutor:
    """``workers`` actors (one CPU each), one shard each; same interface as ``InProcessExecutor``."""

    def __init__(self, corpus: EncodedCorpus, workers: int, settings=None):
        """``settings`` (a ``FastAlignSettings``): warm the actors' compiled code up for them at start-up."""
        import ray

        stride = len(corpus.vocabulary) + 1
        actor = ray.remote(num_cpus=1)(_ShardActor)
        self.threads = workers
        self.actors = [actor.remote(*corpus.shard(a, b), stride, settings) for a, b in corpus.shard_bounds(workers)]
        self._pending: list = []
        ray.get([a.ready.remote() for a in self.actors])  # started, shard received

    def distinct_keys(self) -> list[np.ndarray]:
        import ray

        return ray.get([a.distinct_keys.remote() for a in self.actors])

    def resolve(self, keys: np.ndarray, stride: int) -> None:
        """Starts the actors' resolution and returns; the next ``e_step`` waits for it."""
        import ray

        shared = ray.put(keys)
        self._pending = [a.resolve.remote(shared, stride) for a in self.actors]

    def e_step(self, t_forward, t_reverse, tensions, settings):
        import ray

        ray.get(self._pending)
        self._pending = []
        tables = ray.put((t_forward, t_reverse))
        return ray.get([a.e_step.remote(tables, tensions, settings) for a in self.actors])

    def accounting(self) -> list[dict[str, float]]:
        """Per actor: wall seconds busy with shard work, CPU seconds of its process (start-up included)."""
        import ray

        return ray.get([a.accounting.remote() for a in self.actors])

    def close(self) -> None:
        import ray

        for a in self.actors:
            ray.kill(a)
        self.actors = []
