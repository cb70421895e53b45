"""Building a training step's text views: the tokenizer's own call against :func:`batch_tokenize`.

Usage::

    python -m interlingua.benchmarks.tokenize_views [--tokenizer FOLDER] [--rows 1024] [--max-length 128]
        [--rounds 5] [--threads N]

Two figures per method, interleaved round by round (A B A B ...), medians with their min-max spread:
- **seconds per batch** of ``--rows`` texts, each longer than ``--max-length`` tokens (as ``engine_mfu`` makes
  them), tokenized alone;
- **main-thread speed while tokenizing**: a pure-Python loop's iterations per second on the main thread while a
  background thread tokenizes batch after batch, over the same loop alone. This is what the prefetch thread costs
  the thread that launches a step's kernels: the share of the GIL the tokenizing holds.

``--threads`` sets the Rust tokenizer's thread pool (``RAYON_NUM_THREADS``; default: the library's, one per core).
On a machine with few cores its threads also take CPU from the main thread; with ``--threads 1`` the loss of
speed is the GIL's alone. The tokenizer defaults to the e5-small asset's (XLM-R).
"""

from __future__ import annotations

import os
import random
import statistics
import threading
import time

from interlingua.benchmarks.arguments import BenchmarkParser, positive_int


def _spin(seconds: float) -> float:
    """Iterations per second of a pure-Python loop on this thread."""
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        count += 1
    return count / seconds


def main_thread_speed(tokenize, seconds: float) -> float:
    """The loop's speed while another thread calls ``tokenize`` again and again, over its speed alone."""
    alone = _spin(seconds / 2)
    stop = threading.Event()

    def work():
        while not stop.is_set():
            tokenize()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        beside = _spin(seconds)
    finally:
        stop.set()
        worker.join()
    return beside / alone


def main(argv: list[str] | None = None) -> dict:
    parser = BenchmarkParser(__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", help="tokenizer folder (default: the e5-small asset's)")
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--rounds", type=positive_int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per main-thread speed measurement")
    parser.add_argument("--threads", type=int, help="RAYON_NUM_THREADS for the Rust tokenizer")
    args = parser.parse_args(argv)
    if args.threads:
        os.environ["RAYON_NUM_THREADS"] = str(args.threads)  # read when the pool starts, on first use

    from transformers import AutoTokenizer

    from interlingua.benchmarks.engine_mfu import default_tokenizer, random_texts, vocabulary_words
    from interlingua.benchmarks.interleave import format_ratio, interleave, interleave_results
    from interlingua.models.batch_tokenize import batch_tokenize

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or default_tokenizer())
    words = vocabulary_words(tokenizer, 5000, seed=1)
    texts = random_texts(words, args.rows, args.max_length + 16, random.Random(0))
    runs = {
        "tokenizer call": lambda: tokenizer(texts, padding=True, truncation=True, max_length=args.max_length,
                                            return_tensors="pt"),
        "batch_tokenize": lambda: batch_tokenize(tokenizer, texts, args.max_length),
    }
    seconds = interleave(runs, args.rounds, warmup=True)
    speed = interleave_results({name: (lambda run=run: main_thread_speed(run, args.seconds))
                                for name, run in runs.items()}, args.rounds)
    base, ours = "tokenizer call", "batch_tokenize"
    print(f"\n{args.rows} texts, max_length {args.max_length}, {args.rounds} interleaved rounds, "
          f"Rust threads: {args.threads or 'default'}, {os.cpu_count()} cores")
    print("| method | s per batch | main-thread speed while tokenizing | GIL + CPU share taken |")
    print("|---|---:|---:|---:|")
    for name in runs:
        s, v = statistics.median(seconds[name]), statistics.median(speed[name])
        print(f"| {name} | {s:.3f} ({min(seconds[name]):.3f}-{max(seconds[name]):.3f}) | {v:.2f} "
              f"({min(speed[name]):.2f}-{max(speed[name]):.2f}) | {100 * (1 - v):.0f} % |")
    print(f"batch_tokenize vs the call, speed-up per batch: {format_ratio(seconds[base], seconds[ours])}; "
          f"share taken from the main thread: {100 * (1 - statistics.median(speed[base])):.0f} % -> "
          f"{100 * (1 - statistics.median(speed[ours])):.0f} %")
    return {"seconds": seconds, "main_thread_speed": speed}


if __name__ == "__main__":
    main()
