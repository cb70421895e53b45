"""Compile a transformer's repeated blocks (regional compilation) for ``TrainConfig.compile_encoder``.

Each layer of the encoder's stack is compiled in place (``nn.Module.compile``), not the transformer as a whole:

- the layers share one class and one code object, so one compiled graph serves all of them: the first three
  steps (compiling included) of base XLM-R at 1,024 pairs on an H200 took 14 s instead of 31 s;
- the model's preamble (embeddings, building the attention mask) stays eager. A Hugging Face encoder drops the
  mask when no row of the batch is padded, and attention then runs the unmasked kernel. Traced inside one graph the
  mask's values cannot be read, so it was always built and passed on, and the masked kernel is slower: cuDNN
  attention took 26.8 ms a step compiled whole against 19.5 ms compiled by layer (512 pairs, ``engine_mfu
  --profile``, two H200 machines), and 1.93 against 2.52 ms a call unmasked and masked in isolation (1,024
  sequences of 128 tokens, forward and backward).

Inductor's fused LayerNorm-backward kernel ("mix-order reduction": the row reductions and the weight-gradient
column reductions in one pass) picks its split size from the row count. From 768 pairs × 2 views × 128 tokens up
its heuristic's choice made the two such kernels of a layer take 2.5 ms a call each, and a step at 1,024 pairs
0.437-0.465 s; with the split size autotuned it took 0.376 s (another H200; 0.380 s with the fusion turned off).
So the blocks are compiled with the split size autotuned where the installed torch has the option
(``triton.mix_order_reduction_autotune_split_size``; the tuning starts from the heuristic's choice and keeps it
unless another is faster).

Dropout masks are drawn by PyTorch's own random kernels (``fallback_random``) instead of Inductor's generated ones,
which draw the random numbers in the forward and draw them again in the backward. Measured on one H200 (``engine_mfu
--zero-stage 1 --compile on``, base XLM-R, dropout 0.1): 0.205 / 0.200 → 0.196 s a step at 512 pairs and 0.375 →
0.365 s at 1,024 pairs. The masks are also those the eager model draws from the same seed, so a compiled encoder
trains as the eager one does, dropout included.

Parameter names, the state dict and checkpoints stay those of the plain module.
"""

from __future__ import annotations

from torch import nn

AUTOTUNED_SPLIT = "triton.mix_order_reduction_autotune_split_size"
EAGER_RANDOM = "fallback_random"
OPTIONS = (AUTOTUNED_SPLIT, EAGER_RANDOM)


def repeated_blocks(module: nn.Module) -> list[nn.Module]:
    """The members of the largest ``nn.ModuleList`` whose members all share one class (the layer stack), or
    ``[]`` when the module has none with at least two members."""
    best: list[nn.Module] = []
    for child in module.modules():
        if isinstance(child, nn.ModuleList) and len(child) >= 2 and len({type(m) for m in child}) == 1:
            if len(child) > len(best):
                best = list(child)
    return best


def inductor_options(inductor_config=None) -> dict[str, bool]:
    """The Inductor settings the blocks are compiled with (:data:`OPTIONS`, each on): those ``inductor_config``
    (default: the installed torch's ``torch._inductor.config``) knows."""
    if inductor_config is None:
        import torch._inductor.config as inductor_config

    def known(key: str) -> bool:
        owner = inductor_config
        *sections, name = key.split(".")
        for section in sections:
            owner = getattr(owner, section, None)
        return owner is not None and hasattr(owner, name)

    return {key: True for key in OPTIONS if known(key)}


def compile_encoder_blocks(transformer: nn.Module) -> str:
    """Compile ``transformer``'s layer stack in place, one layer at a time; a model without a recognisable stack
    is compiled whole. Returns what was compiled, for the log: ``"12 x XLMRobertaLayer"`` or ``"whole model"``."""
    options = inductor_options()
    blocks = repeated_blocks(transformer)
    if not blocks:
        transformer.compile(options=options)
        return "whole model"
    for block in blocks:
        block.compile(options=options)
    return f"{len(blocks)} x {type(blocks[0]).__name__}"
