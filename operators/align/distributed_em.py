"""fast_align's EM sharded over Ray actors (:mod:`~interlingua.operators.align.fast_align_em`).

Each actor holds one contiguous shard of the encoded pairs for the whole run and owns one range of
the M-step's groups (:class:`~interlingua.operators.align.fast_align_em.MStepRanges`): it finds its
shard's distinct cells (the initial pass: its *local entries*) and resolves its cells against its own
entries' hash once (without waiting for the other shards), receives the merged sorted entry keys and
the ranges (one shared object each), maps its local entries to them and tells each range's owner,
once, where its entries sit in that range.
Per iteration each actor runs its shard's E-step on local-size tables and returns its expected
counts in each range (only its own entries, one object per range) and its statistics; actor ``p``
then sums every shard's counts in range ``p`` (exact integer sums) and normalizes its groups, and
the next E-step gathers its local entries' probabilities from all ranges straight from the object
store. Object references are passed inside lists and fetched by the actors, so each task is queued
behind the actor's previous one at once. The driver only sums the statistics and optimizes the
tensions (meanwhile), so the serial part does not grow with the corpus's entries; the tables depend
only on the groups, never on the number of actors or which finishes first.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from interlingua.operators.align.fast_align_em import EncodedCorpus, EStepShard, MStepRanges, learn_tables


class _ShardActor:
    """One shard's E-step and one range's M-step; ``busy`` counts the wall seconds spent inside its methods (per method)."""

    def __init__(self, src, tgt, src_start, tgt_start, stride, settings=None):
        self.busy: dict[str, float] = {}
        self.spans: list[tuple[str, float, float]] = []  # (method, start, stop), wall clock (time.time)
        if settings is not None:
            warm_up(settings)  # numba's compiled code loaded at start-up, not in the first iteration
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
            self.slots = m_step.slots(self.shard.global_index)
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
        """The last E-step's counts in each range (:meth:`ShardSlots.split`), one object per range."""
        with self._timed("split"):
            out = tuple(self.slots.split(self.counts))
            self.counts = None
            return out if len(out) > 1 else out[0]

    def positions(self):
        """Where this shard's counts go in each range's slices (:meth:`ShardSlots.positions`), one object per range."""
        parts = self.m_step.parts
        out = tuple(self.slots.positions(p) for p in range(parts))
        return out if parts > 1 else out[0]

    def receive_positions(self, positions: list) -> bool:
        """Every shard's :meth:`positions` for this actor's range (ObjectRefs, in shard order), kept for the run."""
        import ray

        self.range_positions = ray.get(positions)
        return True

    def normalize(self, settings, values: list):
        """This actor's range of the next tables from every shard's counts in it (ObjectRefs, in shard order, fetched
        here as in :meth:`e_step`)."""
        import ray

        values = ray.get(values)
        with self._timed("normalize"):
            self.normalized = self.m_step.normalize(self.part, self.range_positions, values, settings)
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


def warm_up(settings) -> None:
    """Learn a one-pair corpus in process (loads numba's cached machine code of every step in this process)."""
    tiny = EncodedCorpus(("<eps>", "a", "b", "c"), np.array([2, 3]), np.array([4]), np.array([0, 2]), np.array([0, 1]))
    learn_tables(tiny, settings)


class RayExecutor:
    """``workers`` actors (one CPU each), one shard and one M-step range each; same interface as ``InProcessExecutor``."""

    def __init__(self, corpus: EncodedCorpus, workers: int, settings=None):
        """``settings`` (a ``FastAlignSettings``): warm the actors' compiled code up for them at start-up."""
        import ray

        stride = len(corpus.vocabulary) + 1
        actor = ray.remote(num_cpus=1)(_ShardActor)
        self.parts = workers
        self.actors = [actor.remote(*corpus.shard(a, b), stride, settings) for a, b in corpus.balanced_bounds(workers)]
        self._pending: list = []
        self._positions: list = []  # per actor: the refs of its positions in each range, until the owners receive them
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
        # each range's owner learns once where every shard's counts go in it (then only counts travel); it receives
        # them after its first E-step is queued (see iterate), so that E-step waits for no other actor
        parts = self.parts
        positions = [a.positions.options(num_returns=parts).remote() for a in self.actors]
        self._positions = [p if parts > 1 else [p] for p in positions]

    def iterate(self, tensions, settings) -> list[np.ndarray]:
        """E-steps, then each actor's range normalized from every shard's slice; returns once the statistics are in."""
        import ray

        parts = self.parts
        # refs passed inside lists: each actor fetches them itself (see _ShardActor.e_step)
        stats = [a.e_step.remote(tensions, settings, self._normalized) for a in self.actors]
        outputs = [a.split.options(num_returns=parts).remote() for a in self.actors]
        outputs = [out if parts > 1 else [out] for out in outputs]
        if self._positions:
            self._pending += [a.receive_positions.remote([self._positions[s][part] for s in range(parts)])
                              for part, a in enumerate(self.actors)]
            self._positions = []
        self._normalized = [a.normalize.remote(settings, [out[part] for out in outputs]) for part, a in enumerate(self.actors)]
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
        self._positions = []
