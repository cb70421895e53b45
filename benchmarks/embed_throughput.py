"""The ``Embed`` operator on CPU: a pool of one actor (the baseline) against the class's default pool, interleaved.

    python -m interlingua.benchmarks.embed_throughput [--model .interlingua/assets/e5-small] [--texts 3000]
        [--rounds 3] [--cpus 2]

The texts are the first ``--texts`` English verses of the Bible asset (``interlingua assets bible``). Each run
embeds them through a Ray dataset (``run_operator``, Ray batches of 256 rows, as workflows embed), actor
start-up and model loading included, on a local Ray with ``--cpus`` CPUs. Prints texts/s per pool (median over
rounds), the speed ratio of the default pool to one actor (median, min-max over rounds), and whether the vectors
are byte-identical across pools and rounds.
"""

from __future__ import annotations

import logging
import statistics
import sys
import time

from interlingua.benchmarks.arguments import BenchmarkParser, add_bible_argument, default_e5, e5_folder, positive_int
from interlingua.benchmarks.interleave import format_ratio, interleave_results


def main(argv: list[str] | None = None) -> int:
    parser = BenchmarkParser(__doc__)
    parser.add_argument("--model", type=e5_folder, default=default_e5(), help="encoder folder (default: the e5-small asset)")
    add_bible_argument(parser)
    parser.add_argument("--texts", type=positive_int, default=3000)
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--cpus", type=positive_int, default=2)
    args = parser.parse_args(argv)

    import numpy as np
    import pyarrow.parquet as pq
    import ray

    from interlingua.operators.embed import Embed
    from interlingua.operators.runner import run_operator

    texts = [t for t in pq.read_table(args.bible, columns=["en"]).column("en").to_pylist() if t and t.strip()][: args.texts]
    ray.init(address="local", num_cpus=args.cpus, object_store_memory=400 << 20, log_to_driver=False,
             include_dashboard=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray").setLevel(logging.ERROR)  # Ray Data's per-dataset lines
    vectors: list[np.ndarray] = []

    def run(pool):
        def embed() -> float:
            dataset = ray.data.from_items([{"row": i, "text": t} for i, t in enumerate(texts)])
            start = time.perf_counter()
            rows = run_operator(dataset, Embed, {"model": args.model}, concurrency=pool, batch_size=256).take_all()
            seconds = time.perf_counter() - start
            rows.sort(key=lambda r: r["row"])
            vectors.append(np.stack([r["vector"] for r in rows]))
            return seconds
        return embed

    default = Embed.concurrency
    runs = {"1 actor": run(1), f"default pool {default}": run(None)}
    seconds = interleave_results(runs, rounds=args.rounds, on_result=lambda r, name, s: print(
        f"round {r + 1}: {name} {s:.1f} s ({len(texts) / s:.0f} texts/s)", flush=True))
    ray.shutdown()
    identical = all(np.array_equal(vectors[0], v) for v in vectors[1:])
    print(f"\nEmbed on CPU, {len(texts)} texts, {args.model}, {args.cpus} CPUs, {args.rounds} interleaved rounds "
          f"({time.strftime('%Y-%m-%d %H:%M')})")
    print(f"{'pool':<26} {'median s':>9} {'texts/s':>8}")
    for name, values in seconds.items():
        print(f"{name:<26} {statistics.median(values):>9.1f} {len(texts) / statistics.median(values):>8.0f}")
    print(f"default pool vs 1 actor (speed): {format_ratio(*seconds.values())} (median, min-max)")
    print(f"vectors byte-identical across pools and rounds: {identical}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
