"""The training loop itself, in this process (no Ray): one worker, a gloo group of one, DeepSpeed ZeRO 0/1 on CPU,
Ray Train's context / shard / report replaced by stand-ins. Checks that a new objective defined here (registered
at run time) trains 2 steps with no engine change, every explicit-alignment method trains on word pairs (with
GradCache where the encoder trains), counters and tokens/s are reported, and the checkpoint holds the encoder at
its inference length plus what the objective saves. The Ray Train end to end is test_engine_fit_objectives.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import types

import numpy as np
import pytest
import torch
from pydantic import Field
from torch import nn

from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, Views
from interlingua.trainers.objectives.registry import register_objective
from tiny_models import EN_ES_PAIRS, build_tiny_bert

pytestmark = pytest.mark.slow

BASE_LENGTH = 16


class ShiftOptions(ObjectiveOptions):
    shift: float = Field(0.5, description="initial value of the learned shift")


@register_objective
class LearnedShift(Objective):
    """A new objective in one file: source + shift should equal target (MSE); one counter; saves its shift."""

    name = "test_learned_shift"
    Options = ShiftOptions
    counter_names = ("shift_rows",)

    def __init__(self, options, setup):
        super().__init__(options, setup)
        self.shift = nn.Parameter(torch.full((setup.dim,), float(options.shift)))

    @classmethod
    def columns(cls, options):
        return ("src", "tgt")

    def views(self, batch, make):
        return Views([make.text(list(batch["src"])), make.text(list(batch["tgt"]))],
                     counters={"shift_rows": len(batch["src"])})

    def loss(self, embeddings):
        return (embeddings[0] + self.shift - embeddings[1]).pow(2).sum(dim=1).mean()

    def save(self, folder):
        np.savez(os.path.join(folder, "shift.npz"), shift=self.shift.detach().numpy())
        return ["shift.npz"]


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    from interlingua.models.sentence_encoder import SentenceEncoder

    root = tmp_path_factory.mktemp("loop")
    SentenceEncoder.from_folder(build_tiny_bert(root / "bert"), max_length=BASE_LENGTH).save(root / "encoder")
    return str(root / "encoder")


@pytest.fixture(scope="module")
def process_group():
    import torch.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    saved = {k: os.environ.get(k) for k in ("DS_ACCELERATOR", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    os.environ.update(DS_ACCELERATOR="cpu", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1",
                      LOCAL_RANK="0")
    dist.init_process_group("gloo", rank=0, world_size=1)
    yield
    dist.destroy_process_group()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _rows(encoder_dir: str) -> list[dict]:
    from transformers import AutoTokenizer

    from interlingua.operators.align.word_pairs import first_subword_positions

    tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
    rows = []
    for source, target in EN_ES_PAIRS:
        src, tgt = source.split(), target.split()
        sp, tp = first_subword_positions(tokenizer, src), first_subword_positions(tokenizer, tgt)
        pairs = dict.fromkeys((sp[i], tp[min(i, len(tgt) - 1)]) for i in range(len(src)))
        rows.append({"src": source, "tgt": target, "src_tokens": source, "tgt_tokens": target,
                     "subword_pairs": " ".join(f"{i}-{j}" for i, j in pairs)})
    return rows


def _train(monkeypatch, tmp_path, encoder_dir, **keys) -> list[tuple[dict, str | None]]:
    """Run train_loop_per_worker for 2 steps; returns (metrics, kept checkpoint folder or None) per report."""
    import ray.train

    from interlingua.trainers.engine.train_loop import train_loop_per_worker

    rows = _rows(encoder_dir)

    class Shard:
        def iter_batches(self, batch_size, **_):
            for start in range(0, len(rows) - batch_size + 1, batch_size):
                part = rows[start:start + batch_size]
                yield {k: np.array([r[k] for r in part], dtype=object) for k in part[0]}

    reports = []

    def report(metrics, checkpoint=None):
        kept = None
        if checkpoint is not None:
            kept = str(tmp_path / f"checkpoint-{len(reports)}")
            shutil.copytree(checkpoint.path, kept)
        reports.append((metrics, kept))

    monkeypatch.setattr(ray.train, "get_context", lambda: types.SimpleNamespace(get_world_rank=lambda: 0,
                                                                                get_world_size=lambda: 1))
    monkeypatch.setattr(ray.train, "get_dataset_shard", lambda name: Shard())
    monkeypatch.setattr(ray.train, "get_checkpoint", lambda: None)
    monkeypatch.setattr(ray.train, "report", report)
    monkeypatch.setattr(ray.train, "Checkpoint", types.SimpleNamespace(
        from_directory=lambda folder: types.SimpleNamespace(path=folder)))
    config = TrainConfig(num_workers=1, batch_size=4, max_steps=2, lr=1e-2, shuffle_buffer=0, **keys)
    train_loop_per_worker({"train": config.model_dump(), "model": encoder_dir, "use_gpu": False, "run_id": None})
    assert [m["step"] for m, _ in reports] == [1, 2]
    assert reports[0][1] is None and reports[1][1] is not None  # the checkpoint comes with the last step
    assert all(np.isfinite(m["loss"]) and m["tokens_per_s"] > 0 for m, _ in reports)
    return reports


def _max_seq_length(checkpoint: str) -> int:
    with open(os.path.join(checkpoint, "encoder", "sentence_bert_config.json")) as f:
        return json.load(f)["max_seq_length"]


def _weights_changed(encoder_dir: str, checkpoint: str) -> bool:
    from interlingua.models.sentence_encoder import SentenceEncoder

    before = SentenceEncoder.from_folder(encoder_dir).state_dict()
    after = SentenceEncoder.from_folder(os.path.join(checkpoint, "encoder")).state_dict()
    return any(not torch.equal(before[k], after[k]) for k in before)


def test_a_new_objective_defined_here_trains_without_engine_changes(monkeypatch, tmp_path, encoder_dir, process_group):
    reports = _train(monkeypatch, tmp_path, encoder_dir, objective="test_learned_shift", shift=0.25,
                     grad_cache_chunk=2, max_length=8)
    assert [m["shift_rows"] for m, _ in reports] == [4, 4]
    checkpoint = reports[-1][1]
    with np.load(os.path.join(checkpoint, "shift.npz"), allow_pickle=False) as saved:
        assert saved["shift"].shape == (32,) and not np.allclose(saved["shift"], 0.25)  # trained in DeepSpeed
    assert _weights_changed(encoder_dir, checkpoint)
    assert _max_seq_length(checkpoint) == BASE_LENGTH  # trained at 8 tokens, saved with the base's 16


@pytest.mark.parametrize("method, zero_stage", [("strong", 0), ("weak", 1), ("l2", 0)])
def test_explicit_alignment_trains_the_encoder(monkeypatch, tmp_path, encoder_dir, process_group, method, zero_stage):
    reports = _train(monkeypatch, tmp_path, encoder_dir, objective="explicit_alignment", method=method,
                     align_layer=1, grad_cache_chunk=2, zero_stage=zero_stage, max_length=6, save_max_length=12)
    assert all(m["align_pairs"] > 0 for m, _ in reports)
    assert sum(m["align_pairs_beyond_length"] for m, _ in reports) > 0  # 6 tokens cut the longer sentences
    checkpoint = reports[-1][1]
    assert _weights_changed(encoder_dir, checkpoint)
    assert _max_seq_length(checkpoint) == 12
    from interlingua.trainers.engine.fit import _result

    assert _result(checkpoint, {}).extras == {}  # nothing next to the encoder: the contrastive head is not kept


def test_explicit_alignment_linear_freezes_the_encoder_and_saves_w(monkeypatch, tmp_path, encoder_dir, process_group):
    reports = _train(monkeypatch, tmp_path, encoder_dir, objective="explicit_alignment", method="linear",
                     grad_cache_chunk=2, max_length=16)
    checkpoint = reports[-1][1]
    assert not _weights_changed(encoder_dir, checkpoint)
    with np.load(os.path.join(checkpoint, "alignment_mapping.npz"), allow_pickle=False) as saved:
        weight = saved["weight"]
    assert weight.shape == (32, 32) and not np.allclose(weight, np.eye(32))
    # orthogonalised after each step: W Wᵀ stays near the identity
    assert np.abs(weight @ weight.T - np.eye(32)).max() < 0.1


def test_each_step_line_reaches_the_console_once_under_ray_trains_print(monkeypatch, tmp_path, encoder_dir,
                                                                        process_group, capsys):
    """A Ray Train worker's ``print`` logs the text on the root logger, whose console handler writes it to stderr, and
    prints it to stdout too (a worker's stdout is not ``sys.__stdout__``, nor is capsys's): Ray forwards both, so every
    step line appeared twice on the driver, from the CLI and from ``fit(...)``. Here the worker's print and console
    handler are in place: each step line is written once, stdout and stderr together."""
    import builtins
    import logging
    import sys

    patch_print = pytest.importorskip("ray.train.v2._internal.logging.patch_print")
    monkeypatch.setattr(builtins, "print", patch_print.redirected_print)
    root, console = logging.getLogger(), logging.StreamHandler(sys.stderr)  # capsys's stderr, as the worker's
    monkeypatch.setattr(root, "level", logging.INFO)
    root.addHandler(console)
    try:
        _train(monkeypatch, tmp_path, encoder_dir, objective="translation_ranking")
    finally:
        root.removeHandler(console)
    captured = capsys.readouterr()
    console_text = captured.out + captured.err
    assert [console_text.count(f"[train] step {step}/2 loss") for step in (1, 2)] == [1, 1], console_text


@pytest.mark.parametrize("objective, keys", [
    ("translation_ranking", {"grad_cache_chunk": 2}),  # a no-grad first pass, then chunks with graphs
    ("explicit_alignment", {"method": "strong", "align_layer": 1, "max_length": 6}),  # hidden states at positions
])
def test_a_compiled_encoder_trains_through_the_loop(monkeypatch, tmp_path, encoder_dir, process_group, objective,
                                                    keys, capsys):
    reports = _train(monkeypatch, tmp_path, encoder_dir, objective=objective, compile_encoder=True, **keys)
    assert "[train] compile_encoder: compiling 2 x BertLayer; the first steps include the compilation" in (
        capsys.readouterr().out)
    assert all(np.isfinite(m["loss"]) for m, _ in reports)
    checkpoint = reports[-1][1]
    assert _weights_changed(encoder_dir, checkpoint)  # saved under the plain module's names, and trained


def _bf16_engine(encoder_dir, zero_stage):
    from interlingua.models.load import load_encoder
    from interlingua.trainers.engine.deepspeed_setup import build_engine
    from interlingua.trainers.engine.train_loop import build_objective, step_function
    from interlingua.trainers.engine.train_module import EngineViews, TrainModule

    config = TrainConfig(num_workers=1, batch_size=4, max_length=BASE_LENGTH, zero_stage=zero_stage, lr=1e-3,
                         max_steps=6)
    encoder = load_encoder(encoder_dir)
    objective = build_objective(config, encoder, 1)
    model = TrainModule(encoder, objective)
    model.train()
    engine, _ = build_engine(model, config, use_gpu=False, bf16=True)
    rows = _rows(encoder_dir)[:4]
    batch = {key: [row[key] for row in rows] for key in ("src", "tgt")}
    views = objective.views(batch, EngineViews(encoder, torch.device("cpu"), config.max_length))
    run_step = step_function(engine, objective, config, 1)

    def step() -> float:
        loss = float(run_step(views.tensors))
        engine.step()
        return loss

    return engine, encoder, step


@pytest.mark.parametrize(("zero_stage", "wrapper"), [(0, "FP16_UnfusedOptimizer"), (1, "BF16_Optimizer")])
def test_bf16_engine_uses_the_expected_deepspeed_wrapper_learns_and_resumes_exactly(encoder_dir, process_group,
                                                                                    tmp_path, zero_stage, wrapper):
    """The GPU precision path, run on CPU: bf16 weights; at ZeRO 1 DeepSpeed's BF16 wrapper (fp32 gradients and
    master weights, flat buffers); repeated steps on one batch lower the loss; a checkpoint read back through
    the weights-only loader continues with the same next step."""
    from interlingua.trainers.engine.safe_checkpoint import load_weights_only

    engine, encoder, step = _bf16_engine(encoder_dir, zero_stage)
    assert type(engine.optimizer).__name__ == wrapper
    assert next(encoder.transformer.parameters()).dtype == torch.bfloat16
    losses = [step() for _ in range(5)]
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0]
    engine.save_checkpoint(str(tmp_path), tag="step5", client_state={"step": 5})
    torch.manual_seed(5)  # the same dropout masks in both next steps (the loop restores the RNG state as well)
    step()
    expected = [p.detach().clone() for p in encoder.parameters()]

    resumed, resumed_encoder, resumed_step = _bf16_engine(encoder_dir, zero_stage)
    load_weights_only(resumed)
    _, client_state = resumed.load_checkpoint(str(tmp_path))
    assert client_state["step"] == 5
    torch.manual_seed(5)
    resumed_step()
    for got, want in zip(resumed_encoder.parameters(), expected):
        assert torch.equal(got, want)


def test_a_compiled_encoder_gives_the_eager_embeddings_and_gradients(encoder_dir):
    """compile_encoder changes how the transformer runs, not what it computes (CPU inductor, fp32)."""
    from interlingua.models.load import load_encoder
    from interlingua.trainers.engine.train_module import prepare_encoder

    eager, compiled = load_encoder(encoder_dir), load_encoder(encoder_dir)
    prepare_encoder(compiled, TrainConfig(compile_encoder=True))
    texts = [source for source, _ in EN_ES_PAIRS[:4]]
    results = []
    for encoder in (eager, compiled):
        encoder.eval()  # no dropout: both runs compute the same function
        embeddings = encoder(encoder.tokenize(texts))
        embeddings.pow(2).sum().backward()
        # a parameter the forward does not use (the pooler) has no gradient eagerly, zeros compiled
        results.append((embeddings.detach(), [torch.zeros_like(p) if p.grad is None else p.grad
                                               for p in encoder.transformer.parameters()]))
    (e_ref, g_ref), (e_out, g_out) = results
    torch.testing.assert_close(e_out, e_ref, rtol=1e-4, atol=1e-5)
    for grad_out, grad_ref in zip(g_out, g_ref):
        torch.testing.assert_close(grad_out, grad_ref, rtol=1e-3, atol=1e-5)


def test_a_compiled_encoder_draws_the_eager_dropout_masks_from_the_same_seed(encoder_dir):
    """The compiled layers draw dropout masks with PyTorch's own random kernels (``fallback_random``), so in
    training mode the compiled encoder gives the eager embeddings from the same seed; another seed gives others."""
    from interlingua.models.load import load_encoder
    from interlingua.trainers.engine.train_module import prepare_encoder

    eager, compiled = load_encoder(encoder_dir), load_encoder(encoder_dir)
    prepare_encoder(compiled, TrainConfig(compile_encoder=True))
    batch = eager.tokenize([source for source, _ in EN_ES_PAIRS[:4]])

    def embed(encoder, seed):
        encoder.train()
        torch.manual_seed(seed)
        with torch.no_grad():
            return encoder(batch)

    reference = embed(eager, 3)
    torch.testing.assert_close(embed(compiled, 3), reference, rtol=1e-4, atol=1e-5)
    assert not torch.allclose(embed(compiled, 4), reference, atol=1e-3)  # dropout is on: the seed matters
