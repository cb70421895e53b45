"""ABSent training (Fu et al. 2020) over fixed sentence vectors: a few parallel pairs plus unpaired sentences.

Variants (``variant``):

==============  ===============================================================================
``absent``      G: X→Y and F: Y→X; pair discriminators D_Y(x, y), D_X(x, y) trained on real (parallel),
                fake ((x, G(x)) / (F(y), y)) and mismatch ((x_i, y_j), i ≠ j) pairs; a direction
                discriminator D_dir telling (x, G(x)) from (F(y), y) (BiGAN-style), fooled by both generators
``uni-sent``    G and D_Y only (one direction), with mismatch pairs
``no-mismatch`` ``absent`` without mismatch pairs
``cgan``        G, F with discriminators on single vectors (real y vs G(x), real x vs F(y)),
                so there are no fake or mismatch *pairs* and no direction discriminator (the discriminator is
                not conditioned on x: an unconditional, MUSE-style adversarial map, not Mirza & Osindero's cGAN)
==============  ===============================================================================

Every variant also fits the parallel pairs with :class:`PairedMappingLoss` (``paired_weight``; 0 = off), the
adversarial terms shaping the mapping on the unpaired sentences. Adam (lr 2e-3), batch 128.

``init="procrustes"`` starts each generator from the linear map fitted on the parallel pairs (orthogonal
Procrustes when both sides share a dimension, else least squares; F starts from Wᵀ / its own least-squares
map), through the generator's skip path (:class:`~interlingua.trainers.absent.model.Generator`);
``init="random"`` is the paper's plain MLP. From random weights, a few hundred updates leave the generator
near the mean sentence vector (P@1 near chance on the Bible, see the README). An epoch is as
many steps as it takes to see every sentence of the larger side once; parallel batches are drawn at random.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from interlingua.trainers.baselines.linear_maps import least_squares_map, procrustes_map
from interlingua.trainers.absent.model import HIDDEN, Discriminator, Generator
from interlingua.trainers.objectives.absent_discriminator import PairDiscriminatorLoss
from interlingua.trainers.objectives.absent_generator import AdversarialGeneratorLoss, PairedMappingLoss

VARIANTS = ("absent", "uni-sent", "no-mismatch", "cgan")
INITS = ("procrustes", "random")


@dataclass(frozen=True)
class AbsentSettings:
    variant: str = "absent"
    batch_size: int = 128
    lr: float = 2e-3
    epochs: int = 10
    hidden: tuple[int, ...] = HIDDEN
    paired_weight: float = 1.0
    seed: int = 0
    init: str = "procrustes"

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}; got {self.variant!r}")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}; got {self.init!r}")
        if self.batch_size < 2 or self.epochs < 1 or not self.lr > 0:
            raise ValueError(f"need batch_size >= 2, epochs >= 1, lr > 0; got {self.batch_size}, {self.epochs}, {self.lr}")

    @property
    def bidirectional(self) -> bool:
        return self.variant != "uni-sent"

    @property
    def mismatch(self) -> bool:
        return self.variant in ("absent", "uni-sent")

    @property
    def direction(self) -> bool:
        return self.variant in ("absent", "no-mismatch")

    @property
    def pair_discriminators(self) -> bool:
        return self.variant != "cgan"


@dataclass
class AbsentResult:
    forward: Generator                 # G: X -> Y
    backward: Generator | None         # F: Y -> X (None for uni-sent)
    history: list[dict[str, float]]

    @torch.no_grad()
    def map_x(self, x: np.ndarray) -> np.ndarray:
        return self.forward.eval()(torch.as_tensor(x, dtype=torch.float32)).numpy()

    @torch.no_grad()
    def map_y(self, y: np.ndarray) -> np.ndarray:
        if self.backward is None:
            raise ValueError("uni-sent has no Y -> X generator")
        return self.backward.eval()(torch.as_tensor(y, dtype=torch.float32)).numpy()


def train_absent(x_parallel: np.ndarray, y_parallel: np.ndarray, x_unpaired: np.ndarray, y_unpaired: np.ndarray,
                 settings: AbsentSettings = AbsentSettings(),
                 on_epoch: Callable[[dict[str, float]], None] | None = None) -> AbsentResult:
    """Train the ``settings.variant`` networks; X and Y may differ in dimension."""
    if len(x_parallel) != len(y_parallel) or len(x_parallel) < 2:
        raise ValueError(f"need at least 2 aligned parallel pairs; got {len(x_parallel)} and {len(y_parallel)}")
    for name, array in (("x_parallel", x_parallel), ("y_parallel", y_parallel), ("x_unpaired", x_unpaired),
                        ("y_unpaired", y_unpaired)):
        if len(array) and not np.isfinite(array).all():
            raise ValueError(f"{name} holds NaN or inf; reject those sentences first")
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    t = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float32)  # noqa: E731
    xp, yp = t(x_parallel), t(y_parallel)
    x_all = torch.cat([xp, t(x_unpaired).reshape(-1, xp.shape[1])])
    y_all = torch.cat([yp, t(y_unpaired).reshape(-1, yp.shape[1])])
    dx, dy = xp.shape[1], yp.shape[1]
    nets = _networks(settings, dx, dy, _initial_maps(settings.init, x_parallel, y_parallel))
    g_params = [p for name in ("G", "F") if name in nets for p in nets[name].parameters()]
    d_params = [p for name in nets if name.startswith("D") for p in nets[name].parameters()]
    g_opt = torch.optim.Adam(g_params, lr=settings.lr, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(d_params, lr=settings.lr, betas=(0.5, 0.999))
    d_loss = PairDiscriminatorLoss(mismatch=settings.mismatch)
    plain_d_loss = PairDiscriminatorLoss(mismatch=False)
    adversarial, paired = AdversarialGeneratorLoss(), PairedMappingLoss(settings.paired_weight)
    steps = math.ceil(max(len(x_all), len(y_all)) / settings.batch_size)
    history = []
    for epoch in range(1, settings.epochs + 1):
        sums = {"d_loss": 0.0, "g_adversarial": 0.0, "g_paired": 0.0}
        for _ in range(steps):
            b = settings.batch_size
            drawn = rng.integers(0, len(xp), size=b)
            ip = torch.as_tensor(drawn)
            bx, by = xp[ip], yp[ip]
            # mismatch partners: y_j for x_i (and x_j for y_i) with j != i as parallel pairs, not batch positions
            jp = torch.as_tensor(mismatch_partners(drawn, len(xp), rng)) if settings.mismatch else None
            mx, my = (xp[jp], yp[jp]) if jp is not None else (None, None)
            ax = x_all[torch.as_tensor(rng.integers(0, len(x_all), size=b))]
            ay = y_all[torch.as_tensor(rng.integers(0, len(y_all), size=b))]
            for net in nets.values():
                net.train()
            # discriminators
            with torch.no_grad():
                gx = nets["G"](ax)
                fy = nets["F"](ay) if "F" in nets else None
            loss_d = _discriminator_loss(nets, settings, d_loss, plain_d_loss, bx, by, mx, my, ax, ay, gx, fy)
            d_opt.zero_grad()
            loss_d.backward()
            d_opt.step()
            # generators
            gx = nets["G"](ax)
            fy = nets["F"](ay) if "F" in nets else None
            adv = _generator_adversarial(nets, settings, adversarial, ax, ay, gx, fy)
            sup = paired(nets["G"](bx), by) + (paired(nets["F"](by), bx) if "F" in nets else 0.0)
            g_opt.zero_grad()
            (adv + sup).backward()
            g_opt.step()
            sums["d_loss"] += loss_d.item()
            sums["g_adversarial"] += adv.item()
            sums["g_paired"] += float(sup.detach()) if torch.is_tensor(sup) else float(sup)
        row = {"epoch": float(epoch), **{k: v / steps for k, v in sums.items()}}
        history.append(row)
        if on_epoch:
            on_epoch(row)
    return AbsentResult(nets["G"].eval(), nets["F"].eval() if "F" in nets else None, history)


def _initial_maps(init: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(X→Y, Y→X) linear maps fitted on the parallel pairs, or (None, None) for random generators."""
    if init == "random":
        return None, None
    if x.shape[1] == y.shape[1]:
        w = procrustes_map(x, y)
        return w, w.T
    return least_squares_map(x, y), least_squares_map(y, x)


def _networks(settings: AbsentSettings, dx: int, dy: int, maps=(None, None)) -> dict[str, torch.nn.Module]:
    nets: dict[str, torch.nn.Module] = {"G": Generator(dx, dy, settings.hidden, init=maps[0])}
    if settings.bidirectional:
        nets["F"] = Generator(dy, dx, settings.hidden, init=maps[1])
    if settings.pair_discriminators:
        nets["D_Y"] = Discriminator(dx + dy, settings.hidden)
        if settings.bidirectional:
            nets["D_X"] = Discriminator(dx + dy, settings.hidden)
    else:
        nets["D_Y"] = Discriminator(dy, settings.hidden)
        nets["D_X"] = Discriminator(dx, settings.hidden)
    if settings.direction:
        nets["D_dir"] = Discriminator(dx + dy, settings.hidden)
    return nets


def mismatch_partners(drawn: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """For each drawn parallel pair i, another pair j != i (uniform over the other n - 1): (x_i, y_j) is a
    mismatch (false) pair of the paper. Pairs are told apart by index, so a batch drawn with replacement never
    labels a true translation false (shifting batch positions did, where a pair was drawn twice in a row)."""
    if n < 2:
        raise ValueError(f"mismatch pairs need at least 2 parallel pairs; got {n}")
    return (np.asarray(drawn) + rng.integers(1, n, size=len(drawn))) % n


def _discriminator_loss(nets, settings, d_loss, plain_d_loss, bx, by, mx, my, ax, ay, gx, fy):
    if not settings.pair_discriminators:  # conditional GAN: single vectors, real vs generated
        return plain_d_loss(nets["D_Y"](ay), nets["D_Y"](gx)) + plain_d_loss(nets["D_X"](ax), nets["D_X"](fy))
    mismatch = settings.mismatch  # (x_i, y_j) and (x_j, y_i), j != i: non-translations
    loss = d_loss(nets["D_Y"](bx, by), nets["D_Y"](ax, gx), nets["D_Y"](bx, my) if mismatch else None)
    if settings.bidirectional:
        loss = loss + d_loss(nets["D_X"](bx, by), nets["D_X"](fy, ay), nets["D_X"](mx, by) if mismatch else None)
    if settings.direction:
        loss = loss + plain_d_loss(nets["D_dir"](ax, gx), nets["D_dir"](fy, ay))
    return loss


def _generator_adversarial(nets, settings, adversarial, ax, ay, gx, fy):
    if not settings.pair_discriminators:
        return adversarial(nets["D_Y"](gx)) + adversarial(nets["D_X"](fy))
    loss = adversarial(nets["D_Y"](ax, gx))
    if settings.bidirectional:
        loss = loss + adversarial(nets["D_X"](fy, ay))
    if settings.direction:  # fool the direction discriminator: flipped labels
        loss = loss + adversarial(nets["D_dir"](ax, gx), target=0.0) + adversarial(nets["D_dir"](fy, ay), target=1.0)
    return loss


def split_parallel(n: int, ratio: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(parallel rows, unpaired rows) of ``range(n)``: a seeded ``ratio`` keeps its alignment, the rest is
    used as unpaired sentences on both sides. The unpaired rows are the same, in the same order, on both sides;
    nothing shuffles them: :func:`train_absent` draws its unpaired x and y batches independently, so their
    alignment is never used. Each unpaired x still has its translation among the unpaired y (comparable, not
    truly unpaired data)."""
    if not 0.0 < ratio <= 1.0:
        raise ValueError(f"parallel ratio must lie in (0, 1]; got {ratio}")
    order = np.random.default_rng(seed).permutation(n)
    k = max(2, int(round(n * ratio)))
    return np.sort(order[:k]), np.sort(order[k:])

