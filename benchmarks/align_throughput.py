"""Align + symmetrize throughput on the same pairs and parameters, interleaved over rounds:

- plain fast_align (``systran_align.Aligner``, C++, one process; the baseline);
- ours in process (:class:`~interlingua.operators.align.bidirectional_aligner.BidirectionalAligner`,
  numba-compiled decoder + symmetrization, one core);
- ours as :class:`~interlingua.operators.align.align_operator.FastAlignOperator` on Ray Data with 1
  and 2 actors (actor start-up included);
- eflomal (priors learned once on the bitext, then the bitext aligned with them: in units of 4,096 pairs as
  shipped, and as one run, alternating over the rounds).

Usage::

    python -m interlingua.benchmarks.align_throughput --src bible.tok.en --tgt bible.tok.es \\
        --params <version>/fast_align [--rounds 3] [--workers 1 2] [--repeat 1] [--eflomal-limit N] [--tables unpruned]

Ours decodes the folder's beam-pruned tables (``forward.npz`` / ``reverse.npz``: the entries plain fast_align reads
from ``forward.bin`` / ``reverse.bin``), read once and handed to the Ray actors; ``--tables unpruned`` times ours on
the unpruned tables the interlingua learner keeps too (about 7x the entries; what ``interlingua align --params``
decodes), which plain fast_align cannot read. The table printed says which.

Prints pairs/s (median over rounds), the speed ratio to plain fast_align (median and min-max over
rounds, each round's runs back to back), and agreement: the share of pairs whose symmetrized links
are identical to the 1-process run of ours, to plain fast_align (which decodes with tension 4.0 and
its own symmetrization), and for eflomal the link F1 against ours.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, existing_file, positive_int
from interlingua.benchmarks.interleave import format_ratio, interleave
from interlingua.operators.align.fast_align_training import TABLES


def _operator_run(parameters, sources, targets, workers: int) -> list[str]:
    import ray.data

    from interlingua.operators.align.align_operator import FastAlignOperator
    from interlingua.operators.runner import run_operator

    rows = [{"index": k, "src_tokens": " ".join(s), "tgt_tokens": " ".join(t)} for k, (s, t) in enumerate(zip(sources, targets))]
    ds = ray.data.from_items(rows, override_num_blocks=max(8, 4 * workers)).materialize()
    out = run_operator(ds, FastAlignOperator, {"parameters": parameters}, concurrency=workers, batch_size=2048)
    alignments = [""] * len(rows)
    for batch in out.iter_batches(batch_format="numpy", batch_size=4096):
        for k, a in zip(batch["index"], batch["alignment"]):
            alignments[int(k)] = str(a)
    return alignments


def identical(a: list[str], b: list[str]) -> float:
    """Percentage of positions with equal strings."""
    return 100.0 * sum(x == y for x, y in zip(a, b)) / max(len(a), 1)


def link_f1(predicted: list[str], reference: list[str]) -> float:
    """Link-level F1 (%) of Pharaoh alignments against a reference."""
    tp = fp = fn = 0
    for p, r in zip(predicted, reference):
        ps, rs = set(p.split()), set(r.split())
        tp += len(ps & rs)
        fp += len(ps - rs)
        fn += len(rs - ps)
    return 200.0 * tp / max(2 * tp + fp + fn, 1)


def _systran_tables(folder: str) -> str:
    """An argparse type: a parameters folder holding the forward.bin and reverse.bin that plain fast_align opens."""
    for name in ("forward.bin", "reverse.bin"):
        existing_file(str(Path(folder, name)))
    return folder


def main(argv: list[str] | None = None) -> None:
    parser = BenchmarkParser(__doc__)
    parser.add_argument("--src", required=True, type=existing_file, help="tokenized source file")
    parser.add_argument("--tgt", required=True, type=existing_file, help="tokenized target file")
    parser.add_argument("--params", required=True, type=_systran_tables,
                        help="learned fast_align parameters directory (forward.bin and reverse.bin for systran too)")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="Ray actor counts (none: in process only)")
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="first N pairs only")
    parser.add_argument("--repeat", type=positive_int, default=1, help="align K copies of the (limited) bitext")
    parser.add_argument("--eflomal-limit", type=int, default=None, help="eflomal on the first N pairs (default all; 0 skips it)")
    parser.add_argument("--tables", choices=TABLES, default="pruned",
                        help="which of the folder's tables ours decodes (default pruned: the ones plain fast_align reads)")
    args = parser.parse_args(argv)

    import ray
    import systran_align

    from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
    from interlingua.operators.align.fast_align_training import FastAlignParameters
    from interlingua.operators.align.parameter_files import ParametersError
    from interlingua.operators.align.pharaoh import format_pharaoh

    sources = [line.split() for line in open(args.src, encoding="utf-8")][: args.limit] * args.repeat
    targets = [line.split() for line in open(args.tgt, encoding="utf-8")][: args.limit] * args.repeat
    n = len(sources)
    plain = systran_align.Aligner(f"{args.params}/forward.bin", f"{args.params}/reverse.bin")
    try:
        parameters = FastAlignParameters.load(args.params, tables=args.tables)
    except ParametersError as err:
        parser.error(f"--params: {err}")
    ours = BidirectionalAligner(parameters)
    outputs: dict[str, list[str]] = {}

    def keep(name, links):
        outputs[name] = links

    runs = {
        "plain fast_align (systran_align.Aligner, C++, 1 process)": lambda: keep(
            "plain", [format_pharaoh(map(tuple, r["alignments"])) for r in plain.align_batch(sources, targets)]),
        "ours, in process (numba, 1 core)": lambda: keep("ours", ours.align_pharaoh(sources, targets)[2]),
    }
    ours.align_pharaoh(sources[:10], targets[:10])  # compile (numba caches on disk after the first run)
    if args.workers:
        ray.init(address="local", num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
        held = ray.put(parameters)
    for workers in args.workers:
        runs[f"ours, FastAlignOperator, {workers} Ray worker(s)"] = (
            lambda w=workers: keep(f"ray{w}", _operator_run(held, sources, targets, w)))
    seconds = interleave(runs, args.rounds)
    if args.workers:
        ray.shutdown()

    baseline = seconds[next(iter(runs))]
    print(f"\n{n:,} sentence pairs, grow-diag-final-and, {args.rounds} interleaved rounds; ours decodes the "
          f"{args.tables} tables ({parameters.forward.table.keys.size:,} + {parameters.reverse.table.keys.size:,} "
          "entries), plain fast_align the pruned ones (forward.bin, reverse.bin)\n")
    print("| run | pairs/s (median) | speed vs plain fast_align: median (min-max) | identical to ours in process % | identical to plain % |")
    print("|---|---:|---:|---:|---:|")
    keys = ["plain", "ours"] + [f"ray{w}" for w in args.workers]
    for (name, times), key in zip(seconds.items(), keys):
        print(f"| {name} | {n / statistics.median(times):,.0f} | {format_ratio(baseline, times)} | "
              f"{identical(outputs[key], outputs['ours']):.2f} | {identical(outputs[key], outputs['plain']):.2f} |")
    if len(args.workers) > 1:
        w0, w1 = args.workers[0], args.workers[-1]
        one = seconds[f"ours, FastAlignOperator, {w0} Ray worker(s)"]
        many = seconds[f"ours, FastAlignOperator, {w1} Ray worker(s)"]
        print(f"\n{w1} vs {w0} Ray worker(s): {format_ratio(one, many)}")

    if args.eflomal_limit != 0:
        _eflomal(sources[: args.eflomal_limit], targets[: args.eflomal_limit], outputs["ours"][: args.eflomal_limit or n],
                 outputs["plain"][: args.eflomal_limit or n], args.rounds)


def _eflomal(sources, targets, ours: list[str], plain: list[str], rounds: int) -> None:
    """Priors learned once; the pairs aligned in units of ``UNIT_PAIRS`` (as shipped: the same bytes on any number of
    workers) and as one eflomal run over all of them, alternating over ``rounds``."""
    import tempfile

    from interlingua.operators.align.eflomal_backend import UNIT_PAIRS, EflomalAligner, learn_eflomal_priors

    n = len(sources)
    with tempfile.TemporaryDirectory(prefix="eflomal_bench_") as directory:
        start = time.perf_counter()
        learn_eflomal_priors(zip(sources, targets), directory)
        learn_s = time.perf_counter() - start
        links: dict[str, list[str]] = {}

        def align(name: str, unit: int):
            def run():
                links[name] = EflomalAligner(directory, unit_pairs=unit).align_pharaoh(sources, targets)[2]
            return run

        seconds = interleave({"units": align("units", UNIT_PAIRS), "one run": align("one run", max(n, 1))}, rounds)
    units, whole = links["units"], links["one run"]
    align_s = statistics.median(seconds["units"])
    print(f"\neflomal on {n:,} pairs: priors {learn_s:.1f} s; aligning with priors (median of {rounds} alternating rounds) "
          f"in units of {UNIT_PAIRS:,} pairs {align_s:.1f} s ({n / align_s:,.0f} pairs/s, one process), as one run "
          f"{statistics.median(seconds['one run']):.1f} s: units take {format_ratio(seconds['units'], seconds['one run'])} "
          f"one run's time; {identical(units, whole):.2f} % of the pairs' links identical between the two cuts")
    print(f"| agreement of eflomal's symmetrized links (units) | identical pairs % | link F1 % |")
    print("|---|---:|---:|")
    print(f"| vs ours (fast_align, learned tensions) | {identical(units, ours):.2f} | {link_f1(units, ours):.2f} |")
    print(f"| vs plain fast_align (systran Aligner) | {identical(units, plain):.2f} | {link_f1(units, plain):.2f} |")


if __name__ == "__main__":
    main()
