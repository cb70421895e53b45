"""Sentences/s of translation on one tiny random Marian model, printed as a table.

Rows: (1) plain transformers ``generate`` in a loop over fixed batches; (2) the translate operator's
Marian backend (length-sorted batches); (3) the CTranslate2 int8 backend; (4)/(5) the translate
operator on Ray Data with 1 and 2 actors (CTranslate2 int8). Greedy decoding everywhere; the table
also reports whether each row's outputs equal the plain loop's (int8 is expected to differ a little).

    python -m interlingua.benchmarks.translate_throughput --sentences 512 --d-model 256
"""

from __future__ import annotations

import argparse
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


def ray_operator(spec: dict, sentences: list[str], actors: int) -> list[str]:
    import ray.data

    from interlingua.operators.runner import run_operator
    from interlingua.operators.translate.operator import TranslateOperator

    ds = ray.data.from_items([{"i": i, "text": s} for i, s in enumerate(sentences)], override_num_blocks=actors * 4)
    rows = run_operator(ds, TranslateOperator, {"pair": "en-es", "spec": spec}, concurrency=actors,
                        batch_size=64, num_gpus=0).take_all()
    return [r["translation"] for r in sorted(rows, key=lambda r: r["i"])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=48)
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
    if not args.skip_ray:
        from interlingua.workflows.runtime import init_ray

        init_ray()
        spec = {"backend": "ctranslate2", "model": ct2_folder, "precision": "int8", **common}
        ray_operator(spec, sentences[:64], 1)  # warm-up: actor start-up is not throughput
        for actors in (1, 2):
            rows.append((f"Ray operator, ctranslate2 int8, {actors} actor(s)",
                         *timed(lambda a=actors: ray_operator(spec, sentences, a))))
    base = len(sentences) / rows[0][2]
    print(f"{'method':<44} {'sent/s':>9} {'speed-up':>9} {'same as loop':>13}")
    for name, outputs, secs in rows:
        rate = len(sentences) / secs
        same = sum(a == b for a, b in zip(outputs, reference)) / len(reference)
        print(f"{name:<44} {rate:>9.1f} {rate / base:>8.2f}x {same:>12.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
