"""Sentences/s of translation on one tiny random Marian model, printed as a table.

Rows: (1) plain transformers ``generate`` in a loop over fixed batches; (2) the translate operator's
Marian backend (length-sorted batches); (3) the CTranslate2 int8 backend, one batch at a time and
with as many batches in flight as the machine has cores (``inter_threads``, one thread each); (4)/(5)
the translate operator on Ray Data with 1 and 2 actors (CTranslate2 int8, one CPU and one batch in
flight per actor) over ``--ray-sentences`` sentences: sentences/s over the whole run (actor start-up
included) and in the steady state (from the first output batch on). Greedy decoding everywhere; the
table also reports whether each row's outputs equal the plain loop's (int8 may differ a little).

    python -m interlingua.benchmarks.translate_throughput --sentences 512 --d-model 256
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

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


def ray_operator(spec: dict, sentences: list[str], actors: int) -> tuple[list[str], float, float, int]:
    """Translate through the operator on ``actors`` actors: (outputs, wall s, steady-state s, rows after
    the first output batch)."""
    import ray.data

    from interlingua.operators.runner import run_operator
    from interlingua.operators.translate.operator import TranslateOperator

    start = time.perf_counter()
    ds = ray.data.from_items([{"i": i, "text": s} for i, s in enumerate(sentences)], override_num_blocks=actors * 8)
    out = run_operator(ds, TranslateOperator, {"pair": "en-es", "spec": spec}, concurrency=actors,
                       batch_size=64, num_gpus=0)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=48)
    parser.add_argument("--ray-sentences", type=int, default=8192, help="sentences for the Ray rows")
    parser.add_argument("--skip-ray", action="store_true", help="only the in-process rows")
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
    ray_operator(spec, many[:256], 1)  # warm-up (imports, file caches)
    print(f"\nRay operator, ctranslate2 int8, {len(many)} sentences (1 CPU per actor)")
    print(f"{'actors':>6} {'wall s':>7} {'sent/s':>8} {'vs 1':>6} {'steady sent/s':>14} {'vs 1':>6} {'same as loop':>13}")
    first = None
    for actors in (1, 2):
        outputs, wall, steady_s, steady_rows = ray_operator(spec, many, actors)
        rate, steady = len(many) / wall, steady_rows / steady_s
        first = first or (rate, steady)
        same = sum(a == b for a, b in zip(outputs, expected)) / len(expected)
        print(f"{actors:>6} {wall:>7.1f} {rate:>8.1f} {rate / first[0]:>5.2f}x {steady:>14.1f} {steady / first[1]:>5.2f}x "
              f"{same:>12.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
