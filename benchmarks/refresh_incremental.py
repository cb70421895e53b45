"""Incremental refresh vs rebuilding from scratch: the Bible bitext-corpus after adding 5 % new pairs.

Usage::

    flock /work/heavy.lock python -m interlingua.benchmarks.refresh_incremental [--rounds 3] [--new-share 0.05]

The Bible en-es asset is split into 20 Parquet input files: 19 hold the first 95 % of the verse pairs
(the corpus as it was), the 20th the last 5 % (the new data). Setup: ``interlingua refresh`` builds
the first version from the 19 files. Then, interleaved B A B A over the rounds:

* **A, rebuild**: a fresh store, ``refresh`` over all 20 files (read, hygiene, tokenize, learn
  fast_align, align, word pairs for every pair);
* **B, incremental**: the store holding the first version, ``refresh`` after the 20th file appeared
  (only the new file is read, tokenized and aligned with the parent's parameters; the 19 inputs'
  shards are reused by hard link). The new version is removed after the round, so each B starts alike.

Wall time covers the whole ``refresh`` call (Ray already running, as in a long-lived scheduler).
Bytes written = sizes of the files (inodes) that appeared under the store during the run; hard links
to existing files count 0. Prints medians and each ratio's median and spread (min-max over rounds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--new-share", type=float, default=0.05, help="share of the pairs that arrive as new data")
    parser.add_argument("--files", type=int, default=19, help="input files the old data is split into")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    import pyarrow.parquet as pq

    from interlingua.core.runtime import assets_dir, init_ray
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.refresh import RefreshSpec

    bible = pq.read_table(assets_dir() / "bible" / "bible-en-es.parquet", columns=["id", "en", "es"])
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

    rebuild, incremental = [], []
    for round_number in range(1, args.rounds + 1):  # B then A in each round: interleaved, B A B A
        seconds, written, summary = _measure(spec(incremental_root), incremental_root)
        assert summary["mode"] == "incremental", summary
        incremental.append((seconds, written, summary["rows"]))
        store = CorpusStore(str(incremental_root))
        shutil.rmtree(incremental_root / "bible" / summary["version"])
        store._point_latest("bible", first["version"])
        print(f"round {round_number}: incremental {seconds:.1f} s {written:,} B ({summary['rows']} rows)", flush=True)

        rebuild_root = work / f"store-rebuild-{round_number}"
        seconds, written, summary = _measure(spec(rebuild_root), rebuild_root)
        rebuild.append((seconds, written, summary["rows"]))
        shutil.rmtree(rebuild_root)
        print(f"round {round_number}: rebuild {seconds:.1f} s {written:,} B ({summary['rows']} rows)", flush=True)

    time_ratios = [a[0] / b[0] for a, b in zip(rebuild, incremental)]
    byte_ratios = [a[1] / b[1] for a, b in zip(rebuild, incremental)]
    rows = rebuild[0][2]
    print()
    print(f"Bible en-es, {rows:,} pairs in the refreshed version; {new_rows:,} new ({args.new_share:.0%}); "
          f"{args.rounds} rounds, A B interleaved")
    print("| run | wall s (median) | bytes written (median) | time vs incremental | bytes vs incremental |")
    print("|---|---:|---:|---:|---:|")
    print(f"| rebuild from scratch | {statistics.median(r[0] for r in rebuild):.1f} | "
          f"{statistics.median(r[1] for r in rebuild):,.0f} | {statistics.median(time_ratios):.1f}× "
          f"({min(time_ratios):.1f}–{max(time_ratios):.1f}) | {statistics.median(byte_ratios):.1f}× "
          f"({min(byte_ratios):.1f}–{max(byte_ratios):.1f}) |")
    print(f"| incremental refresh | {statistics.median(r[0] for r in incremental):.1f} | "
          f"{statistics.median(r[1] for r in incremental):,.0f} | 1.0× | 1.0× |")
    share = statistics.median(r[1] for r in incremental) / statistics.median(r[1] for r in rebuild)
    print(f"incremental bytes / rebuild bytes = {share:.3f} (new data share {new_rows / rows:.3f})")


if __name__ == "__main__":
    main()
