"""Incremental refresh vs rebuilding from scratch: the Bible bitext-corpus after adding 5 % new pairs.

Usage::

    flock /work/heavy.lock python -m interlingua.benchmarks.refresh_incremental [--rounds 2] [--new-share 0.05] [--cli]

The Bible en-es asset is split into 20 Parquet input files: 19 hold the first 95 % of the verse pairs
(the corpus as it was), the 20th the last 5 % (the new data). Setup: ``refresh`` builds the first
version from the 19 files. Then, interleaved over the rounds (:mod:`interlingua.benchmarks.interleave`):

* **incremental**: the store holding the first version, ``refresh`` after the 20th file appeared
  (only the new file is read, tokenized and aligned with the parent's parameters; the 19 inputs'
  shards are reused by hard link). The new version is removed after the round, so each starts alike.
* **rebuild**: a fresh store, ``refresh`` over all 20 files (read, hygiene, tokenize, learn fast_align,
  align, word pairs for every pair).

In-process rows: wall time of the ``refresh`` call with Ray already running, as in a long-lived scheduler
(without start-up). With ``--cli`` each round also runs ``interlingua refresh SPEC.yaml`` in a new process
(with start-up: Python, imports, and a local Ray where a step needs one; an incremental refresh of a few
thousand pairs runs in the driver and starts none). Bytes written = sizes of the files (inodes) that
appeared under the store during the run; hard links to existing files count 0. Prints medians and each
ratio's median and spread (min-max over rounds).
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, add_bible_argument, positive_int


def _inodes(root: Path) -> dict[int, int]:
    found = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            stat = os.stat(os.path.join(folder, name))
            found[stat.st_ino] = stat.st_size
    return found


def _measure(spec, store_root: Path) -> tuple[float, int, dict]:
    from interlingua.workflows.refresh import refresh

    before = _inodes(store_root) if store_root.exists() else {}
    start = time.perf_counter()
    summary = refresh(spec, log=lambda line: None)
    seconds = time.perf_counter() - start
    after = _inodes(store_root)
    return seconds, sum(size for inode, size in after.items() if inode not in before), summary


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="refresh_bench_", dir=os.environ.get("TMPDIR")))
    try:
        _run(work)
    finally:  # the corpus copies never stay in the temp folder, also after an error
        shutil.rmtree(work, ignore_errors=True)


def _run(work: Path) -> None:
    parser = BenchmarkParser(__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=2)
    parser.add_argument("--new-share", type=float, default=0.05, help="share of the pairs that arrive as new data")
    parser.add_argument("--files", type=positive_int, default=19, help="input files the old data is split into")
    parser.add_argument("--workers", type=positive_int, default=2)
    parser.add_argument("--cli", action="store_true", help="also time `interlingua refresh` in a new process")
    parser.add_argument("--pairs", type=positive_int, help="use only the first N verse pairs (a quick smoke run)")
    add_bible_argument(parser)
    args = parser.parse_args()

    import pyarrow.parquet as pq

    from interlingua.benchmarks.interleave import interleave, ratio
    from interlingua.core.runtime import init_ray
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.refresh import RefreshSpec

    bible = pq.read_table(args.bible, columns=["id", "en", "es"])
    if args.pairs:
        bible = bible.slice(0, args.pairs)
    inputs = work / "inputs"
    inputs.mkdir()
    new_rows = int(round(bible.num_rows * args.new_share))
    old = bible.slice(0, bible.num_rows - new_rows)
    per_file = -(-old.num_rows // args.files)
    for k in range(args.files):
        pq.write_table(old.slice(k * per_file, per_file), inputs / f"part-{k:02d}.parquet")
    new_file = work / "new.parquet"
    pq.write_table(bible.slice(old.num_rows, new_rows), new_file)

    init_ray(None, num_cpus=max(2, args.workers))

    def spec(store_root: Path) -> RefreshSpec:
        return RefreshSpec(workflow="bitext-corpus", inputs=[f"{inputs}/*.parquet"],
                           config={"corpus_name": "bible", "store_root": str(store_root), "src_lang": "en",
                                   "tgt_lang": "es", "workers": args.workers})

    incremental_root = work / "store-incremental"
    setup_seconds, setup_bytes, first = _measure(spec(incremental_root), incremental_root)
    print(f"setup: first version {first['version']} from {old.num_rows} pairs in {setup_seconds:.1f} s, "
          f"{setup_bytes:,} bytes", flush=True)
    shutil.copy(new_file, inputs / "part-new.parquet")

    seconds: dict[str, list[float]] = {}
    written: dict[str, list[int]] = {}
    rows: dict[str, int] = {}

    def record(name: str, measured: tuple[float, int, dict]) -> dict:
        seconds.setdefault(name, []).append(measured[0])
        written.setdefault(name, []).append(measured[1])
        rows[name] = measured[2]["rows"]
        print(f"{name}: {measured[0]:.1f} s, {measured[1]:,} B ({measured[2]['rows']} rows, {measured[2]['mode']})",
              flush=True)
        return measured[2]

    def undo_incremental(summary: dict) -> None:  # back to the first version, so every round starts alike
        assert summary["mode"] == "incremental", summary
        shutil.rmtree(incremental_root / "bible" / summary["version"])
        CorpusStore(str(incremental_root))._point_latest("bible", first["version"])

    def incremental() -> None:
        undo_incremental(record("incremental", _measure(spec(incremental_root), incremental_root)))

    parameter_bytes: list[int] = []

    def rebuild() -> None:
        root = work / "store-rebuild"
        summary = record("rebuild", _measure(spec(root), root))
        parameter_bytes.append(sum(_inodes(root / "bible" / summary["version"] / "fast_align").values()))
        shutil.rmtree(root)

    runs = {"incremental": incremental, "rebuild": rebuild}
    if args.cli:
        runs["incremental, CLI"] = lambda: undo_incremental(record("incremental, CLI", _measure_cli(
            spec(incremental_root), incremental_root, work)))

        def rebuild_cli() -> None:
            root = work / "store-rebuild-cli"
            record("rebuild, CLI", _measure_cli(spec(root), root, work))
            shutil.rmtree(root)

        runs["rebuild, CLI"] = rebuild_cli
    interleave(runs, rounds=args.rounds)

    print()
    print(f"Bible en-es, {rows['rebuild']:,} pairs in the refreshed version; {new_rows:,} new ({args.new_share:.0%}); "
          f"{args.rounds} rounds, interleaved")
    print("| run | wall s (median) | bytes written (median) | time vs rebuild | bytes vs rebuild |")
    print("|---|---:|---:|---:|---:|")
    for name in runs:
        baseline = "rebuild, CLI" if name.endswith("CLI") else "rebuild"
        t_median, t_low, t_high = ratio(seconds[baseline], seconds[name])
        b_median, b_low, b_high = ratio([float(b) for b in written[baseline]], [float(b) for b in written[name]])
        print(f"| {name} | {statistics.median(seconds[name]):.1f} | {statistics.median(written[name]):,.0f} | "
              f"{t_median:.1f}× less ({t_low:.1f}–{t_high:.1f}) | {b_median:.1f}× less ({b_low:.1f}–{b_high:.1f}) |")
    share = statistics.median(written["incremental"]) / statistics.median(written["rebuild"])
    print(f"incremental bytes / rebuild bytes = {share:.3f} (new data share {new_rows / rows['rebuild']:.3f})")
    params = statistics.median(parameter_bytes)
    print(f"bytes per pair: incremental {statistics.median(written['incremental']) / new_rows:,.0f} per new pair; "
          f"rebuild {(statistics.median(written['rebuild']) - params) / rows['rebuild']:,.0f} per pair plus "
          f"{params:,.0f} of fast_align parameters (reused by the incremental refresh)")


def _measure_cli(spec, store_root: Path, work: Path) -> tuple[float, int, dict]:
    """``interlingua refresh SPEC.yaml --json`` in a new process: seconds, bytes written, its summary."""
    import json
    import subprocess
    import sys

    import yaml

    spec_file = work / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec.model_dump(mode="json")))
    before = _inodes(store_root) if store_root.exists() else {}
    env = {**os.environ, "INTERLINGUA_HOME": str(work / "state")}
    env.pop("RAY_ADDRESS", None)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", "refresh", str(spec_file), "--json"],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"interlingua refresh failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    after = _inodes(store_root)
    summary = json.loads(proc.stdout[proc.stdout.index("{\n"):])
    return seconds, sum(size for inode, size in after.items() if inode not in before), summary


if __name__ == "__main__":
    main()
