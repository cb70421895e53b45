"""Training of the disentanglement heads over cached frozen embeddings (no text is encoded here).

Per step: a batch of parallel pairs (a, b) and, for each pair, one random sentence c of a's language and d
of b's language, drawn from every training sentence of that language. All languages are mixed in one model.
Adam, early stopping on the loss of the validation pairs (fixed random c, d, so the curve is comparable
across epochs) with ``patience`` epochs; the best epoch's weights are returned (Tiyajamorn et al. 2021:
batch 512, lr 1e-4, patience 15, 10 % validation split)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from interlingua.trainers.disentangle.model import DisentangleModel
from interlingua.trainers.disentangle.objective import DisentangleObjective, LossTerms


@dataclass(frozen=True)
class DisentangleSettings:
    batch_size: int = 512
    lr: float = 1e-4
    max_epochs: int = 300
    patience: int = 15
    seed: int = 0
    activation: str = "identity"
    distance: str = "squared_l2"
    terms: LossTerms = field(default_factory=LossTerms)


@dataclass
class PairEmbeddings:
    """Frozen embeddings of aligned pairs and the language id (index into ``languages``) of each side."""

    src: np.ndarray
    tgt: np.ndarray
    src_lang: np.ndarray
    tgt_lang: np.ndarray

    def __post_init__(self):
        n = len(self.src)
        if not (len(self.tgt) == len(self.src_lang) == len(self.tgt_lang) == n):
            raise ValueError("src, tgt and their language ids must have one row per pair")
        if self.src.shape != self.tgt.shape:
            raise ValueError(f"src and tgt embeddings differ in shape: {self.src.shape} vs {self.tgt.shape}")
        if np.any(self.src_lang == self.tgt_lang):
            raise ValueError("a pair has both sides in the same language")

    def __len__(self) -> int:
        return len(self.src)

    def rows(self, index: np.ndarray) -> "PairEmbeddings":
        return PairEmbeddings(self.src[index], self.tgt[index], self.src_lang[index], self.tgt_lang[index])


@dataclass
class DisentangleResult:
    model: DisentangleModel
    history: list[dict[str, float]]  # one row per epoch: epoch, train_<term>, train_loss, val_<term>, val_loss
    best_epoch: int
    stopped_early: bool


class LanguagePools:
    """Every training sentence of each language (both sides), to draw the random same-language c and d."""

    def __init__(self, pairs: PairEmbeddings, num_languages: int, min_size: int, names: list[str] | None = None):
        self.dim = pairs.src.shape[1]
        vectors = np.concatenate([pairs.src, pairs.tgt])
        langs = np.concatenate([pairs.src_lang, pairs.tgt_lang])
        self.pools = [vectors[langs == k] for k in range(num_languages)]
        place = np.empty(len(langs), dtype=np.int64)  # each training sentence's row in its language's pool
        for k in range(num_languages):
            rows = np.flatnonzero(langs == k)
            place[rows] = np.arange(len(rows))
        #: pool rows of the training pairs' source and target sentences (what :meth:`draw` must not return)
        self.src_rows, self.tgt_rows = place[:len(pairs.src)], place[len(pairs.src):]
        for k, pool in enumerate(self.pools):
            if 0 < len(pool) < max(min_size, 2):
                name = names[k] if names else str(k)
                raise ValueError(f"language {name!r} has {len(pool)} training sentences, fewer than a batch ({min_size}) "
                                 "or than 2 (a sentence and another to draw); add data or lower batch_size")

    def draw(self, langs: np.ndarray, rng: np.random.Generator, own: np.ndarray | None = None) -> np.ndarray:
        """One random sentence of each language in ``langs``; ``own`` (pool rows of the sentences themselves,
        :attr:`src_rows` / :attr:`tgt_rows` of a training batch) excludes each sentence from its own draw
        (uniform over the pool's other sentences). None: the whole pool (sentences outside the training pools)."""
        out = np.empty((len(langs), self.dim), dtype=np.float32)
        for k in np.unique(langs):
            rows = np.flatnonzero(langs == k)
            if own is None:
                picks = rng.integers(0, len(self.pools[k]), size=len(rows))
            else:
                picks = rng.integers(0, len(self.pools[k]) - 1, size=len(rows))
                picks += picks >= own[rows]  # skip the sentence's own row
            out[rows] = self.pools[k][picks]
        return out


def train_disentangle(train: PairEmbeddings, validation: PairEmbeddings, languages: list[str],
                      settings: DisentangleSettings = DisentangleSettings(),
                      on_epoch: Callable[[dict[str, float]], None] | None = None) -> DisentangleResult:
    if len(train) == 0 or len(validation) == 0:
        raise ValueError(f"need training and validation pairs; got {len(train)} and {len(validation)}")
    for array, what in ((train.src, "train src"), (train.tgt, "train tgt"), (validation.src, "validation src"),
                        (validation.tgt, "validation tgt")):
        if not np.isfinite(array).all():
            raise ValueError(f"{what} embeddings hold NaN or inf; reject those pairs before training")
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    pools = LanguagePools(train, len(languages), settings.batch_size, languages)
    model = DisentangleModel(train.src.shape[1], len(languages), settings.activation)
    objective = DisentangleObjective(settings.terms, settings.distance)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    val_rng = np.random.default_rng(settings.seed + 1_000_003)
    val_c, val_d = pools.draw(validation.src_lang, val_rng), pools.draw(validation.tgt_lang, val_rng)

    history, best, best_state, best_epoch, waited = [], math.inf, None, 0, 0
    for epoch in range(1, settings.max_epochs + 1):
        model.train()
        order = rng.permutation(len(train))
        sums: dict[str, float] = {}
        for start in range(0, len(order), settings.batch_size):
            chosen = order[start:start + settings.batch_size]
            batch = train.rows(chosen)
            c = pools.draw(batch.src_lang, rng, own=pools.src_rows[chosen])
            d = pools.draw(batch.tgt_lang, rng, own=pools.tgt_rows[chosen])
            terms = objective.terms(model, *_tensors(batch.src, batch.tgt, c, d), *_ids(batch))
            loss = sum(terms.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for name, value in terms.items():
                sums[name] = sums.get(name, 0.0) + value.item() * len(batch)
        row = {"epoch": float(epoch), **{f"train_{k}": v / len(train) for k, v in sums.items()}}
        row["train_loss"] = sum(v for k, v in row.items() if k.startswith("train_"))
        model.eval()
        with torch.no_grad():
            terms = objective.terms(model, *_tensors(validation.src, validation.tgt, val_c, val_d), *_ids(validation))
        row.update({f"val_{k}": float(v) for k, v in terms.items()})
        row["val_loss"] = float(sum(terms.values()))
        history.append(row)
        if on_epoch:
            on_epoch(row)
        if row["val_loss"] < best:
            best, best_epoch, waited = row["val_loss"], epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            waited += 1
            if waited >= settings.patience:
                break
    model.load_state_dict(best_state)
    model.eval()
    return DisentangleResult(model, history, best_epoch, stopped_early=len(history) < settings.max_epochs)


def _tensors(*arrays: np.ndarray) -> list[torch.Tensor]:
    return [torch.as_tensor(a, dtype=torch.float32) for a in arrays]


def _ids(pairs: PairEmbeddings) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(pairs.src_lang, dtype=torch.long), torch.as_tensor(pairs.tgt_lang, dtype=torch.long)
