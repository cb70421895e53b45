"""fast_align's EM sharded over Ray actors (:mod:`~interlingua.operators.align.fast_align_em`).

Each actor holds one contiguous shard of the encoded pairs for the whole run and owns one range of
the M-step's groups (:class:`~interlingua.operators.align.fast_align_em.MStepRanges`): it finds its
shard's distinct cells (the initial pass: its *local entries*) and resolves its cells against its own
entries' hash once (without waiting for the other shards), receives the merged sorted entry keys and
the ranges (one shared object each) and finds where each of its local entries sits in the ranges.
Per iteration each actor runs its shard's E-step on local-size tables and returns its statistics; it
then adds its counts in its own range into that range's totals (they never leave the actor) and sends
every other range only its non-zero counts, with their places (one object per range; most counts are
0 after a few iterations); actor ``p`` adds every shard's counts to range ``p`` (exact integer sums)
and normalizes its groups, and the next E-step gathers its local entries' probabilities from all
ranges straight from the object store. Object references are passed inside lists and fetched by the
actors, so each task is queued behind the actor's previous one at once. The driver only sums the
statistics and optimizes the tensions (meanwhile), so the serial part does not grow with the corpus's
entries; the tables depend only on the groups, never on the number of actors or which finishes first.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from interlingua.operators.align.fast_align_em import (
    EncodedCorpus, EStepShard, InProcessExecutor, MStepRanges, encode_corpus, learn_tables)


class _ShardActor:
    """One shard's E-step and one range's M-step; ``busy`` counts the wall seconds spent inside its methods (per method)."""

    def __init__(self, src, tgt, src_start, tgt_start, stride, settings=None, parts=1):
        self.busy: dict[str, float] = {}
        self.spans: list[tuple[str, float, float]] = []  # (method, start, stop), wall clock (time.time)
        if settings is not None:
            warm_up(settings, parts)  # numba's compiled code loaded at start-up, not in the first iteration
        self.shard = EStepShard(np.asarray(src), np.asarray(tgt), np.asarray(src_start), np.asarray(tgt_start), stride)

    def ready(self) -> bool:
        return True

    def distinct_keys(self) -> np.ndarray:
        with self._timed("distinct_keys"):
            return self.shard.distinct_keys()

    def resolve_local(self) -> bool:
        with self._timed("resolve"):
            self.shard.resolve_local()
        return True

    def globalize(self, keys: np.ndarray, stride: int) -> bool:
        with self._timed("globalize"):
            self.keys, self.stride = keys, stride
            self.shard.globalize(keys)
        return True

    def prepare(self, m_step: MStepRanges, part: int) -> bool:
        with self._timed("prepare"):
            self.m_step, self.part = m_step, part
            self.slots = m_step.slots(self.shard.sorted_entries, self.shard.local_order)
        return True

    def e_step(self, tensions, settings, normalized: list) -> np.ndarray:
        """The shard's statistics; its counts wait for :meth:`split` (the next task), so the driver gets the statistics
        and optimizes the tensions while this actor splits the counts.

        ``normalized``: the ObjectRefs of every range's probabilities, fetched here (not by the caller), so the
        task is queued behind this actor's ``normalize`` at once instead of waiting for the driver to see every
        range done; the wait counts as idle, not busy.
        """
        import ray

        normalized = ray.get(normalized)
        with self._timed("tables"):
            t = self.slots.tables(normalized, out=self.shard.table)
        with self._timed("e_step"):
            self.counts, stats = self.shard.e_step(t, tensions, settings)
        return stats

    def split(self):
        """The last E-step's counts by range (:meth:`ShardSlots.split`): those in this actor's own range stay here for
        its :meth:`normalize`; one object per range (``None`` for its own)."""
        with self._timed("split"):
            self.own_totals, sends = self.slots.split(self.counts, self.part)
            self.counts = None
            return tuple(sends) if len(sends) > 1 else sends[0]

    def normalize(self, settings, received: list):
        """This actor's range of the next tables from its own counts there and every other shard's (ObjectRefs of
        their :meth:`split`, fetched here as in :meth:`e_step`)."""
        import ray

        received = ray.get(received)
        with self._timed("normalize"):
            self.normalized = self.m_step.normalize(self.part, self.own_totals, received, settings)
            self.own_totals = None
            return self.normalized

    def export(self, beam: bool = True) -> tuple[np.ndarray, ...]:
        with self._timed("export"):
            return self.m_step.export(self.part, self.normalized, self.keys, self.stride, beam)

    def accounting(self) -> dict[str, float]:
        """Wall seconds busy in the methods above (all, and ``busy_<method>_s`` each) and CPU seconds of the actor's process so far."""
        return {"busy_s": sum(self.busy.values()), "process_cpu_s": time.process_time(),
                **{f"busy_{name}_s": seconds for name, seconds in self.busy.items()}}

    def timeline(self) -> list[tuple[str, float, float]]:
        """(method, start, stop) of every timed call so far, wall-clock seconds (``time.time``)."""
        return self.spans

    @contextmanager
    def _timed(self, name: str):
        start, wall = time.perf_counter(), time.time()
        try:
            yield
        finally:
            self.busy[name] = self.busy.get(name, 0.0) + time.perf_counter() - start
            self.spans.append((name, wall, time.time()))


def warm_up(settings, parts: int = 1) -> None:
    """Learn a tiny corpus in process with ``parts`` shards and ranges (loads numba's cached machine code of every step
    in this process, for the signatures a run with ``parts`` workers uses: the kernels get read-only arrays either
    way, and the tables gather from a tuple of ``parts`` ranges)."""
    tiny = encode_corpus([(["a", "b"], ["c"]), (["b"], ["c", "d"])] * parts)
    learn_tables(tiny, settings, InProcessExecutor(tiny, parts))


class RayExecutor:
    """``workers`` actors (one CPU each), one shard and one M-step range each; same interface as ``InProcessExecutor``."""

    def __init__(self, corpus: EncodedCorpus, workers: int, settings=None):
        """``settings`` (a ``FastAlignSettings``): warm the actors' compiled code up for them at start-up."""
        import ray

        stride = len(corpus.vocabulary) + 1
        actor = ray.remote(num_cpus=1)(_ShardActor)
        self.parts = workers
        self.actors = [actor.remote(*corpus.shard(a, b), stride, settings, workers) for a, b in corpus.balanced_bounds(workers)]
        self._pending: list = []
        self._normalized: list = []  # per range: the ObjectRef of its (forward, reverse) probabilities
        ray.get([a.ready.remote() for a in self.actors])  # started, shard received

    def distinct_keys(self) -> list[np.ndarray]:
        """Each shard's keys; the actors go on resolving their cells against their own keys meanwhile (queued behind),
        so one that finishes early does not wait for the others and the driver's merge."""
        import ray

        keys = [a.distinct_keys.remote() for a in self.actors]
        self._pending = [a.resolve_local.remote() for a in self.actors]
        return ray.get(keys)

    def resolve(self, keys: np.ndarray, stride: int) -> None:
        """Starts mapping the actors' local entries to ``keys`` and returns; the first ``iterate`` waits for it."""
        import ray

        shared = ray.put(keys)
        self._pending += [a.globalize.remote(shared, stride) for a in self.actors]

    def prepare(self, m_step: MStepRanges) -> None:
        import ray

        shared = ray.put(m_step)
        self._pending += [a.prepare.remote(shared, part) for part, a in enumerate(self.actors)]

    def iterate(self, tensions, settings) -> list[np.ndarray]:
        """E-steps, then each actor's range normalized from its own totals and the other shards' non-zero counts in it;
        returns once the statistics are in."""
        import ray

        parts = self.parts
        # refs passed inside lists: each actor fetches them itself (see _ShardActor.e_step)
        stats = [a.e_step.remote(tensions, settings, self._normalized) for a in self.actors]
        outputs = [a.split.options(num_returns=parts).remote() for a in self.actors]
        outputs = [out if parts > 1 else [out] for out in outputs]
        self._normalized = [a.normalize.remote(settings, [out[part] for s, out in enumerate(outputs) if s != part])
                            for part, a in enumerate(self.actors)]
        ray.get(self._pending)  # resolution and preparation (queued before the first E-step): raise their errors
        self._pending = []
        return ray.get(stats)

    def export(self, beam: bool = True) -> list[tuple[np.ndarray, ...]]:
        import ray

        return ray.get([a.export.remote(beam) for a in self.actors])

    def accounting(self) -> list[dict[str, float]]:
        """Per actor: wall seconds busy with shard work, CPU seconds of its process (start-up included)."""
        import ray

        return ray.get([a.accounting.remote() for a in self.actors])

    def close(self) -> None:
        import ray

        for a in self.actors:
            ray.kill(a)
        self.actors = []
        self._normalized = []
