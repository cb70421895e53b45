"""Wikipedia extraction throughput: a plain mwparserfromhell loop vs our extractor (in-process, Ray 1 and 2 workers).

Usage::

    python -m interlingua.benchmarks.wiki_extract_throughput [--dump URL] [--repeat N] [--scale-check]

The dump (default: gensim's shortened English dump) is re-packed as a multistream bz2 with its pages repeated
``--repeat`` times (fresh page ids), so the Ray modes have shards to spread. Every mode reads the same pages:

- ``mwparserfromhell``: one process; per article ``parse``, ``filter_wikilinks``, ``strip_code``, then the same
  sentence splitter (so sentence counts are comparable);
- ``extractor (in-process)``: :func:`shard_extract.extract_shard` over the shards, one process;
- ``extractor (Ray, N workers)``: the :class:`ExtractShards` operator through ``run_operator``, on a fresh actor
  pool per run (``actor pool``, the default) and on reused warm worker processes (``warm workers``,
  ``run_operator(..., warm_workers=True)``: the processes of an earlier run in the same Ray session, as a
  workflow's later shards and stages get them); the four Ray runs are interleaved over ``--rounds`` rounds
  (``benchmarks/interleave.py``). Besides the wall time (start-up included), the steady-state pages/s (from the
  first output batch on, without the start-up of the actors and of Ray's worker processes, which on 2 cores
  takes CPU from the workers). Ratios are medians of per-round ratios with their min-max spread.

Pages/s counts articles (main namespace, not redirects). Peak memory is the largest resident set of the process
tree (driver + Ray workers + Ray's own daemons) sampled every 50 ms; the Ray runtime's idle baseline is printed
separately. Every mode is warmed up on one shard first (imports, Ray worker start). Ray workers get a bytecode
cache in the temp folder: with ``PYTHONDONTWRITEBYTECODE`` set (as in this project's shells) every fresh worker
would otherwise recompile pyarrow/pandas/ray on start. ``--scale-check`` also reports the in-process extractor's
peak memory on dumps 1× and 4× as large (streaming: it should not grow).
"""

from __future__ import annotations

import importlib.util
import re
import tempfile
import threading
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, existing_file, positive_int

GENSIM_ENWIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


class PeakMemory:
    """Samples the resident set of this process and its descendants; ``peak_mib`` after ``stop``."""

    def __init__(self, interval: float = 0.05) -> None:
        import psutil

        self._process = psutil.Process()
        self._interval = interval
        self._stop = threading.Event()
        self.peak = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree_rss(self) -> int:
        total = 0
        for proc in [self._process, *self._process.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except Exception:  # noqa: BLE001 - a worker may exit between listing and reading
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._tree_rss())
            time.sleep(self._interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return self.peak / 2**20


def repeated_dump(source: str, folder: Path, repeat: int, pages_per_stream: int) -> tuple[str, str]:
    """A multistream dump holding ``source``'s pages ``repeat`` times (page ids offset per copy)."""
    import bz2

    from interlingua.operators.wiki.multistream_writer import write_multistream

    text = bz2.open(source).read().decode("utf-8")
    head, _, rest = text.partition("<page>")
    body, _, tail = ("<page>" + rest).rpartition("</page>")
    body += "</page>"
    copies = [
        body if i == 0 else re.sub(r"<id>(\d+)</id>", lambda m, i=i: f"<id>{int(m.group(1)) + i * 10**8}</id>", body)
        for i in range(repeat)
    ]
    plain = folder / f"plain-x{repeat}.xml"
    plain.write_text(head + "\n".join(copies) + tail, encoding="utf-8")
    dump, index = folder / f"ms-x{repeat}.xml.bz2", folder / f"ms-x{repeat}-index.txt"
    write_multistream(str(plain), str(dump), str(index), pages_per_stream=pages_per_stream)
    plain.unlink()
    return str(dump), str(index)


def bench_mwparserfromhell(shards) -> tuple[int, int]:
    import mwparserfromhell
    from interlingua.operators.wiki.dump_pages import PageStreamResult, iter_pages
    from interlingua.operators.wiki.dump_shards import iter_shard_bytes
    from interlingua.operators.wiki.sentence_split import split_sentences

    pages = sentences = 0
    for shard in shards:
        for page in iter_pages(iter_shard_bytes(shard), PageStreamResult()):
            if page.namespace != 0 or page.redirect is not None:
                continue
            code = mwparserfromhell.parse(page.text)
            _links = [(str(link.title), link.text) for link in code.filter_wikilinks()]
            for paragraph in code.strip_code().split("\n"):
                sentences += len(split_sentences(paragraph, shard.lang))
            pages += 1
    return pages, sentences


def bench_extractor(shards, work: str) -> tuple[int, int]:
    from interlingua.operators.wiki.page_extract import ExtractionSettings
    from interlingua.operators.wiki.shard_extract import extract_shard

    reports = [extract_shard(shard, ExtractionSettings(), work) for shard in shards]
    return sum(r["counters"].get("articles", 0) for r in reports), sum(
        r["counters"].get("sentences", 0) for r in reports
    )


def bench_ray(shards, work: str, workers: int, warm: bool = False) -> tuple[int, int, float]:
    """Pages and sentences extracted, and the steady-state pages/s: pages reported after the first output
    batch over the time since it (actor start-up and Ray's worker-process start-up excluded)."""
    import json

    import ray.data
    from interlingua.operators.runner import run_operator
    from interlingua.operators.wiki.extract_operator import ExtractShards, shards_to_rows

    ds = ray.data.from_items(shards_to_rows(shards), override_num_blocks=len(shards))
    out = run_operator(ds, ExtractShards, {"work_url": work}, concurrency=workers, warm_workers=warm)
    pages = sentences = pages_after_first = 0
    first_at = None
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        counters = [json.loads(report)["counters"] for report in batch["report"]]
        batch_pages = sum(c.get("articles", 0) for c in counters)
        pages += batch_pages
        sentences += sum(c.get("sentences", 0) for c in counters)
        if first_at is None:
            first_at = time.perf_counter()
        else:
            pages_after_first += batch_pages
    steady = pages_after_first / max(time.perf_counter() - first_at, 1e-9) if first_at else float("nan")
    return pages, sentences, steady


def timed(label: str, fn, *args) -> dict:
    with PeakMemory() as memory:
        start = time.perf_counter()
        pages, sentences, *steady = fn(*args)
        seconds = time.perf_counter() - start
    return {
        "steady_pages_s": steady[0] if steady else None,
        "mode": label,
        "pages": pages,
        "sentences": sentences,
        "seconds": seconds,
        "pages_s": pages / seconds,
        "sentences_s": sentences / seconds,
        "peak_mib": memory.peak_mib,
    }


def print_table(rows: list[dict]) -> None:
    base = rows[0]["pages_s"]
    print(f"| {'mode':<40} | pages | sentences | seconds | pages/s | sentences/s | × mwparser | steady pages/s | peak MiB |")
    print(f"|{'-' * 42}|------:|----------:|--------:|--------:|------------:|-----------:|---------------:|---------:|")
    for r in rows:
        steady = f"{r['steady_pages_s']:.1f}" if r.get("steady_pages_s") is not None else "-"
        print(
            f"| {r['mode']:<40} | {r['pages']:>5} | {r['sentences']:>9} | {r['seconds']:>7.1f} | {r['pages_s']:>7.1f} "
            f"| {r['sentences_s']:>11.0f} | {r['pages_s'] / base:>10.2f} | {steady:>14} | {r['peak_mib']:>8.0f} |"
        )


def interleaved_ray_rows(shards, folder: str, rounds: int) -> tuple[list[dict], dict[str, list[float]], dict[str, list[float]]]:
    """The four Ray runs (actor pool / warm workers × 1 / 2 workers) interleaved over ``rounds``: one table row
    each (medians; peak memory: the largest over rounds), and per-round seconds and steady pages/s."""
    import statistics

    from interlingua.benchmarks.interleave import interleave

    runs, steady, peaks, counts = {}, {}, {}, {}
    calls = iter(range(10**9))
    for warm in (False, True):
        for workers in (1, 2):
            name = f"extractor (Ray, {'warm workers' if warm else 'actor pool'}, {workers} worker{'s' * (workers > 1)})"

            def run(name=name, warm=warm, workers=workers):
                with PeakMemory() as memory:  # a fresh work folder per call: extraction resumes from _SUCCESS files
                    pages, sentences, rate = bench_ray(shards, f"{folder}/work-{next(calls)}", workers, warm)
                steady.setdefault(name, []).append(rate)
                peaks.setdefault(name, []).append(memory.peak_mib)
                counts[name] = (pages, sentences)

            runs[name] = run
    seconds = interleave(runs, rounds, progress=lambda line: print(line, flush=True))
    rows = []
    for name in runs:
        wall = statistics.median(seconds[name])
        pages, sentences = counts[name]
        rows.append({"mode": name, "pages": pages, "sentences": sentences, "seconds": wall, "pages_s": pages / wall,
                     "sentences_s": sentences / wall, "steady_pages_s": statistics.median(steady[name]),
                     "peak_mib": max(peaks[name])})
    return rows, seconds, steady


def print_ratios(seconds: dict[str, list[float]], steady: dict[str, list[float]]) -> None:
    """2 vs 1 workers (wall and steady state) per mode, and warm workers vs actor pool, per-round medians."""
    from interlingua.benchmarks.interleave import format_ratio

    names = list(seconds)
    print()
    for one, two in ((names[0], names[1]), (names[2], names[3])):
        mode = "warm workers" if "warm" in one else "actor pool"
        print(f"{mode}: 2 workers / 1 worker: {format_ratio(seconds[one], seconds[two])} wall (start-up included), "
              f"{format_ratio([1 / r for r in steady[one]], [1 / r for r in steady[two]])} steady state")
    for cold, warm in ((names[0], names[2]), (names[1], names[3])):
        print(f"warm workers vs actor pool, {cold.split(', ')[-1][:-1]}: {format_ratio(seconds[cold], seconds[warm])} wall")


def main(argv: list[str] | None = None) -> int:
    parser = BenchmarkParser(__doc__.splitlines()[0])
    parser.add_argument("--dump", type=existing_file, help="a UTF-8 pages-articles dump (default: gensim's enwiki excerpt)")
    parser.add_argument("--repeat", type=positive_int, default=4, help="copies of the dump's pages (default 4)")
    parser.add_argument("--pages-per-stream", type=int, default=10)
    parser.add_argument("--shard-bytes", type=int, default=200_000)
    parser.add_argument("--scale-check", action="store_true", help="peak memory of the extractor at 1× and 4× size")
    parser.add_argument("--rounds", type=positive_int, default=3, help="interleaved rounds of the Ray runs (default 3)")
    args = parser.parse_args(argv)
    from interlingua.operators.wiki.dump_shards import plan_shards

    source = args.dump or str(
        Path(importlib.util.find_spec("gensim").origin).parent / "test" / "test_data" / GENSIM_ENWIKI
    )
    with tempfile.TemporaryDirectory(prefix="wiki-bench-") as folder:
        if args.scale_check:  # first, so earlier modes do not raise the baseline
            for repeat in (1, 4):
                big, big_index = repeated_dump(source, Path(folder), repeat, args.pages_per_stream)
                one_shard = plan_shards(big, "en", big_index, 10**12)
                row = timed(f"extractor x{repeat}", bench_extractor, one_shard, f"{folder}/scale-{repeat}")
                print(
                    f"memory check, dump ×{repeat} as one shard: {row['pages']} pages, peak {row['peak_mib']:.0f} MiB"
                )
        dump, index = repeated_dump(source, Path(folder), args.repeat, args.pages_per_stream)
        shards = plan_shards(dump, "en", index, args.shard_bytes)
        print(f"dump: {source} ×{args.repeat} → {len(shards)} shards")
        bench_mwparserfromhell(shards[:1])
        bench_extractor(shards[:1], f"{folder}/warmup-a")
        rows = [
            timed("mwparserfromhell loop", bench_mwparserfromhell, shards),
            timed("extractor (in-process)", bench_extractor, shards, f"{folder}/work-a"),
        ]
        import ray

        cache = {"PYTHONPYCACHEPREFIX": f"{folder}/pycache", "PYTHONDONTWRITEBYTECODE": ""}
        ray.init(
            address="local",
            num_cpus=2,
            object_store_memory=200 * 1024**2,
            include_dashboard=False,
            runtime_env={"env_vars": cache},
        )
        try:
            for warm in (False, True):
                for workers in (1, 2):
                    bench_ray(shards[:workers], f"{folder}/warmup-{warm}-{workers}", workers, warm)
            with PeakMemory() as idle:
                time.sleep(1.0)
            print(f"Ray runtime idle baseline (driver + daemons): {idle.peak_mib:.0f} MiB")
            ray_rows, seconds, steady = interleaved_ray_rows(shards, folder, args.rounds)
            rows += ray_rows
        finally:
            ray.shutdown()
        print_table(rows)
        print_ratios(seconds, steady)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
