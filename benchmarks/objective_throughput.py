"""Tokens per second of each objective's training step on the engine, relative to translation ranking.

Usage::

    python -m interlingua.benchmarks.objective_throughput [--rounds 3] [--steps 6] [--batch 16]
        [--pairs 256] [--hidden 128] [--layers 2] [--max-length 48] [--quick] [--bible PATH]

One run, one local Ray: the same small encoder (a random BERT, ``--hidden``/``--layers``, with a WordPiece
vocabulary learned on the Bible asset's verses), the same verse pairs, 2 workers (DeepSpeed ZeRO 0, CPU/gloo,
1 thread each), the same batch. Each objective trains ``--steps`` steps with :func:`fit`; its tokens/s is the
median of the engine's per-step ``tokens_per_s`` metric (real tokens the encoder read in the step, all views,
both workers) over the steps after the first two (warm-up). Rounds are interleaved — every round runs every
objective, in a rotated order — and each round's value is divided by translation ranking's in the same round;
the table gives the median ratio over rounds and its spread (min–max), and the median tokens/s. The rounds run
through :func:`interlingua.benchmarks.interleave.interleave_results`; a failed run is a NaN gap (its line
printed), and a SIGTERM reports the complete rounds — under ``timeout --foreground`` (a plain ``timeout``
signals the whole process group, local Ray included, which then takes the driver down with it).

The data are real Bible verse pairs; the columns other objectives need are derived from them: ``text`` = the
English verse (SimCSE), ``contradiction`` and ``neg`` = the next pair's Spanish verse, EASE entity ids drawn from 64
random entity vectors, and explicit-alignment word pairs from whitespace tokens linked monotonically (word i
with word ⌊i·m/n⌋; the throughput does not depend on alignment quality). ``amr_retrofit`` is the
``simcse_sup`` step on other columns and is not repeated.
"""

from __future__ import annotations

import functools
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

from interlingua.benchmarks.arguments import BenchmarkParser, add_bible_argument, int_at_least, positive_int
from interlingua.benchmarks.interleave import interleave_results, ratio

#: (label, TrainConfig keys) — the baseline first.
VARIANTS = [
    ("translation_ranking", {"objective": "translation_ranking"}),
    ("translation_ranking + hard negatives", {"objective": "translation_ranking", "hard_negatives": True}),
    ("simcse_unsup", {"objective": "simcse_unsup"}),
    ("simcse_sup", {"objective": "simcse_sup"}),
    ("ease", {"objective": "ease"}),
    ("explicit_alignment linear", {"objective": "explicit_alignment", "method": "linear"}),
    ("explicit_alignment l2", {"objective": "explicit_alignment", "method": "l2"}),
    ("explicit_alignment weak", {"objective": "explicit_alignment", "method": "weak"}),
    ("explicit_alignment strong", {"objective": "explicit_alignment", "method": "strong"}),
]
WARMUP_STEPS = 2


def _verses(bible: str, pairs: int) -> list[tuple[str, str]]:
    import pyarrow.parquet as pq

    table = pq.read_table(bible, columns=["en", "es"]).slice(0, pairs)
    return list(zip(table.column("en").to_pylist(), table.column("es").to_pylist()))


def _small_encoder(folder: Path, verses, hidden: int, layers: int, max_length: int) -> str:
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from interlingua.models.sentence_encoder import SentenceEncoder

    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator([t for pair in verses for t in pair], vocab_size=4000, min_frequency=1)
    (folder / "hf").mkdir(parents=True)
    wordpiece.save_model(str(folder / "hf"))
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "hf" / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=max(1, hidden // 64), intermediate_size=4 * hidden,
                        max_position_embeddings=max(128, max_length))
    BertModel(config).save_pretrained(folder / "hf")
    tokenizer.save_pretrained(folder / "hf")
    out = folder / "encoder"
    SentenceEncoder.from_folder(folder / "hf", max_length=max_length).save(out)
    return str(out)


def _rows(verses, tokenizer, entities: list[str]) -> list[dict]:
    from interlingua.operators.align.word_pairs import first_subword_positions

    rows = []
    for k, (en, es) in enumerate(verses):
        src, tgt = en.split(), es.split()
        sp, tp = first_subword_positions(tokenizer, src), first_subword_positions(tokenizer, tgt)
        links = dict.fromkeys((i, i * len(tgt) // len(src)) for i in range(len(src)))
        pairs = [f"{sp[i]}-{tp[j]}" for i, j in links if sp[i] is not None and tp[j] is not None]
        following = verses[(k + 1) % len(verses)][1]  # the next pair's Spanish verse
        rows.append({"src": en, "tgt": es, "text": en, "premise": en, "entailment": es,
                     "contradiction": following, "neg": following, "sentence": en,
                     "entity_id": entities[k % len(entities)],
                     "hard_negative_ids": [entities[(k + 7) % len(entities)]],
                     "src_tokens": " ".join(src), "tgt_tokens": " ".join(tgt), "subword_pairs": " ".join(pairs)})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = BenchmarkParser(__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--steps", type=int_at_least(WARMUP_STEPS + 1, f"the first {WARMUP_STEPS} are warm-up, not timed"),
                        default=6)
    parser.add_argument("--batch", type=positive_int, default=16, help="rows per worker per step")
    parser.add_argument("--pairs", type=positive_int, default=256, help="verse pairs in the training set")
    parser.add_argument("--hidden", type=positive_int, default=128)
    parser.add_argument("--layers", type=positive_int, default=2)
    parser.add_argument("--max-length", type=positive_int, default=48)
    add_bible_argument(parser)
    parser.add_argument("--quick", action="store_true", help="1 round, 3 steps, 3 objectives (a smoke run)")
    args = parser.parse_args(argv)
    variants = VARIANTS
    if args.quick:
        quick = ("translation_ranking", "ease", "explicit_alignment strong")
        args.rounds, args.steps, variants = 1, WARMUP_STEPS + 1, [v for v in VARIANTS if v[0] in quick]

    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    import mlflow
    import numpy as np
    import ray
    from mlflow.tracking import MlflowClient
    from transformers import AutoTokenizer

    from interlingua.core import tracking
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.fit import fit

    root = Path(tempfile.mkdtemp(prefix="objective-throughput-"))
    verses = _verses(args.bible, args.pairs)
    encoder = _small_encoder(root, verses, args.hidden, args.layers, args.max_length)
    entities = [f"Q{i}" for i in range(64)]
    vectors = root / "entities.txt"
    rng = np.random.default_rng(0)
    vectors.write_text("".join(f"{e} " + " ".join(f"{v:.5f}" for v in rng.normal(size=32)) + "\n" for e in entities))
    rows = _rows(verses, AutoTokenizer.from_pretrained(encoder), entities)

    uri = f"sqlite:///{root / 'mlflow.db'}"
    os.environ["MLFLOW_TRACKING_URI"] = uri
    mlflow.set_tracking_uri(uri)
    experiment = mlflow.create_experiment("objective-throughput", artifact_location=(root / "mlartifacts").as_uri())
    client = MlflowClient(uri)
    ray.init(address="local", num_cpus=4, object_store_memory=300 * 1024**2, include_dashboard=False,
             log_to_driver=False, runtime_env={"env_vars": {"MLFLOW_TRACKING_URI": uri, "DS_ACCELERATOR": "cpu"}})
    dataset = ray.data.from_items(rows).materialize()

    settings = dict(num_workers=2, cpus_per_worker=1, batch_size=args.batch, max_steps=args.steps, lr=1e-4,
                    max_length=args.max_length, shuffle_buffer=0, zero_stage=0)
    runs_made: dict[str, int] = {}

    def tokens_per_s(label: str, keys: dict) -> float:
        """Train ``--steps`` steps of one objective; the median per-step tokens/s after the warm-up."""
        keys = dict(keys)
        if keys["objective"] == "ease":
            keys["entity_vectors"] = str(vectors)
        r = runs_made[label] = runs_made.get(label, -1) + 1
        run_id = tracking.create_run(experiment, f"{label}-{r}", client=client).info.run_id
        try:
            fit(encoder, dataset, TrainConfig(**settings, **keys), storage_path=root / "ray_results",
                name=f"{label.replace(' ', '-')}-{r}", run_id=run_id)
        except Exception as err:  # noqa: BLE001 - one failed run (e.g. a worker lost) is a gap, not the end
            print(f"{label} run {r + 1} failed: {type(err).__name__}: {str(err).splitlines()[0][:200]}", flush=True)
            return float("nan")
        history = sorted(client.get_metric_history(run_id, "tokens_per_s"), key=lambda m: m.step)
        return statistics.median(m.value for m in history[WARMUP_STEPS:])

    runs = {label: functools.partial(tokens_per_s, label, keys) for label, keys in variants}
    baseline = variants[0][0]
    started = time.perf_counter()
    try:
        # every round runs every objective, starting one later each round (A B C, B C A, ...); a time limit
        # (SIGTERM) still reports the rounds completed
        values = interleave_results(
            runs, args.rounds, rotate=True, stop_on_sigterm=True,
            on_result=lambda r, label, value: print(f"round {r + 1}/{args.rounds} {label}: {value:.0f} tokens/s",
                                                    flush=True))
    finally:
        ray.shutdown()
    args.rounds = len(values[baseline])
    if not args.rounds:
        return
    # tokens/s: ratio(objective, baseline) = the objective's per-round tokens/s over the baseline's, over the
    # rounds where both ran (a failed run is NaN)
    summary, medians = {}, {}
    for label, series in values.items():
        pairs = [(v, b) for v, b in zip(series, values[baseline]) if math.isfinite(v) and math.isfinite(b)]
        finite = [v for v in series if math.isfinite(v)]
        summary[label] = ratio([v for v, _ in pairs], [b for _, b in pairs]) if pairs else (math.nan,) * 3
        medians[label] = statistics.median(finite) if finite else math.nan
    print(f"\nobjective step throughput on the engine: 2 workers x {args.batch} rows, random BERT "
          f"{args.layers}x{args.hidden}, max_length {args.max_length}, {args.rounds} interleaved rounds x "
          f"{args.steps} steps (first {WARMUP_STEPS} dropped), {time.perf_counter() - started:.0f} s\n")
    print(f"| objective | tokens/s (median) | ratio to {baseline} (median) | spread (min–max) |")
    print("|---|---:|---:|---:|")
    for label, (median, low, high) in summary.items():
        print(f"| {label} | {medians[label]:.0f} | {median:.2f} | {low:.2f}–{high:.2f} |")


if __name__ == "__main__":
    main()
