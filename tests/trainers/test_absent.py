"""ABSent: discriminator / generator losses against the binary cross-entropy written out by hand, the
networks' shapes, every variant training on tiny data, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from interlingua.trainers.absent.model import Discriminator, Generator
from interlingua.trainers.absent.train import AbsentSettings, split_parallel, train_absent
from interlingua.trainers.objectives.absent_discriminator import PairDiscriminatorLoss
from interlingua.trainers.objectives.absent_generator import AdversarialGeneratorLoss, PairedMappingLoss


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def test_discriminator_loss_is_the_three_cross_entropies():
    real, fake, mismatch = torch.tensor([2.0, -0.5]), torch.tensor([0.3, -1.0, 1.5]), torch.tensor([0.0, 4.0])
    expected_real = -sum(math.log(sigmoid(z)) for z in real.tolist()) / 2
    expected_fake = -sum(math.log(1 - sigmoid(z)) for z in fake.tolist()) / 3
    expected_mismatch = -sum(math.log(1 - sigmoid(z)) for z in mismatch.tolist()) / 2
    assert PairDiscriminatorLoss()(real, fake, mismatch).item() == pytest.approx(
        expected_real + expected_fake + expected_mismatch, rel=1e-5)
    assert PairDiscriminatorLoss(mismatch=False)(real, fake).item() == pytest.approx(expected_real + expected_fake, rel=1e-5)
    with pytest.raises(ValueError, match="mismatch logits are required"):
        PairDiscriminatorLoss()(real, fake)


def test_generator_losses_by_hand():
    logits = torch.tensor([0.2, -2.0, 1.0])
    assert AdversarialGeneratorLoss()(logits).item() == pytest.approx(
        -sum(math.log(sigmoid(z)) for z in logits.tolist()) / 3, rel=1e-5)
    assert AdversarialGeneratorLoss()(logits, target=0.0).item() == pytest.approx(
        -sum(math.log(1 - sigmoid(z)) for z in logits.tolist()) / 3, rel=1e-5)
    mapped, target = torch.tensor([[1.0, 2.0], [0.0, 0.0]]), torch.tensor([[0.0, 0.0], [3.0, 4.0]])
    assert PairedMappingLoss(0.5)(mapped, target).item() == pytest.approx(0.5 * (5.0 + 25.0) / 2)
    with pytest.raises(ValueError, match="weight must be a number >= 0"):
        PairedMappingLoss(-1.0)


def test_networks_follow_the_paper_layout():
    g = Generator(300, 200)
    linear = [m for m in g.net if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linear] == [(300, 512), (512, 1024), (1024, 512), (512, 200)]
    assert sum(isinstance(m, torch.nn.BatchNorm1d) for m in g.net) == 3 and isinstance(g.net[-1], torch.nn.Tanh)
    out = g.eval()(torch.randn(4, 300))
    assert out.shape == (4, 200) and out.abs().max() <= 1
    d = Discriminator(500)
    assert d(torch.randn(4, 300), torch.randn(4, 200)).shape == (4,)
    assert sum(isinstance(m, torch.nn.LeakyReLU) and m.negative_slope == 0.2 for m in d.net) == 3


@pytest.mark.parametrize("variant,init", [("absent", "random"), ("uni-sent", "random"), ("no-mismatch", "random"),
                                          ("cgan", "random"), ("absent", "procrustes")])
def test_every_variant_learns_a_rotation_better_than_chance(variant, init):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 6)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    y = (x @ q).astype(np.float32)
    settings = AbsentSettings(variant=variant, batch_size=32, lr=2e-3, epochs=8, hidden=(16, 32, 16), seed=1,
                              init=init)
    result = train_absent(x[:100], y[:100], x[100:160], y[100:160], settings)
    mapped = result.map_x(x[160:])
    cos = (mapped / np.linalg.norm(mapped, axis=1, keepdims=True)) @ y[160:].T
    assert np.mean(np.argmax(cos, axis=1) == np.arange(40)) > 0.3  # chance: 1/40
    assert (result.backward is None) == (variant == "uni-sent")
    assert len(result.history) == 8 and all(np.isfinite(list(r.values())).all() for r in result.history)


def test_refusals():
    with pytest.raises(ValueError, match="variant must be one of"):
        AbsentSettings(variant="cycle")
    x = np.zeros((4, 3), dtype=np.float32)
    bad = x.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="x_unpaired holds NaN"):
        train_absent(x, x, bad, x, AbsentSettings(batch_size=2, epochs=1, hidden=(4,)))
    parallel, unpaired = split_parallel(10, 0.2, seed=0)
    assert len(parallel) == 2 and len(unpaired) == 8 and not set(parallel) & set(unpaired)
    with pytest.raises(ValueError, match="ratio must lie in"):
        split_parallel(10, 0.0, seed=0)


def test_generator_with_an_initial_map_starts_as_tanh_of_that_map():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(6, 4)).astype(np.float32)
    x = rng.normal(size=(5, 6)).astype(np.float32)
    g = Generator(6, 4, hidden=(8, 16), init=w).eval()
    np.testing.assert_allclose(g(torch.from_numpy(x)).detach().numpy(), np.tanh(x @ w), rtol=1e-5, atol=1e-6)
    assert set(g.state_dict()) >= {"skip.weight", "net.0.weight"}
    with pytest.raises(ValueError, match=r"init map must have shape \(6, 4\)"):
        Generator(6, 4, hidden=(8,), init=w.T)


def test_procrustes_init_starts_from_the_closed_form_map():
    from interlingua.trainers.absent.train import _initial_maps
    from interlingua.trainers.baselines.linear_maps import least_squares_map, procrustes_map

    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(30, 5)), rng.normal(size=(30, 5))
    forward, backward = _initial_maps("procrustes", x, y)
    np.testing.assert_allclose(forward, procrustes_map(x, y))
    np.testing.assert_allclose(backward, procrustes_map(x, y).T)
    forward, backward = _initial_maps("procrustes", x, y[:, :3])  # other dimension: least squares both ways
    np.testing.assert_allclose(forward, least_squares_map(x, y[:, :3]))
    np.testing.assert_allclose(backward, least_squares_map(y[:, :3], x))
    assert _initial_maps("random", x, y) == (None, None)
    with pytest.raises(ValueError, match="init must be one of"):
        AbsentSettings(init="identity")
