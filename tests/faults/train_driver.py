"""Driver process of the training fault test (not a test module): ``fit`` a tiny encoder on 1 Ray Train worker.

    python tests/faults/train_driver.py ROOT NAME RUN_ID MAX_STEPS CHECKPOINT_EVERY
prints its result ``{"encoder_dir", "step"}`` at the end, on a line :func:`result_line` finds among the workers'.

Ray is started as the CLI starts it (:func:`~interlingua.core.runtime.init_ray`), not with a bare ``ray.init``: Ray
Train's placement-group cleaner asks the state API whether the training's controller is alive, and a local Ray
started without a dashboard sends it to the default 127.0.0.1:8265, where nothing of its own listens. When another
Ray on the machine (a concurrent test or run) had its dashboard there, it answered "no such actor"; the cleaner took
the controller for dead and removed the training's placement group, and the worker died ("A worker health check
failed"). init_ray's Ray has its own dashboard, and its workers ask their own cluster (``RAY_ADDRESS``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


#: Starts the driver's result line: the workers' own lines (steps) reach the same log, some after it.
RESULT_PREFIX = "[driver result] "


def result_line(log: str) -> dict:
    """The driver's result, from its log."""
    (line,) = [line for line in log.splitlines() if line.startswith(RESULT_PREFIX)]
    return json.loads(line[len(RESULT_PREFIX):])


def main(root: str, name: str, run_id: str, max_steps: int, every: int) -> None:
    from interlingua.core.runtime import init_ray
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.fit import fit
    from tiny_models import EN_ES_PAIRS

    ray = init_ray(num_cpus=3, object_store_memory=150 * 1024**2)
    dataset = ray.data.from_items([{"src": s, "tgt": t} for s, t in EN_ES_PAIRS] * 2).materialize()
    config = TrainConfig(objective="translation_ranking", num_workers=1, batch_size=4, max_steps=max_steps, lr=1e-3,
                         max_length=16, shuffle_buffer=0, checkpoint_every=every, seed=5)
    result = fit(str(Path(root) / "tiny_encoder"), dataset, config, storage_path=Path(root) / "ray_results", name=name,
                 run_id=run_id)
    print(RESULT_PREFIX + json.dumps({"encoder_dir": result.encoder_dir, "step": result.metrics.get("step")}), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
