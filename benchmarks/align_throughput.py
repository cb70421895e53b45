"""Align + symmetrize throughput: plain fast_align (systran_align.Aligner, one process) vs
FastAlignOperator on Ray Data with 1 and 2 actors, all with the same learned parameters.

Usage::

    python -m interlingua.benchmarks.align_throughput --src bible.tok.en --tgt bible.tok.es \\
        [--params DIR | --learn-into DIR] [--workers 1 2] [--limit N] [--repeat K]

``--repeat K`` aligns K copies of the bitext (same parameters), so the fixed cost of starting the
actors is amortised as it is on a real corpus; the identical-links columns compare every copy.

Prints a table: pairs/s and the share of sentence pairs whose links are identical to the plain
run and to the 1-worker run. ``systran_align.Aligner`` decodes with fast_align's default tension
(4.0) whatever was learned, so the operator is also run with ``tension_override=4.0`` to measure
agreement on equal terms.
"""

from __future__ import annotations

import argparse
import time


def _operator_run(parameters_dir: str, sources, targets, workers: int, tension_override: float | None) -> tuple[list[str], float]:
    import ray.data

    from interlingua.operators.align.align_operator import FastAlignOperator
    from interlingua.operators.runner import run_operator

    rows = [{"index": k, "src_tokens": " ".join(s), "tgt_tokens": " ".join(t)} for k, (s, t) in enumerate(zip(sources, targets))]
    ds = ray.data.from_items(rows, override_num_blocks=16).materialize()
    start = time.perf_counter()
    out = run_operator(ds, FastAlignOperator, {"parameters_dir": parameters_dir, "tension_override": tension_override},
                       concurrency=workers, batch_size=2048)
    alignments = [""] * len(rows)
    for batch in out.iter_batches(batch_format="numpy", batch_size=4096):
        for k, a in zip(batch["index"], batch["alignment"]):
            alignments[int(k)] = str(a)
    return alignments, time.perf_counter() - start


def _identical(a: list[str], b: list[str]) -> float:
    return 100.0 * sum(x == y for x, y in zip(a, b)) / max(len(a), 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="tokenized source file")
    parser.add_argument("--tgt", required=True, help="tokenized target file")
    parser.add_argument("--params", help="learned parameters directory to reuse")
    parser.add_argument("--learn-into", help="learn parameters into this directory first")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--limit", type=int, default=None, help="first N pairs only")
    parser.add_argument("--repeat", type=int, default=1, help="align K copies of the (limited) bitext")
    args = parser.parse_args(argv)

    import ray
    import systran_align

    from interlingua.operators.align.fast_align_training import learn_fast_align
    from interlingua.operators.align.pharaoh import format_pharaoh

    sources = [line.split() for line in open(args.src, encoding="utf-8")][: args.limit]
    targets = [line.split() for line in open(args.tgt, encoding="utf-8")][: args.limit]
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    sources, targets = sources * args.repeat, targets * args.repeat
    parameters_dir = args.params
    if parameters_dir is None:
        if not args.learn_into:
            parser.error("give --params DIR or --learn-into DIR")
        start = time.perf_counter()
        learn_fast_align(zip(sources, targets), args.learn_into)
        print(f"learning: {time.perf_counter() - start:.1f} s")
        parameters_dir = args.learn_into

    start = time.perf_counter()
    aligner = systran_align.Aligner(f"{parameters_dir}/forward.bin", f"{parameters_dir}/reverse.bin")
    plain = [format_pharaoh(map(tuple, r["alignments"])) for r in aligner.align_batch(sources, targets)]
    plain_s = time.perf_counter() - start

    ray.init(address="local", num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
    rows = [("plain fast_align (systran Aligner, 1 process)", plain_s, plain, plain)]
    reference_by_tension: dict = {}
    for tension, label in ((4.0, "tension 4.0"), (None, "learned tension")):
        for workers in args.workers:
            links, seconds = _operator_run(parameters_dir, sources, targets, workers, tension)
            reference_by_tension.setdefault(tension, links)
            rows.append((f"operator, {workers} Ray worker(s), {label}", seconds, links, reference_by_tension[tension]))
    ray.shutdown()

    n = len(sources)
    print(f"\n{n} sentence pairs, grow-diag-final-and\n")
    print(f"| run | seconds | pairs/s | identical to plain % | identical to 1-worker run % |")
    print("|---|---:|---:|---:|---:|")
    for name, seconds, links, reference in rows:
        print(f"| {name} | {seconds:.2f} | {n / seconds:,.0f} | {_identical(links, plain):.2f} | {_identical(links, reference):.2f} |")


if __name__ == "__main__":
    main()
