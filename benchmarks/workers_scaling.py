"""Contrastive step with cross-worker negatives: 1 vs 2 workers (torch.distributed, gloo, CPU).

Usage::

    python -m interlingua.benchmarks.workers_scaling [--batch 32] [--steps 10] [--hidden 128]
        [--layers 2] [--seq-len 32] [--threads 1] [--quick]

Each worker (``torch.multiprocessing`` spawn, gloo) holds a small random BERT encoder and runs the translation ranking step: encode source and target, local
loss over the *global* batch (embeddings gathered with gradient,
:func:`interlingua.trainers.distributed.gather.gather_with_grad`), backward, gradient averaging (one flat
all-reduce, as DDP/DeepSpeed do), SGD step. Runs:

- 1 worker, local batch B (baseline);
- 1 worker, local batch 2B (the same negatives per anchor as 2 workers x B);
- 2 workers, local batch B each (global batch 2B).

Reported: global samples/s, ratio to the baseline, negatives per anchor, and the all-gather cost:
the forward + backward of ``gather_with_grad`` for the two [B, D] embedding tensors of a step, timed
alone (after a barrier, on tensors of the step's shape), as ms per step and as a share of the step.
Timings are the median over ``--steps`` steps after one warm-up step.
"""

from __future__ import annotations

import os
import socket
import statistics
import time

from interlingua.benchmarks.arguments import BenchmarkParser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, settings: dict, results) -> None:
    import torch
    import torch.distributed as dist
    from transformers import BertConfig, BertModel

    from interlingua.trainers.distributed.gather import gather_with_grad
    from interlingua.models.pooling import pool
    from interlingua.trainers.objectives.translation_ranking import TranslationRankingLoss

    torch.set_num_threads(settings["threads"])
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=8000, hidden_size=settings["hidden"], num_hidden_layers=settings["layers"],
                        num_attention_heads=max(1, settings["hidden"] // 64), intermediate_size=4 * settings["hidden"],
                        max_position_embeddings=max(64, settings["seq_len"]))
    model = BertModel(config, add_pooling_layer=False).train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    loss_fn = TranslationRankingLoss(temperature=0.05, symmetric=True)
    batch, seq_len = settings["batch"], settings["seq_len"]
    generator = torch.Generator().manual_seed(1 + rank)

    def views():
        out = []
        for _ in range(2):
            ids = torch.randint(5, 8000, (batch, seq_len), generator=generator)
            out.append({"input_ids": ids, "attention_mask": torch.ones_like(ids)})
        return out

    def encode(features):
        return pool(model(**features).last_hidden_state, features["attention_mask"], "mean")

    def barrier():
        if world > 1:
            dist.barrier()

    step_times, gather_times = [], []
    for step in range(settings["steps"] + 1):
        src, tgt = views()
        barrier()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(encode(src), encode(tgt))
        loss.backward()
        if world > 1:  # data-parallel gradient averaging (what DDP / DeepSpeed do), one flat all-reduce
            flat = torch.cat([p.grad.reshape(-1) for p in params])
            dist.all_reduce(flat)
            flat /= world
            offset = 0
            for p in params:
                p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()
        optimizer.step()
        barrier()
        elapsed = time.perf_counter() - start

        # The gather alone: forward + backward for the step's two [B, D] embedding tensors.
        a = torch.randn(batch, settings["hidden"], requires_grad=True)
        p = torch.randn(batch, settings["hidden"], requires_grad=True)
        barrier()
        start = time.perf_counter()
        (gather_with_grad(a).sum() + gather_with_grad(p).sum()).backward()
        barrier()
        gathered = time.perf_counter() - start
        if step > 0:  # the first step is warm-up
            step_times.append(elapsed)
            gather_times.append(gathered)
    if rank == 0:
        results.put({"step_s": statistics.median(step_times), "gather_s": statistics.median(gather_times),
                     "loss": float(loss.detach())})
    if world > 1:
        dist.destroy_process_group()


def _run(world: int, settings: dict) -> dict:
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    mp.start_processes(_worker, args=(world, _free_port(), settings, results), nprocs=world, join=True,
                       start_method="spawn")
    return results.get()


def main(argv: list[str] | None = None) -> None:
    parser = BenchmarkParser(__doc__)
    parser.add_argument("--batch", type=int, default=32, help="pairs per worker per step (B)")
    parser.add_argument("--steps", type=int, default=None, help="timed steps per run (default 10, quick 4)")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    parser.add_argument("--quick", action="store_true", help="4 timed steps")
    args = parser.parse_args(argv)

    steps = args.steps or (4 if args.quick else 10)
    base = {"hidden": args.hidden, "layers": args.layers, "seq_len": args.seq_len, "threads": args.threads,
            "steps": steps}
    runs = [("1 worker x B", 1, args.batch), ("1 worker x 2B", 1, 2 * args.batch), ("2 workers x B", 2, args.batch)]
    rows = []
    for label, world, batch in runs:
        print(f"  running {label} ...", flush=True)
        result = _run(world, {**base, "batch": batch})
        rows.append((label, world, batch, result))

    baseline = rows[0][2] * rows[0][1] / rows[0][3]["step_s"]
    print(f"\nBERT hidden {args.hidden}, {args.layers} layers, seq len {args.seq_len}; B = {args.batch} pairs; "
          f"{args.threads} torch thread(s) per worker, gloo; median of {steps} steps\n")
    print("| run | global batch | negatives/anchor | step ms | samples/s | vs 1 worker x B | all-gather ms/step | gather share of step |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, world, batch, r in rows:
        global_batch = world * batch
        sps = global_batch / r["step_s"]
        gather = f"{1000 * r['gather_s']:.2f}" if world > 1 else "-"
        share = f"{100 * r['gather_s'] / r['step_s']:.1f}%" if world > 1 else "-"
        print(f"| {label} | {global_batch} | {global_batch - 1} | {1000 * r['step_s']:.0f} | {sps:,.1f} "
              f"| {sps / baseline:.2f} | {gather} | {share} |")


if __name__ == "__main__":
    main()
