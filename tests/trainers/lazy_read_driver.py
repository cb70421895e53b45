"""Driver process of test_fit_lazy_read.py (not a test module): the README's EASE snippet on a 2-CPU Ray, ``fit`` of
a tiny encoder on ``store.read_ray(...)`` (a lazy dataset: its reads have not run) with 2 workers of 1 CPU each.

    python tests/trainers/lazy_read_driver.py ROOT
prints its result ``{"step", "entity_table"}`` at the end, on a line ``faults.train_driver.result_line`` finds among the
workers' (Ray is started as the CLI starts it, for the reason :mod:`faults.train_driver` gives)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from faults.train_driver import RESULT_PREFIX  # noqa: E402 - after the path

ENTITIES = ["Q1", "Q2", "Q3", "Q4"]
DIM = 8


def _entity_vectors(path: Path) -> str:
    import numpy as np

    rng = np.random.default_rng(0)
    lines = [f"{len(ENTITIES)} {DIM}"] + [e + " " + " ".join(f"{v:.6f}" for v in rng.normal(size=DIM)) for e in ENTITIES]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _ease_version(store) -> None:
    """A published ``ease`` version of the EASE corpus's columns, in 2 shards (2 read tasks)."""
    import pyarrow as pa

    from tiny_models import EN_ES_PAIRS

    rows = [{"sentence": en if i % 2 == 0 else es, "entity_id": ENTITIES[i % 4],
             "hard_negative_ids": [ENTITIES[(i + 1) % 4]]} for i, (en, es) in enumerate(EN_ES_PAIRS * 2)]
    writer = store.open_version("ease", {"tiny": True}, ["tests/trainers/lazy_read_driver.py"])
    half = len(rows) // 2
    for shard, part in (("shard-00000", rows[:half]), ("shard-00001", rows[half:])):
        writer.write_shard(shard, pa.Table.from_pylist(part), [], counters={"rows": len(part)})
    writer.publish(expected_shards=["shard-00000", "shard-00001"])


def main(root: Path) -> None:
    from interlingua.core.runtime import init_ray
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.fit import fit
    from tiny_models import build_tiny_bert

    SentenceEncoder.from_folder(build_tiny_bert(root / "bert"), max_length=16).save(root / "encoder")
    store = CorpusStore(str(root / "store"))
    _ease_version(store)
    ray = init_ray(num_cpus=2, object_store_memory=150 * 1024**2)
    data = store.read_ray("ease", columns=["sentence", "entity_id", "hard_negative_ids"])
    config = TrainConfig(objective="ease", entity_vectors=_entity_vectors(root / "vectors.txt"), ease_lambda=1.0,
                         num_workers=2, batch_size=4, max_steps=2, lr=1e-3, max_length=16, shuffle_buffer=0)
    result = fit(str(root / "encoder"), data, config, storage_path=root / "runs", name="ease")
    result_json = json.dumps({"step": result.metrics.get("step"), "entity_table": result.entity_table})
    print(RESULT_PREFIX + result_json, flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
