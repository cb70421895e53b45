"""The engine's DeepSpeed config and encoder settings: which precision path each ZeRO stage gets on a GPU, and
freezing / compiling the encoder in place (names and state dict unchanged)."""

from __future__ import annotations

import pytest

from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.engine.deepspeed_setup import deepspeed_config


def test_cpu_trains_in_fp32_with_no_data_types():
    cfg = deepspeed_config(TrainConfig(zero_stage=1), use_gpu=False)
    assert cfg["bf16"] == {"enabled": False}
    assert "data_types" not in cfg


@pytest.mark.parametrize(("zero_stage", "chunk", "fp32_grads"),
                         [(0, None, False), (1, None, True), (1, 8, False), (2, None, False), (3, None, False)])
def test_gpu_bf16_accumulates_fp32_gradients_only_where_deepspeed_then_uses_its_bf16_wrapper(zero_stage, chunk,
                                                                                           fp32_grads):
    cfg = deepspeed_config(TrainConfig(zero_stage=zero_stage, grad_cache_chunk=chunk), use_gpu=True)
    assert cfg["bf16"] == {"enabled": True}
    assert cfg["zero_optimization"] == {"stage": zero_stage}
    assert ("data_types" in cfg) == fp32_grads
    if fp32_grads:
        assert cfg["data_types"] == {"grad_accum_dtype": "fp32"}


def test_bf16_can_be_asked_for_without_a_gpu():
    assert deepspeed_config(TrainConfig(zero_stage=1), use_gpu=False, bf16=True)["data_types"] == {
        "grad_accum_dtype": "fp32"}


def test_prepare_encoder_freezes_the_word_embeddings_and_compiles_in_place(tmp_path):
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.trainers.engine.train_module import prepare_encoder
    from tiny_models import build_tiny_bert

    encoder = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"))
    keys = list(encoder.state_dict())
    prepare_encoder(encoder, TrainConfig())
    assert encoder.transformer.get_input_embeddings().weight.requires_grad
    assert encoder.transformer._compiled_call_impl is None

    prepare_encoder(encoder, TrainConfig(freeze_embeddings=True, compile_encoder=True))
    assert not encoder.transformer.get_input_embeddings().weight.requires_grad
    # each layer of the stack is compiled (on its first call); the preamble (embeddings, mask) stays eager
    layers = encoder.transformer.encoder.layer
    assert len(layers) >= 2 and all(layer._compiled_call_impl is not None for layer in layers)
    assert encoder.transformer._compiled_call_impl is None
    assert list(encoder.state_dict()) == keys  # checkpoints and saved models keep the plain module's names
