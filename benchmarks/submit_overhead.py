"""Overhead of running a workflow as a Ray job: ``interlingua submit --wait`` vs ``interlingua run``.

Usage::

    flock /work/heavy.lock python -m interlingua.benchmarks.submit_overhead [--rounds 3] [--pairs 20]

Both run the same no-op-sized workflow (``bitext-corpus`` on ``--pairs`` written sentence pairs, one
worker) as a user would, as a CLI process:

- **A, baseline**: ``interlingua run bitext-corpus ...`` — in process: up to ``in_process_rows`` pairs (5,000) are
  tokenized and aligned in the driver, no Ray starts.
- **R, baseline with Ray**: the same with ``--set in_process_rows=0`` — a local Ray started in process.
- **B, candidate**: ``interlingua submit bitext-corpus ... --wait`` to a Ray head started here
  (:func:`interlingua.cluster.local_head.local_ray_head`, same logical CPUs, token auth on): config
  validated locally, job package uploaded, runtime env set up, the driver started on the head, the log
  streamed back until the job ends.

Rounds are interleaved A R B A R B ...; each run publishes a new corpus name (no resumed shards). Reported:
median wall seconds and spread (min-max) per mode, the ratios B/A and B/R per round (median and spread), and for
B the time from starting ``interlingua submit`` to the first line of the job's log on its stdout.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, positive_int

PAIRS = [("the cat sits on the mat", "el gato se sienta en la alfombra"), ("the dog runs", "el perro corre"),
         ("the house is big", "la casa es grande"), ("i like water", "me gusta el agua")]


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, float | None]:
    """Wall seconds of the command, and seconds until its first stdout line (None if it printed none)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    first = None
    for _ in proc.stdout:
        if first is None:
            first = time.perf_counter() - start
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise RuntimeError(f"{' '.join(args[2:5])} failed ({proc.returncode}):\n{err[-3000:]}")
    return time.perf_counter() - start, first


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = BenchmarkParser(__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--pairs", type=int, default=20, help="sentence pairs in the workflow's input")
    parser.add_argument("--cpus", type=int, default=2, help="logical CPUs of the Ray head")
    args = parser.parse_args(argv)

    from interlingua.cluster.local_head import local_ray_head

    cli = [sys.executable, "-m", "interlingua.workflows.cli"]
    with tempfile.TemporaryDirectory(prefix="submit-bench-") as tmp:
        root = Path(tmp)
        rows = [(f"{en} {k}", f"{es} {k}") for k in range(args.pairs) for en, es in PAIRS][:args.pairs]
        (root / "raw.en").write_text("".join(en + "\n" for en, _ in rows))
        (root / "raw.es").write_text("".join(es + "\n" for _, es in rows))
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "MLFLOW_TRACKING_URI"}
        base_env.update(PYTHONUNBUFFERED="1", RAY_DEDUP_LOGS="1", INTERLINGUA_HOME=str(root / "local-state"))

        def workflow(name: str) -> list[str]:
            return ["bitext-corpus", "--set", f"source={root / 'raw.en'}", "--set", f"target={root / 'raw.es'}",
                    "--set", "workers=1", "--set", f"corpus_name={name}"]

        times: dict[str, list[float]] = {"A": [], "R": [], "B": []}
        first_line: list[float] = []
        with local_ray_head(num_cpus=args.cpus) as head:
            submit_env = head.client_env(base_env)
            for r in range(args.rounds):
                a, _ = _timed([*cli, "run", *workflow(f"bench-run-{r}")], base_env)
                with_ray, _ = _timed([*cli, "run", *workflow(f"bench-ray-{r}"), "--set", "in_process_rows=0"], base_env)
                b, first = _timed([*cli, "submit", *workflow(f"bench-submit-{r}"), "--shared-path", str(root),
                                   "--state-dir", str(root / "job-state"), "--address", head.address, "--wait"],
                                  submit_env)
                times["A"].append(a)
                times["R"].append(with_ray)
                times["B"].append(b)
                if first is not None:
                    first_line.append(first)
                print(f"round {r + 1}: run {a:.2f} s, run with Ray {with_ray:.2f} s, submit --wait {b:.2f} s, "
                      f"first log line {first or float('nan'):.2f} s", flush=True)

    ratios = {base: [b / x for x, b in zip(times[base], times["B"])] for base in ("A", "R")}
    print()
    print(f"bitext-corpus on {args.pairs} pairs, {args.rounds} interleaved rounds, Ray head with {args.cpus} CPUs")
    print(f"{'mode':50s} {'median s':>9s} {'spread s':>12s} {'vs A':>6s}")
    for mode, label in (("A", "interlingua run (in process, no Ray)"),
                        ("R", "interlingua run (in_process_rows=0: local Ray)"),
                        ("B", "interlingua submit --wait (Ray job)")):
        ratio = statistics.median([x / a for a, x in zip(times["A"], times[mode])])
        print(f"{mode + '  ' + label:50s} {statistics.median(times[mode]):9.2f} {_spread(times[mode]):>12s} {ratio:6.2f}")
    for base in ("A", "R"):
        print(f"ratio B/{base} per round: median {statistics.median(ratios[base]):.2f}, spread {_spread(ratios[base])}")
    if first_line:
        print(f"submit -> first job log line: median {statistics.median(first_line):.2f} s, spread {_spread(first_line)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
