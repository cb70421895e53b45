"""GPU busy share while the embed and translate operators stream a Ray dataset.

Usage::

    python -m interlingua.benchmarks.gpu_busy [--tokenizer FOLDER] [--texts FILE] [--embed-rows 16000]
        [--translate-rows 1536] [--json OUT.json]

Each variant maps one operator (:class:`~interlingua.operators.embed.Embed` or
:class:`~interlingua.operators.translate.operator.TranslateOperator`) over a Ray dataset of real English text
through :func:`~interlingua.operators.runner.run_operator`, as the workflows do, on a local Ray with the machine's
GPU, and iterates the output as a consumer would. A thread reads NVML's GPU utilization (the share of time in
which at least one kernel ran, over the driver's sampling period) every 50 ms. The busy share is the mean of
those readings over two windows: *streaming* (from the first output batch to the last: the actors are up) and
*wall* (from the dataset's start, actor start-up and model loading included).

Models have random weights (nothing is downloaded): the embedder is a base-size XLM-R (e5-base's shape) over
``--tokenizer``'s vocabulary (default: the e5-small asset's), saved as a sentence-transformers folder; the
translator is a Marian of OPUS-MT's shape (6+6 layers, width 512, FFN 2048) with a small SentencePiece vocabulary,
whose generation config suppresses end-of-sentence before ``--translate-max-length`` tokens, so every translation
decodes the same amount.
Texts: ``--texts`` (one per line), by default the English Wikipedia lead paragraphs the offline pack ships.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser

#: (label, pool size (None: the operator's defaults), operator kwargs beyond the model)
EMBED_VARIANTS = [
    ("embed, 1 actor, encode batch 32 (the defaults before)", 1, {"encode_batch_size": 32}),
    ("embed, defaults (GPU: 2 actors, encode batch 128)", None, {}),
    ("embed, 4 actors, encode batch 128", 4, {"encode_batch_size": 128}),
]
TRANSLATE_VARIANTS = [
    ("translate, 1 actor, batch 32, beam 4, bf16", 1, {"batch_size": 32, "beam_size": 4}),
    ("translate, 2 actors, batch 32, beam 4, bf16", 2, {"batch_size": 32, "beam_size": 4}),
    ("translate, 4 actors, batch 64, beam 4, bf16", 4, {"batch_size": 64, "beam_size": 4}),
]


class UtilizationSampler(threading.Thread):
    """Reads NVML's GPU utilization (percent) of device 0 every ``interval`` seconds until stopped."""

    def __init__(self, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        import pynvml

        pynvml.nvmlInit()
        self._nvml = pynvml
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            rates = self._nvml.nvmlDeviceGetUtilizationRates(self._handle)
            self.samples.append((time.perf_counter(), float(rates.gpu)))
            time.sleep(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


def busy_share(samples: list[tuple[float, float]], start: float, end: float) -> float:
    """Mean utilization (0–1) of the samples taken in [start, end]; NaN when there are none."""
    inside = [value for t, value in samples if start <= t <= end]
    return statistics.fmean(inside) / 100 if inside else float("nan")


def english_texts(path: str | None, limit: int) -> list[str]:
    """``limit`` texts: the lines of ``path``, or the offline pack's English Wikipedia leads, repeated as needed."""
    if path:
        texts = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        from interlingua.evaluation.pack.wiki_offline import load_wiki_articles

        texts = [article.lead for article in load_wiki_articles("en") if article.lead.strip()]
    if not texts:
        raise ValueError("no texts to stream")
    return [texts[i % len(texts)] for i in range(limit)]


def build_embedder(folder: Path, tokenizer_dir: str, max_length: int) -> str:
    from interlingua.benchmarks.engine_mfu import build_encoder

    encoder = build_encoder(tokenizer_dir, 12, 768, 12, 3072, max_length, "cpu")
    encoder.save(folder)
    return str(folder)


def build_translator(folder: Path, length: int) -> str:
    """A random Marian of OPUS-MT's shape whose generation config makes every translation ``length`` tokens
    (end-of-sentence is suppressed before that), so each run decodes the same amount."""
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    build_tiny_marian(folder, d_model=512, layers=6, heads=8, ffn_dim=2048, spm_vocab_size=400)
    config_path = folder / "generation_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.update(min_length=length, max_length=length)
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return str(folder)


def stream(sampler: UtilizationSampler | None, op_cls, op_kwargs: dict, texts: list[str], actors: int | None,
           ray_batch: int) -> dict:
    """Map ``op_cls`` over ``texts`` with ``actors`` actors sharing the GPU (None: the operator's own defaults);
    times and busy shares."""
    import ray

    from interlingua.operators.base import REJECT_REASON
    from interlingua.operators.runner import run_operator

    dataset = ray.data.from_items([{"text": t} for t in texts], override_num_blocks=max(8, 4 * (actors or 2)))
    started = time.perf_counter()
    output = run_operator(dataset, op_cls, op_kwargs, concurrency=actors, num_gpus=1 / actors if actors else None,
                          batch_size=ray_batch)
    first, rows, rejected, arrivals, chars = None, 0, 0, [], 0
    for batch in output.iter_batches(batch_size=None, batch_format="numpy"):
        first = first or time.perf_counter()
        arrivals.append(round(time.perf_counter() - started, 2))
        rows += len(batch["text"])
        rejected += int(sum(bool(r) for r in batch.get(REJECT_REASON, [])))
        chars += sum(len(str(t)) for t in batch.get("translation", []))
    ended = time.perf_counter()
    result = {"rows": rows, "rejected": rejected, "wall_s": ended - started, "stream_s": ended - (first or ended),
              "output_batches_at_s": arrivals[:3] + arrivals[-2:], "translation_chars_mean": chars / max(rows, 1)}
    if sampler is not None:
        result["busy_stream"] = busy_share(sampler.samples, first or ended, ended)
        result["busy_wall"] = busy_share(sampler.samples, started, ended)
    return result


def main(argv: list[str] | None = None) -> list[dict]:
    parser = BenchmarkParser(__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", help="folder of an XLM-R tokenizer (default: the e5-small asset's)")
    parser.add_argument("--texts", help="one text per line (default: the offline pack's English Wikipedia leads)")
    parser.add_argument("--embed-rows", type=int, default=16000)
    parser.add_argument("--translate-rows", type=int, default=1536)
    parser.add_argument("--max-length", type=int, default=128, help="embedder truncation (tokens)")
    parser.add_argument("--translate-max-length", type=int, default=64, help="generated tokens per translation")
    parser.add_argument("--ray-batch", type=int, default=256, help="rows per Ray batch (the operators' default)")
    parser.add_argument("--only", choices=("embed", "translate"), help="run one operator's variants")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    if not args.tokenizer:
        from interlingua.benchmarks.engine_mfu import default_tokenizer

        args.tokenizer = default_tokenizer()

    import ray
    import torch

    from interlingua.operators.embed import Embed
    from interlingua.operators.translate.operator import TranslateOperator

    use_gpu = torch.cuda.is_available()
    root = Path(tempfile.mkdtemp(prefix="gpu-busy-"))
    print("building the random base-size embedder and OPUS-MT-size translator ...", flush=True)
    embedder = build_embedder(root / "embedder", args.tokenizer, args.max_length)
    translator = build_translator(root / "translator", args.translate_max_length)
    texts = english_texts(args.texts, max(args.embed_rows, args.translate_rows))
    ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # no per-dataset execution lines
    sampler = UtilizationSampler() if use_gpu else None
    if sampler:
        sampler.start()
    spec = {"backend": "marian", "model": translator, "device": "cuda" if use_gpu else "cpu",
            "precision": "bfloat16" if use_gpu else "float32", "max_length": args.translate_max_length}
    plans = []
    if args.only in (None, "embed"):
        plans += [(label, Embed, {"model": embedder, **kw}, actors, texts[:args.embed_rows])
                  for label, actors, kw in EMBED_VARIANTS]
    if args.only in (None, "translate"):
        plans += [(label, TranslateOperator, {"pair": "en-es", "spec": {**spec, **kw}}, actors,
                   texts[:args.translate_rows]) for label, actors, kw in TRANSLATE_VARIANTS]
    results = []
    try:
        for label, op_cls, kwargs, actors, rows in plans:
            result = {"variant": label, "actors": actors, **stream(sampler, op_cls, kwargs, rows, actors, args.ray_batch)}
            results.append(result)
            print(f"{label}: {json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items() if k != 'variant'})}",
                  flush=True)
    finally:
        if sampler:
            sampler.stop()
        ray.shutdown()
        shutil.rmtree(root, ignore_errors=True)  # the models (1.1 GB for the embedder)
    device = torch.cuda.get_device_name(0) if use_gpu else "CPU (no GPU: busy share not measured)"
    print(f"\nGPU busy share while operators stream a Ray dataset, {device}; random-weight models "
          f"(embedder XLM-R 12x768 fp32, max_length {args.max_length}; translator Marian 6+6x512, "
          f"{args.translate_max_length} tokens out)")
    print("| variant | rows | rows/s (streaming) | busy, streaming | wall s | busy, wall (start-up included) |")
    print("|---|---:|---:|---:|---:|---:|")
    pct = lambda v: "-" if v is None else f"{100 * v:.0f} %"  # noqa: E731
    for r in results:
        print(f"| {r['variant']} | {r['rows']} | {r['rows'] / max(r['stream_s'], 1e-9):.0f} | "
              f"{pct(r.get('busy_stream'))} | {r['wall_s']:.1f} | {pct(r.get('busy_wall'))} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
