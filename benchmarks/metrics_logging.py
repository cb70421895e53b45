"""The training loop's per-step MLflow write: how long the step loop waits for it, synchronous against the
asynchronous logging the loop uses (:class:`~interlingua.trainers.engine.train_loop._MetricsLogger`).

Usage::

    python -m interlingua.benchmarks.metrics_logging [--tracking-uri URI] [--steps 60] [--step-seconds 0.05]
        [--metrics 12]

Each step sleeps ``--step-seconds`` (the step's compute, during which queued writes can finish) and then logs
``--metrics`` values, as the loop does. The figure is the time the loop spends inside the logging call per step
(median and max over ``--steps``, the first step left out: it starts MLflow's logging thread), for the two modes
interleaved step by step on one run of one store. The default store is a fresh local sqlite file, MLflow's default;
a remote tracking server adds its round trip to every synchronous write. On a GPU the device idles for that long
each step: the loop reads the loss (a device sync) before it logs.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, positive_int


def _timed_log(logger, metrics: dict[str, float], step: int, synchronous: bool) -> float:
    from interlingua.trainers.engine.train_loop import metric_batch

    batch = metric_batch(metrics, step)
    t0 = time.perf_counter()
    if synchronous:  # the loop before: the same batch, written before the loop goes on
        logger.client.log_batch(logger.run_id, metrics=batch)
    else:
        logger.log(metrics, step)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict:
    parser = BenchmarkParser(__doc__.split("\n\n")[0])
    parser.add_argument("--tracking-uri", help="MLflow tracking URI (default: a fresh sqlite file)")
    parser.add_argument("--steps", type=positive_int, default=60)
    parser.add_argument("--step-seconds", type=float, default=0.05)
    parser.add_argument("--metrics", type=int, default=12, help="values logged per step (the loop logs about 12)")
    args = parser.parse_args(argv)

    from mlflow.tracking import MlflowClient

    from interlingua.core import tracking
    from interlingua.trainers.engine.train_loop import _MetricsLogger

    with tempfile.TemporaryDirectory() as folder:
        uri = args.tracking_uri or f"sqlite:///{Path(folder) / 'mlflow.db'}"
        client = MlflowClient(tracking_uri=uri)
        experiment_id = client.create_experiment(f"metrics-logging-{time.time_ns()}")
        run_id = tracking.create_run(experiment_id, client=client).info.run_id
        logger = _MetricsLogger(run_id, uri)
        seconds: dict[str, list[float]] = {"synchronous": [], "asynchronous (the loop)": []}
        for step in range(args.steps + 1):
            for name, synchronous in (("synchronous", True), ("asynchronous (the loop)", False)):
                time.sleep(args.step_seconds)
                metrics = {f"{name[:5]}_{k}": step + k for k in range(args.metrics)}
                elapsed = _timed_log(logger, metrics, step, synchronous)
                if step:
                    seconds[name].append(elapsed)
        logger.close()
        client.set_terminated(run_id)
    base = statistics.median(seconds["synchronous"])
    print(f"\nper-step MLflow write, time the step loop waits ({args.steps} steps of {args.step_seconds} s, "
          f"{args.metrics} values each; store: {args.tracking_uri or 'local sqlite'})")
    print("| logging | median ms | max ms | median vs synchronous |")
    print("|---|---:|---:|---:|")
    result = {}
    for name, values in seconds.items():
        median = statistics.median(values)
        result[name] = {"median_s": median, "max_s": max(values)}
        print(f"| {name} | {1000 * median:.2f} | {1000 * max(values):.2f} | {median / base:.3f} |")
    return result


if __name__ == "__main__":
    main()
