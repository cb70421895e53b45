"""End to end on the engine (2 Ray Train workers, DeepSpeed ZeRO 0, CPU/gloo): an objective defined in this
file and registered at run time trains without any engine change; explicit alignment trains from bitext-corpus
style word pairs (contrastive with GradCache; linear with the encoder frozen); the saved encoder keeps the base
model's inference length, not the training length."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import torch
from pydantic import Field
from torch import nn

from engine_env import engine_environment
from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, Views
from interlingua.trainers.objectives.registry import register_objective
from tiny_models import EN_ES_PAIRS

pytestmark = pytest.mark.slow

WORKERS = 2
BATCH = 4
BASE_LENGTH = 16  # the engine_environment encoder's max_seq_length


class PullOptions(ObjectiveOptions):
    initial_scale: float = Field(2.0, gt=0, description="initial value of the learned scale")


@register_objective
class ScaledPull(Objective):
    """A new objective in one file: pull each source embedding to its target (MSE), through a learned scale;
    it declares a counter and saves its scale next to the encoder."""

    name = "test_scaled_pull"
    Options = PullOptions
    counter_names = ("pull_rows",)

    def __init__(self, options, setup):
        super().__init__(options, setup)
        self.scale = nn.Parameter(torch.tensor([float(options.initial_scale)]))  # [1]: DeepSpeed broadcasts no 0-dim

    @classmethod
    def columns(cls, options):
        return ("src", "tgt")

    def views(self, batch, make):
        return Views([make.text(list(batch["src"])), make.text(list(batch["tgt"]))],
                     counters={"pull_rows": len(batch["src"])})

    def loss(self, embeddings):
        source, target = embeddings
        return (self.scale * source - target).pow(2).sum(dim=1).mean()

    def save(self, folder):
        with open(os.path.join(folder, "scale.json"), "w") as f:
            json.dump({"scale": float(self.scale.detach()[0])}, f)
        return ["scale.json"]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with engine_environment(tmp_path_factory.mktemp("engine_fit_objectives"), "engine-fit-objectives") as environment:
        yield environment


def _fit(env, config: TrainConfig, name: str, dataset):
    from mlflow.tracking import MlflowClient

    from interlingua.trainers.engine.fit import fit

    client = MlflowClient(env["uri"])
    run_id = client.create_run(env["experiment_id"], run_name=name).info.run_id
    result = fit(env["encoder"], dataset, config, storage_path=env["root"] / "ray_results", name=name, run_id=run_id)
    return result, lambda key: [m.value for m in sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)]


def _pairs_dataset():
    import ray

    return ray.data.from_items([{"src": s, "tgt": t} for s, t in EN_ES_PAIRS * 2]).materialize()  # 16 per worker


def _bitext_dataset(encoder_dir: str):
    """bitext-corpus rows: Moses-like tokens and first-subword position pairs of the encoder's tokenizer."""
    import ray
    from transformers import AutoTokenizer

    from interlingua.operators.align.word_pairs import first_subword_positions

    tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
    rows = []
    for source, target in EN_ES_PAIRS * 2:  # 16 rows per worker
        src, tgt = source.split(), target.split()
        sp, tp = first_subword_positions(tokenizer, src), first_subword_positions(tokenizer, tgt)
        pairs = dict.fromkeys((sp[i], tp[min(i, len(tgt) - 1)]) for i in range(len(src)))
        rows.append({"src_tokens": source, "tgt_tokens": target, "subword_pairs": " ".join(f"{i}-{j}" for i, j in pairs)})
    return ray.data.from_items(rows).materialize()


def _saved_length(encoder_dir: str) -> int:
    with open(os.path.join(encoder_dir, "sentence_bert_config.json")) as f:
        return json.load(f)["max_seq_length"]


def test_a_new_objective_in_one_file_trains_on_the_engine(env):
    config = TrainConfig(objective="test_scaled_pull", initial_scale=3.0, num_workers=WORKERS, batch_size=BATCH,
                         grad_cache_chunk=2, max_steps=2, lr=1e-2, max_length=8, shuffle_buffer=0)
    result, history = _fit(env, config, "scaled-pull", _pairs_dataset())
    assert result.metrics["step"] == 2 and math.isfinite(result.metrics["loss"])
    assert history("pull_rows") == [WORKERS * BATCH] * 2  # summed over both workers
    assert all(v > 0 for v in history("tokens_per_s"))
    with open(result.extras["scale.json"]) as f:
        scale = json.load(f)["scale"]
    assert scale != 3.0  # the objective's own parameter trained inside the DeepSpeed module
    assert _saved_length(result.encoder_dir) == BASE_LENGTH  # trained at 8 tokens, saved with the base's 16


def test_explicit_alignment_trains_from_word_pairs_with_grad_cache(env):
    from interlingua.models.sentence_encoder import SentenceEncoder

    config = TrainConfig(objective="explicit_alignment", method="strong", align_layer=1, num_workers=WORKERS,
                         batch_size=BATCH, grad_cache_chunk=2, max_steps=2, lr=1e-3, max_length=6,
                         save_max_length=12, shuffle_buffer=0)
    result, history = _fit(env, config, "align-strong", _bitext_dataset(env["encoder"]))
    assert [math.isfinite(v) for v in history("loss")] == [True, True]
    assert all(v > 0 for v in history("align_pairs"))
    assert sum(history("align_pairs_beyond_length")) > 0  # max_length 6 cuts the longer sentences
    assert _saved_length(result.encoder_dir) == 12
    before = SentenceEncoder.from_folder(env["encoder"]).state_dict()
    after = SentenceEncoder.from_folder(result.encoder_dir).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)


def test_explicit_alignment_linear_keeps_the_encoder_and_saves_the_map(env):
    from interlingua.models.sentence_encoder import SentenceEncoder

    config = TrainConfig(objective="explicit_alignment", method="linear", num_workers=WORKERS, batch_size=BATCH,
                         max_steps=2, lr=1e-2, max_length=16, shuffle_buffer=0)
    result, _ = _fit(env, config, "align-linear", _bitext_dataset(env["encoder"]))
    before = SentenceEncoder.from_folder(env["encoder"]).state_dict()
    after = SentenceEncoder.from_folder(result.encoder_dir).state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    with np.load(result.extras["alignment_mapping.npz"], allow_pickle=False) as saved:
        weight = saved["weight"]
    assert weight.shape == (32, 32) and not np.allclose(weight, np.eye(32))
