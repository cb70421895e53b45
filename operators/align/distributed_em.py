"""fast_align's E-step sharded over Ray actors (:mod:`~interlingua.operators.align.fast_align_em`).

Each actor holds one contiguous shard of the encoded pairs for the whole run: it finds its shard's
distinct cells (the initial pass), resolves them to parameter entries once, then per iteration
receives the current tables (one shared object in the object store) and returns its expected
counts. The driver sums the counts in shard order, optimizes the tensions and normalizes, so the
result depends only on the shard boundaries, never on which actor finishes first.
"""

from __future__ import annotations

import numpy as np

from interlingua.operators.align.fast_align_em import EncodedCorpus, Entries, EStepShard


class _ShardActor:
    def __init__(self, src, tgt, src_start, tgt_start, stride):
        self.shard = EStepShard(np.asarray(src), np.asarray(tgt), np.asarray(src_start), np.asarray(tgt_start), stride)

    def ready(self) -> bool:
        return True

    def distinct_keys(self) -> np.ndarray:
        return self.shard.distinct_keys()

    def resolve(self, entries: Entries) -> bool:
        self.shard.resolve(entries)
        return True

    def e_step(self, tables, tensions, settings):
        t_forward, t_reverse = tables
        return self.shard.e_step(t_forward, t_reverse, tensions, settings)


class RayExecutor:
    """``workers`` actors (one CPU each), one shard each; same interface as ``InProcessExecutor``."""

    def __init__(self, corpus: EncodedCorpus, workers: int):
        import ray

        stride = len(corpus.vocabulary) + 1
        actor = ray.remote(num_cpus=1)(_ShardActor)
        self.actors = [actor.remote(*corpus.shard(a, b), stride) for a, b in corpus.shard_bounds(workers)]
        ray.get([a.ready.remote() for a in self.actors])  # started, shard received

    def distinct_keys(self) -> list[np.ndarray]:
        import ray

        return ray.get([a.distinct_keys.remote() for a in self.actors])

    def resolve(self, entries: Entries) -> None:
        import ray

        shared = ray.put(entries)
        ray.get([a.resolve.remote(shared) for a in self.actors])

    def e_step(self, t_forward, t_reverse, tensions, settings):
        import ray

        tables = ray.put((t_forward, t_reverse))
        return ray.get([a.e_step.remote(tables, tensions, settings) for a in self.actors])

    def close(self) -> None:
        import ray

        for a in self.actors:
            ray.kill(a)
        self.actors = []
