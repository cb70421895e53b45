"""DeepSpeed engine construction for CPU (gloo, fp32) and GPU (NCCL, bf16) workers."""

from __future__ import annotations

import os

import torch

from interlingua.trainers.engine.config import TrainConfig


def deepspeed_config(config: TrainConfig, use_gpu: bool, bf16: bool | None = None) -> dict:
    """DeepSpeed's config for this run; ``bf16`` (default: on GPU) trains in bf16.

    With bf16 at ZeRO 1 (without GradCache), gradients are accumulated in fp32 (``data_types.grad_accum_dtype``),
    which selects DeepSpeed's BF16 optimizer wrapper: fp32 master weights, and gradients, norm, clipping and the
    update on flat fp32 buffers, with one host synchronisation a step. At ZeRO 0 DeepSpeed allows bf16 gradients
    only, and wraps the optimizer in its fp16 path, which checks every parameter's gradient for overflow with a
    host synchronisation each (about 200 a step for a base encoder). GradCache at ZeRO 1 needs the ZeRO
    optimizer's coalesced reduction, which the BF16 wrapper does not offer, so it keeps bf16 gradients."""
    bf16 = bool(use_gpu) if bf16 is None else bf16
    result = {
        "train_micro_batch_size_per_gpu": config.batch_size,
        "gradient_accumulation_steps": 1,
        "gradient_clipping": config.gradient_clipping,
        "zero_optimization": {"stage": config.zero_stage},
        "bf16": {"enabled": bf16},
        "steps_per_print": 10**9,
        "wall_clock_breakdown": False,
    }
    if bf16 and config.zero_stage == 1 and config.grad_cache_chunk is None:
        result["data_types"] = {"grad_accum_dtype": "fp32"}
    return result


def prepare_accelerator(use_gpu: bool, shm_comm: bool) -> None:
    """Select DeepSpeed's accelerator before it is imported; optionally skip the CPU shm kernel build."""
    os.environ["DS_ACCELERATOR"] = "cuda" if use_gpu else "cpu"
    if not use_gpu and not shm_comm:
        import deepspeed.ops

        # Gloo does the all-reduce; the shared-memory kernel would be compiled on first use.
        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False


def build_engine(model: torch.nn.Module, config: TrainConfig, use_gpu: bool, fused: bool | None = None,
                 bf16: bool | None = None):
    """(engine, scheduler) with a torch AdamW over the trainable parameters and linear warmup/decay.

    ``fused``: AdamW's fused CUDA kernel (one launch for all parameters); ``None``: fused on GPU, torch's default
    (for-each) on CPU. ``bf16``: see :func:`deepspeed_config` (default: on GPU)."""
    prepare_accelerator(use_gpu, config.shm_comm)
    import deepspeed

    check_parameter_shapes(model)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.ndim > 1]
    no_decay = [p for p in params if p.ndim <= 1]
    groups = [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # no empty group (e.g. only a linear map trains): DeepSpeed drops it, which the scheduler would not follow
    fused = use_gpu if fused is None else fused
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=config.lr, fused=True if fused else None)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _linear_schedule(config.warmup_steps, config.max_steps))
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, lr_scheduler=scheduler,
                                           config=deepspeed_config(config, use_gpu, bf16), dist_init_required=False)
    return engine, scheduler


def check_parameter_shapes(model: torch.nn.Module) -> None:
    """DeepSpeed broadcasts parameters as bytes at start-up, which fails on 0-dim tensors (a learned scalar such as
    a temperature): refuse them with the fix instead of a DeepSpeed traceback."""
    scalars = [name for name, p in model.named_parameters() if p.dim() == 0]
    if scalars:
        raise ValueError(f"parameters {scalars} are 0-dim scalars, which DeepSpeed cannot broadcast across workers: "
                         f"give them shape [1] (e.g. nn.Parameter(torch.tensor([value])))")


def _linear_schedule(warmup: int, total: int):
    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor
