"""fast_align parameter learning (both directions, -d -o -v, 5 iterations), interleaved over rounds:

- systran-align's learner (``generate_alignment_probabilities``; ``--systran-threads`` OpenMP threads,
  default 1 = per core; the baseline);
- ours in process (:func:`~interlingua.operators.align.fast_align_em.learn_tables`, 1 shard);
- ours with the E-step on 1 and 2 Ray actors (:class:`~interlingua.operators.align.distributed_em.RayExecutor`,
  actor start-up and the initial pass included).

Usage::

    python -m interlingua.benchmarks.align_learning --src bible.tok.en --tgt bible.tok.es [--rounds 3] [--limit N]
        [--scaling-rounds 6]

The worker scaling (2 vs 1 Ray workers) is also measured in ``--scaling-rounds`` more rounds of the two Ray
runs alone (their order alternating), since one round's ratio varies by about +-10 % on a shared 2-core VM;
its lines report every round (the main rounds' and these).

The Ray runs' seconds (wall) include encoding the corpus and starting the actors; the learning step alone
(initial pass + iterations on started actors) is timed too, with its CPU accounting: the driver's CPU
seconds, the actors' CPU and busy seconds (idle share = 1 - busy / (actors x learning seconds)) and the
CPU of the rest of the process tree (Ray's daemons, idle workers).

The Bible files are the Moses-tokenized en-es Bible (one sentence per line, tokens separated by spaces),
as ``interlingua run bitext-corpus`` tokenizes it from ``.interlingua/assets/bible``.

Prints seconds and ratios (median, min-max over rounds), then parameter agreement: ours on Ray vs
in process (max relative difference of the tables: 0, the sums being exact and each group normalized whole),
whether two runs gave identical tables, ours vs systran (tensions, table entries, links: share of
identical symmetrized alignments and link F1 when the Bible is decoded with each learner's parameters).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from interlingua.benchmarks.arguments import BenchmarkParser, existing_file, positive_int


def main(argv: list[str] | None = None) -> None:
    parser = BenchmarkParser(__doc__)
    parser.add_argument("--src", required=True, type=existing_file)
    parser.add_argument("--tgt", required=True, type=existing_file)
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--no-ray", action="store_true", help="systran vs ours in process only")
    parser.add_argument("--scaling-rounds", type=positive_int, default=6,
                        help="more rounds of the 1- and 2-worker Ray runs alone, for the scaling ratio (default 6)")
    parser.add_argument("--systran-threads", type=int, default=1, help="OpenMP threads of systran's learner (default 1: per core)")
    args = parser.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.systran_threads)  # before systran_align loads OpenMP

    import ray

    from interlingua.benchmarks.interleave import format_ratio, interleave
    from interlingua.operators.align.distributed_em import RayExecutor
    from interlingua.operators.align.fast_align_em import InProcessExecutor, encode_corpus, learn_tables
    from interlingua.operators.align.fast_align_training import FastAlignSettings, fast_align_token, learn_fast_align

    sources = [line.split() for line in open(args.src, encoding="utf-8")][: args.limit]
    targets = [line.split() for line in open(args.tgt, encoding="utf-8")][: args.limit]
    pairs = [(s, t) for s, t in zip(sources, targets) if s and t]
    settings = FastAlignSettings()
    work = tempfile.mkdtemp(prefix="align_learning_")
    results: dict[str, object] = {}
    startup: dict[int, list[float]] = {}  # actor start-up (process, imports, shard transfer)
    steady: dict[int, list[float]] = {}  # initial pass + iterations on started actors
    cpu: dict[int, list[dict[str, float]]] = {}  # CPU accounting of the learning step

    def systran():
        results["systran"] = learn_fast_align(pairs, f"{work}/systran", settings, learner="systran")

    def ours_in_process():
        corpus = encode_corpus(([fast_align_token(w) for w in s], [fast_align_token(w) for w in t]) for s, t in pairs)
        results.setdefault("in_process_runs", []).append(learn_tables(corpus, settings, InProcessExecutor(corpus)))

    def ours_on_ray(workers):
        corpus = encode_corpus(([fast_align_token(w) for w in s], [fast_align_token(w) for w in t]) for s, t in pairs)
        started = time.perf_counter()
        executor = RayExecutor(corpus, workers, settings)
        try:
            before, driver_cpu, actors_before = tree_cpu(), time.process_time(), executor.accounting()
            learning = time.perf_counter()
            results[f"ray{workers}"] = learn_tables(corpus, settings, executor)
            steady.setdefault(workers, []).append(time.perf_counter() - learning)
            cpu.setdefault(workers, []).append(cpu_accounting(
                steady[workers][-1], time.process_time() - driver_cpu, before, tree_cpu(), actors_before,
                executor.accounting()))
        finally:
            executor.close()
        startup.setdefault(workers, []).append(learning - started)

    runs = {
        f"systran-align learner ({args.systran_threads} OpenMP thread(s))": systran,
        "ours, in process (1 core)": ours_in_process,
    }
    if not args.no_ray:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        runs["ours, E-step on 1 Ray worker"] = lambda: ours_on_ray(1)
        runs["ours, E-step on 2 Ray workers"] = lambda: ours_on_ray(2)
    ours_in_process()  # numba compilation (cached on disk afterwards), not timed
    seconds = interleave(runs, args.rounds, progress=lambda line: print(line, flush=True))
    names = list(runs)
    scaling_wall = {}
    if not args.no_ray:
        scaling_wall = {1: list(seconds[names[2]]), 2: list(seconds[names[3]])}
        if args.scaling_rounds > 0:
            print(f"scaling rounds (the two Ray runs alone, {args.scaling_rounds} rounds, order alternating):", flush=True)
            extra = interleave({"1 Ray worker": lambda: ours_on_ray(1), "2 Ray workers": lambda: ours_on_ray(2)},
                               args.scaling_rounds, progress=lambda line: print(line, flush=True), rotate=True)
            scaling_wall[1] += extra["1 Ray worker"]
            scaling_wall[2] += extra["2 Ray workers"]
        ray.shutdown()

    print(f"\n{len(pairs):,} pairs, both directions, 5 iterations (-d -o -v), {args.rounds} interleaved rounds\n")
    print("| run | seconds (median) | vs systran learner: speed, median (min-max) |")
    print("|---|---:|---:|")
    for name in names:
        print(f"| {name} | {statistics.median(seconds[name]):.1f} | {format_ratio(seconds[names[0]], seconds[name])} |")
    if not args.no_ray:
        _ray_report(seconds, names, scaling_wall, steady, startup, cpu, results, reference_of(results))
    _agreement(results, pairs, sources, targets, settings, work)


def reference_of(results):
    return results["in_process_runs"][-1]


def tree_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of this process and each descendant (Ray's daemons and workers)."""
    import psutil

    me = psutil.Process()
    seconds = {}
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            seconds[proc.pid] = times.user + times.system
        except psutil.Error:  # exited between listing and reading
            pass
    return seconds


def cpu_accounting(wall, driver_cpu, tree_before, tree_after, actors_before, actors_after) -> dict[str, float]:
    """Where the CPU went during one learning step: driver, actors (busy with shard work, CPU), the rest of Ray."""
    import os

    tree = sum(after - tree_before.get(pid, 0.0) for pid, after in tree_after.items())
    actors_cpu = sum(a["process_cpu_s"] - b["process_cpu_s"] for a, b in zip(actors_after, actors_before))
    actors_busy = sum(a["busy_s"] - b["busy_s"] for a, b in zip(actors_after, actors_before))
    steps = {key: sum(a.get(key, 0.0) - b.get(key, 0.0) for a, b in zip(actors_after, actors_before))
             for key in actors_after[0] if key.startswith("busy_") and key != "busy_s"}  # busy_<step>_s, all actors
    return {"wall": wall, "driver_cpu": driver_cpu, "actors_cpu": actors_cpu, "actors_busy": actors_busy,
            "ray_other_cpu": tree - driver_cpu - actors_cpu, "idle_share": 1 - actors_busy / (len(actors_after) * wall),
            "machine_load": os.getloadavg()[0], **steps}


def _ray_report(seconds, names, scaling_wall, steady, startup, cpu, results, reference) -> None:
    """Ray worker scaling (wall and steady state, every round), CPU accounting, and Ray vs in-process tables."""
    import numpy as np

    from interlingua.benchmarks.interleave import format_ratio

    ray1, ray2 = scaling_wall[1], scaling_wall[2]
    print(f"\nworker scaling over {len(ray1)} rounds ({len(seconds[names[2]])} main + {len(ray1) - len(seconds[names[2]])} "
          "scaling rounds):")
    print(f"ours 2 vs 1 Ray worker(s), wall (encoding + actor start-up included; goal >= 1.7): {format_ratio(ray1, ray2)}")
    print(f"ours 2 vs 1 Ray worker(s), learning step on started actors (goal >= 1.7): {format_ratio(steady[1], steady[2])} "
          f"(learning median {statistics.median(steady[1]):.2f} s / {statistics.median(steady[2]):.2f} s; "
          f"actor start-up median {statistics.median(startup[1]):.2f} s / {statistics.median(startup[2]):.2f} s)")
    print("learning step per round, 1 / 2 workers (ratio): " + ", ".join(
        f"{a:.2f} / {b:.2f} ({a / b:.2f}x)" for a, b in zip(steady[1], steady[2])))
    for label, ours in (("wall", ray1), ("learning step", steady[1])):  # the main rounds (those systran ran in)
        print(f"ours 1 Ray worker vs systran learner, {label} (time ratio, goal <= 1.3): "
              f"{statistics.median(a / b for a, b in zip(ours, seconds[names[0]])):.2f}")
    print("\nCPU accounting of the learning step (medians over rounds; 2 cores):\n")
    print("| workers | learning s | driver CPU s | actors CPU s | actors busy s | actor idle share | other Ray processes CPU s | load avg (1 min) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for workers in (1, 2):
        med = {k: statistics.median(run[k] for run in cpu[workers]) for k in cpu[workers][0]}
        print(f"| {workers} | {med['wall']:.2f} | {med['driver_cpu']:.2f} | {med['actors_cpu']:.2f} | {med['actors_busy']:.2f} "
              f"| {med['idle_share']:.0%} | {med['ray_other_cpu']:.2f} | {med['machine_load']:.1f} |")
    print("\nActors' busy seconds by step (medians, summed over actors):\n")
    for workers in (1, 2):
        steps = sorted(k for k in cpu[workers][0] if k.startswith("busy_"))
        print(f"- {workers} worker(s): " + ", ".join(
            f"{k[5:-2]} {statistics.median(run.get(k, 0.0) for run in cpu[workers]):.2f}" for k in steps))
    for workers in (1, 2):
        other = results[f"ray{workers}"]
        diffs, only_one = [], 0
        for a, b in ((reference.forward, other.forward), (reference.reverse, other.reverse)):
            common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
            diffs.append(float(np.max(np.abs(a.probabilities[ia] - b.probabilities[ib]) / a.probabilities[ia])))
            only_one += a.keys.size + b.keys.size - 2 * common.size
        tension = max(abs(other.forward_tension / reference.forward_tension - 1),
                      abs(other.reverse_tension / reference.reverse_tension - 1))
        print(f"{workers} Ray worker(s) vs in process (1 shard): max relative table difference {max(diffs):.3g} on common "
              f"entries, {only_one} exported entries in only one (beam threshold), tensions' relative difference {tension:.3g}")


def _agreement(results, pairs, sources, targets, settings, work) -> None:
    """Reproducibility of ours, and ours vs systran's learner (tables, tensions, decoded links)."""
    import numpy as np

    from interlingua.benchmarks.align_throughput import identical, link_f1
    from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
    from interlingua.operators.align.fast_align_training import learn_fast_align

    reference = reference_of(results)
    runs_identical = all(np.array_equal(r.forward.probabilities, reference.forward.probabilities)
                         and np.array_equal(r.reverse.probabilities, reference.reverse.probabilities)
                         for r in results["in_process_runs"])
    print(f"\nin-process runs byte-identical ({len(results['in_process_runs'])} runs): {runs_identical}")
    theirs = results["systran"]
    print(f"\ntensions (forward / reverse): ours {reference.forward_tension:.4g} / {reference.reverse_tension:.4g}, "
          f"systran {theirs.forward.tension:.4g} / {theirs.reverse.tension:.4g}")
    for name, ours_table, their_table in (("forward", reference.forward, theirs.forward.table),
                                          ("reverse", reference.reverse, theirs.reverse.table)):
        ours_entries = _by_words(ours_table)
        their_entries = _by_words(their_table)
        common = ours_entries.keys() & their_entries.keys()
        rel = np.array([abs(ours_entries[k] - their_entries[k]) / their_entries[k] for k in common])
        print(f"{name} table: {len(ours_entries):,} entries ours, {len(their_entries):,} systran, {len(common):,} common; "
              f"relative difference median {np.median(rel):.2g}, 99th percentile {np.percentile(rel, 99):.2g}")
    ours_params = learn_fast_align(pairs, f"{work}/ours", settings)
    ours_links = BidirectionalAligner(ours_params).align_pharaoh(sources, targets)[2]
    their_links = BidirectionalAligner(theirs).align_pharaoh(sources, targets)[2]
    print(f"links on these pairs decoded with each learner's parameters (ours, learned tensions, grow-diag-final-and): "
          f"identical pairs {identical(ours_links, their_links):.2f} %, link F1 {link_f1(ours_links, their_links):.2f} %")


def _by_words(table) -> dict[tuple[str, str], float]:
    vocabulary, stride = table.vocabulary, table.stride
    return {(vocabulary[k // stride - 1], vocabulary[k % stride - 1]): p
            for k, p in zip(table.keys.tolist(), table.probabilities.tolist())}


if __name__ == "__main__":
    main()
