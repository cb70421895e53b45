"""Sentences/s of translation on one tiny random Marian model, printed as a table.

Rows: (1) plain transformers ``generate`` in a loop over fixed batches; (2) the translate operator's
Marian backend (length-sorted batches); (3) the CTranslate2 int8 backend, one batch at a time and
with as many batches in flight as the machine has cores (``inter_threads``, one thread each); (4)/(5)
the translate operator on Ray Data with 1 and 2 workers (CTranslate2 int8, one CPU and one batch in
flight per worker) over ``--ray-sentences`` sentences, on a fresh actor pool per run (``actor pool``, the
default) and on reused warm worker processes that keep their translator (``warm workers``,
``run_operator(..., warm_workers=True)``: what a workflow's later shards and stages get in the same Ray
session); the four Ray runs interleaved over ``--rounds`` rounds (``benchmarks/interleave.py``):
sentences/s over the whole run (start-up included) and in the steady state (from the first output batch
on), ratios as medians of per-round ratios with their min-max spread. Greedy decoding everywhere; the
table also reports whether each row's outputs equal the plain loop's (int8 may differ a little).

    python -m interlingua.benchmarks.translate_throughput --sentences 512 --d-model 256
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, positive_int

WORDS = "a man woman child dog is playing reading running in the park on beach with old young book guitar".split()


def make_sentences(count: int, seed: int = 0) -> list[str]:
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 20))) for _ in range(count)]


def plain_loop(folder: str, sentences: list[str], batch_size: int, max_length: int) -> list[str]:
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(folder)
    model = MarianMTModel.from_pretrained(folder).eval()
    out: list[str] = []
    for start in range(0, len(sentences), batch_size):
        encoded = tokenizer(sentences[start : start + batch_size], return_tensors="pt", padding=True)
        with torch.inference_mode():
            ids = model.generate(**encoded, num_beams=1, do_sample=False, max_length=max_length)
        out.extend(tokenizer.batch_decode(ids, skip_special_tokens=True))
    return out


def timed(fn) -> tuple[list[str], float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def ray_operator(spec: dict, sentences: list[str], actors: int, warm: bool = False) -> tuple[list[str], float, float, int]:
    """Translate through the operator on ``actors`` workers (``warm``: reused warm worker processes): (outputs,
    wall s, steady-state s, rows after the first output batch)."""
    import ray.data

    from interlingua.operators.runner import run_operator
    from interlingua.operators.translate.operator import TranslateOperator

    start = time.perf_counter()
    ds = ray.data.from_items([{"i": i, "text": s} for i, s in enumerate(sentences)], override_num_blocks=actors * 8)
    out = run_operator(ds, TranslateOperator, {"pair": "en-es", "spec": spec}, concurrency=actors,
                       batch_size=64, num_gpus=0, warm_workers=warm)
    translations: list[str] = [""] * len(sentences)
    first_at, after_first = None, 0
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        if first_at is None:
            first_at = time.perf_counter()
        else:
            after_first += len(batch["i"])
        for i, text in zip(batch["i"], batch["translation"]):
            translations[int(i)] = str(text)
    end = time.perf_counter()
    return translations, end - start, end - first_at, after_first


def interleaved_ray_runs(spec: dict, many: list[str], expected: list[str], rounds: int):
    """Actor pool / warm workers × 1 / 2 workers, interleaved: per-round wall seconds, steady sentences/s, and the
    share of outputs equal to the plain loop's (worst round)."""
    from interlingua.benchmarks.interleave import interleave

    steady: dict[str, list[float]] = {}
    same: dict[str, float] = {}
    runs = {}
    for warm in (False, True):
        for actors in (1, 2):
            name = f"{'warm workers' if warm else 'actor pool'}, {actors} worker{'s' * (actors > 1)}"

            def run(name=name, warm=warm, actors=actors):
                outputs, _, steady_s, steady_rows = ray_operator(spec, many, actors, warm)
                steady.setdefault(name, []).append(steady_rows / steady_s)
                equal = sum(a == b for a, b in zip(outputs, expected)) / len(expected)
                same[name] = min(same.get(name, 1.0), equal)

            runs[name] = run
    return interleave(runs, rounds, progress=lambda line: print(line, flush=True)), steady, same


def print_ray_table(seconds: dict[str, list[float]], steady: dict[str, list[float]], same: dict[str, float],
                    sentences: int) -> None:
    import statistics

    from interlingua.benchmarks.interleave import format_ratio

    names = list(seconds)
    print(f"{'run':<26} {'wall s':>7} {'sent/s':>8} {'steady sent/s':>14} {'same as loop':>13}")
    for name in names:
        wall = statistics.median(seconds[name])
        print(f"{name:<26} {wall:>7.1f} {sentences / wall:>8.1f} {statistics.median(steady[name]):>14.1f} "
              f"{same[name]:>12.1%}")
    print()
    for one, two in ((names[0], names[1]), (names[2], names[3])):
        mode = one.split(",")[0]
        print(f"{mode}: 2 workers / 1 worker: {format_ratio(seconds[one], seconds[two])} wall (start-up included), "
              f"{format_ratio([1 / r for r in steady[one]], [1 / r for r in steady[two]])} steady state")
    for cold, warm in ((names[0], names[2]), (names[1], names[3])):
        print(f"warm workers vs actor pool, {cold.split(', ')[-1]}: {format_ratio(seconds[cold], seconds[warm])} wall")


def main(argv: list[str] | None = None) -> int:
    parser = BenchmarkParser(__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=48)
    parser.add_argument("--ray-sentences", type=int, default=8192, help="sentences for the Ray rows")
    parser.add_argument("--skip-ray", action="store_true", help="only the in-process rows")
    parser.add_argument("--rounds", type=positive_int, default=3, help="interleaved rounds of the Ray runs (default 3)")
    args = parser.parse_args(argv)

    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator, convert_marian
    from interlingua.operators.translate.marian_backend import MarianTranslator
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    sentences = make_sentences(args.sentences)
    work = Path(tempfile.mkdtemp(prefix="translate-bench-"))
    folder = str(build_tiny_marian(work / "marian", d_model=args.d_model, layers=args.layers,
                                   heads=4, ffn_dim=4 * args.d_model))
    ct2_folder = str(convert_marian(folder, work / "ct2"))
    common = {"beam_size": 1, "max_length": args.max_length, "batch_size": args.batch_size, "device": "cpu"}
    rows: list[tuple[str, list[str], float]] = []
    reference, seconds = timed(lambda: plain_loop(folder, sentences, args.batch_size, args.max_length))
    rows.append(("transformers generate, plain loop", reference, seconds))
    marian = MarianTranslator(BackendSpec(backend="marian", **common), folder)
    rows.append(("operator backend: marian", *timed(lambda: marian.translate(sentences))))
    ct2 = CTranslate2Translator(BackendSpec(backend="ctranslate2", precision="int8", **common), ct2_folder)
    rows.append(("operator backend: ctranslate2 int8", *timed(lambda: ct2.translate(sentences))))
    cores = os.cpu_count() or 1
    ct2_parallel = CTranslate2Translator(BackendSpec(backend="ctranslate2", precision="int8", inter_threads=cores,
                                                     **common), ct2_folder)
    rows.append((f"  ... {cores} batches in flight", *timed(lambda: ct2_parallel.translate(sentences))))
    base = len(sentences) / rows[0][2]
    print(f"{'method':<44} {'sent/s':>9} {'speed-up':>9} {'same as loop':>13}")
    for name, outputs, secs in rows:
        rate = len(sentences) / secs
        same = sum(a == b for a, b in zip(outputs, reference)) / len(reference)
        print(f"{name:<44} {rate:>9.1f} {rate / base:>8.2f}x {same:>12.1%}")
    if args.skip_ray:
        return 0
    from interlingua.core.runtime import init_ray

    init_ray()
    spec = {"backend": "ctranslate2", "model": ct2_folder, "precision": "int8", **common}
    many = (sentences * (args.ray_sentences // len(sentences) + 1))[: args.ray_sentences]
    expected = (reference * (args.ray_sentences // len(sentences) + 1))[: args.ray_sentences]
    for warm in (False, True):  # warm-up (imports, file caches; the warm workers' processes and translators)
        ray_operator(spec, many[:256], 2, warm)
    print(f"\nRay operator, ctranslate2 int8, {len(many)} sentences (1 CPU per worker), {args.rounds} interleaved rounds")
    print_ray_table(*interleaved_ray_runs(spec, many, expected, args.rounds), len(many))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
