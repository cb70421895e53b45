"""GradCache: cached_step gives plain_step's gradients (dropout on, with/without hard negatives, 1 and 2
workers), 2 cached workers × B equal 1 plain worker × 2B, loss-function parameters and engine hooks."""

from __future__ import annotations

import contextlib
import functools
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))

import distributed_scenarios  # noqa: E402
import gradcache_scenarios as scenarios  # noqa: E402
from contrastive_harness import (  # noqa: E402
    TinyEncoder,
    assert_close_relative,
    gradient_vector,
    token_batch,
    triplet_views,
)

from interlingua.trainers import gradcache  # noqa: E402
from interlingua.trainers.gradcache import cached_step, plain_step  # noqa: E402
from interlingua.trainers.objectives.contrastive import info_nce  # noqa: E402


@pytest.mark.parametrize("keep_last_graph", [True, False])
@pytest.mark.parametrize("negatives_per_pair", scenarios.NEGATIVE_COUNTS)
def test_cached_equals_plain_with_dropout_on_one_worker(negatives_per_pair, keep_last_graph):
    step = functools.partial(cached_step, keep_last_graph=keep_last_graph)
    cached = scenarios.run_step(step, 0.3, negatives_per_pair, rank=0, world_size=1, seed=7)
    plain = scenarios.run_step(plain_step, 0.3, negatives_per_pair, rank=0, world_size=1, seed=7)
    assert_close_relative(cached["loss"], plain["loss"])
    assert_close_relative(cached["gradients"], plain["gradients"])


@pytest.mark.parametrize("chunk_size", [1, 8, 100])
def test_kept_last_chunk_equals_recomputed_one(chunk_size):
    """One chunk per view (100), many (1) or a few: keeping the last chunk's graph changes nothing."""
    model = TinyEncoder(dropout=0.3)
    views = triplet_views(8, 2, seed=5)
    results = {}
    for keep in (True, False):
        model.zero_grad()
        torch.manual_seed(3)
        loss = cached_step(model.encode, views, lambda e: info_nce(e[0], e[1], e[2], temperature=0.1), chunk_size,
                           keep_last_graph=keep)
        results[keep] = (loss, gradient_vector(model))
    model.zero_grad()
    torch.manual_seed(3)
    plain_loss = plain_step(model.encode, views, lambda e: info_nce(e[0], e[1], e[2], temperature=0.1), chunk_size)
    assert_close_relative(results[True][0], plain_loss)
    assert_close_relative(results[True][1], gradient_vector(model))
    assert_close_relative(results[True][1], results[False][1])


def test_without_random_state_replay_the_gradients_differ(monkeypatch):
    """Negative control: the equality above depends on replaying pass 1's dropout masks in pass 2."""
    plain = scenarios.run_step(plain_step, 0.3, 2, rank=0, world_size=1, seed=7)
    monkeypatch.setattr(gradcache.RandomState, "replay", lambda self: contextlib.nullcontext())
    unreplayed = scenarios.run_step(cached_step, 0.3, 2, rank=0, world_size=1, seed=7)
    assert not torch.allclose(unreplayed["gradients"], plain["gradients"], rtol=1e-3, atol=0)


def test_loss_function_parameters_get_their_gradient():
    torch.manual_seed(0)
    head = nn.Linear(8, 8)
    model = TinyEncoder(dropout=0.2)
    views = triplet_views(6, 0, seed=3)

    def projected_loss(embeddings):
        return info_nce(head(embeddings[0]), head(embeddings[1]), temperature=0.2)

    gradients = {}
    for name, step in (("cached", cached_step), ("plain", plain_step)):
        model.zero_grad(), head.zero_grad()
        torch.manual_seed(1)
        step(model.encode, views, projected_loss, 4)
        gradients[name] = torch.cat([gradient_vector(model), gradient_vector(head)])
    assert_close_relative(gradients["cached"], gradients["plain"])


def test_backward_and_defer_sync_hooks_are_used_for_every_chunk():
    model = TinyEncoder(dropout=0.0)
    views = triplet_views(5, 0, seed=3)  # 2 views × chunks of 2,2,1
    calls: list[bool] = []
    deferred = {"open": False}

    @contextlib.contextmanager
    def defer_sync():
        deferred["open"] = True
        yield
        deferred["open"] = False

    def backward(scalar):
        calls.append(deferred["open"])
        scalar.backward()

    cached_step(model.encode, views, lambda e: info_nce(e[0], e[1]), 2, backward=backward, defer_sync=defer_sync)
    assert calls == [True] * 5 + [False]


def test_bad_arguments_are_rejected():
    model = TinyEncoder()
    view = token_batch(4, 0)
    loss = lambda embeddings: info_nce(embeddings[0], embeddings[0])  # noqa: E731
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 1, got 0"):
        cached_step(model.encode, [view], loss, 0)
    with pytest.raises(ValueError, match="views must hold at least one batch"):
        cached_step(model.encode, [], loss, 2)
    with pytest.raises(ValueError, match="share batch dim 0"):
        cached_step(model.encode, [{"token_ids": view["token_ids"], "mask": torch.ones(3)}], loss, 2)
    with pytest.raises(ValueError, match="scalar tensor"):
        cached_step(model.encode, [view], lambda embeddings: embeddings[0].sum(dim=1), 2)


@pytest.fixture(scope="module")
def worker_results() -> list[dict]:
    return [result["gradcache"] for result in distributed_scenarios.worker_results()]


@pytest.mark.parametrize("negatives_per_pair", scenarios.NEGATIVE_COUNTS)
def test_cached_equals_plain_with_dropout_on_two_workers(worker_results, negatives_per_pair):
    for result in worker_results:
        cached = result[("dropout", negatives_per_pair, "cached")]
        plain = result[("dropout", negatives_per_pair, "plain")]
        assert_close_relative(cached["loss"], plain["loss"])
        assert_close_relative(cached["gradients"], plain["gradients"])


@pytest.mark.parametrize("negatives_per_pair", scenarios.NEGATIVE_COUNTS)
def test_two_cached_workers_equal_one_plain_worker_with_double_batch(worker_results, negatives_per_pair):
    single = scenarios.run_step(plain_step, 0.0, negatives_per_pair, rank=0, world_size=1, seed=0)
    key = ("no_dropout", negatives_per_pair, "cached")
    worker_losses = torch.stack([result[key]["loss"] for result in worker_results])
    assert_close_relative(worker_losses.mean(), single["loss"])
    for result in worker_results:
        assert_close_relative(result[("no_dropout", negatives_per_pair, "cached")]["gradients"], single["gradients"])


def test_cached_equals_plain_on_a_tiny_bert_with_the_blockwise_loss(tmp_path):
    """The benchmark's set-up at test size: a BERT with dropout (tests/tiny_models.py), mean pooling, the
    translation ranking loss above DEFAULT_BLOCK_ROWS pairs (so the loss itself runs block by block), many
    chunks and a short last one: the cached step gives the plain step's loss and gradients."""
    from tiny_models import build_tiny_bert
    from transformers import BertModel

    from interlingua.models.pooling import pool
    from interlingua.trainers.objectives.blockwise_cross_entropy import DEFAULT_BLOCK_ROWS
    from interlingua.trainers.objectives.translation_ranking import TranslationRankingLoss

    model = BertModel.from_pretrained(build_tiny_bert(tmp_path / "bert"), add_pooling_layer=False,
                                      hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.2).train()
    pairs, length = DEFAULT_BLOCK_ROWS + 44, 6
    generator = torch.Generator().manual_seed(4)
    views = []
    for _ in range(2):
        ids = torch.randint(5, model.config.vocab_size, (pairs, length), generator=generator)
        mask = torch.ones_like(ids)
        mask[::3, 4:] = 0  # some padded rows, so mean pooling reads the mask
        views.append({"input_ids": ids, "attention_mask": mask})
    loss = TranslationRankingLoss(temperature=0.05)

    def encode(features):
        return pool(model(**features).last_hidden_state, features["attention_mask"], "mean")

    results = {}
    for name, step in (("cached", cached_step), ("plain", plain_step)):
        model.zero_grad(set_to_none=True)
        torch.manual_seed(9)
        value = step(encode, views, lambda embeddings: loss(*embeddings), 64)
        results[name] = (value, gradient_vector(model))
    assert_close_relative(results["cached"][0], results["plain"][0])
    assert_close_relative(results["cached"][1], results["plain"][1])
