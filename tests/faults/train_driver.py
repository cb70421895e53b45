"""Driver process of the training fault test (not a test module): ``fit`` a tiny encoder on 1 Ray Train worker.

    python tests/faults/train_driver.py ROOT NAME RUN_ID MAX_STEPS CHECKPOINT_EVERY
prints one JSON line ``{"encoder_dir", "step"}`` at the end."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(root: str, name: str, run_id: str, max_steps: int, every: int) -> None:
    import ray

    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.fit import fit
    from tiny_models import EN_ES_PAIRS

    env = {k: os.environ[k] for k in ("MLFLOW_TRACKING_URI", "DS_ACCELERATOR", "OMP_NUM_THREADS") if k in os.environ}
    ray.init(address="local", num_cpus=3, object_store_memory=150 * 1024**2, include_dashboard=False,
             log_to_driver=False, runtime_env={"env_vars": env})
    dataset = ray.data.from_items([{"src": s, "tgt": t} for s, t in EN_ES_PAIRS] * 2).materialize()
    config = TrainConfig(objective="translation_ranking", num_workers=1, batch_size=4, max_steps=max_steps, lr=1e-3,
                         max_length=16, shuffle_buffer=0, checkpoint_every=every, seed=5)
    result = fit(str(Path(root) / "tiny_encoder"), dataset, config, storage_path=Path(root) / "ray_results", name=name,
                 run_id=run_id)
    print(json.dumps({"encoder_dir": result.encoder_dir, "step": result.metrics.get("step")}), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
