"""What an objective is to the training engine: one object declaring what it needs per batch and computing
its loss. The engine (``trainers/engine``) never names an objective; it only calls this interface.

An :class:`Objective` is an ``nn.Module``. The engine puts it inside the DeepSpeed module next to the encoder,
so its own parameters (EASE's entity table, a projection head, a linear map) are trained, all-reduced and
checkpointed with the encoder's. Per batch (a dict of numpy columns of this worker's rows) it returns
:class:`Views`: one feature dict per view, built with the engine's :class:`ViewMaker`:

* ``make.text(texts)`` — sentences, encoded and pooled by the encoder (its own pooling and prompt);
* ``make.words(rows_of_words)`` then ``.at(positions)`` — token-level views: the hidden states of layer
  :attr:`Objective.token_layer` at the given positions (e.g. the first subwords of aligned words);
* ``make.module(name, tensor)`` — a tensor fed to the objective's submodule ``name`` (e.g. entity rows).

:meth:`Objective.loss` maps the list of view embeddings (this worker's; gather across workers with
``interlingua.trainers.distributed.gather``) to a scalar. GradCache splits every view along dim 0, so a view's
tensors share their first dimension; a token-level view may return a different number of vectors than it has
rows. Counters (rows or pairs dropped, with their reason) are summed over workers and logged as metrics.

Options are a typed :class:`ObjectiveOptions` (``Options``); ``TrainConfig`` validates them at load and
``--list-keys`` shows them. Registration: ``interlingua.trainers.objectives.registry``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from torch import Tensor, nn

from interlingua.core.config import Config


class ObjectiveOptions(Config):
    """Base of every objective's options (unknown keys are errors)."""


class ViewMaker(Protocol):
    """Built by the engine for each batch: tensors on the worker's device, tokenized with the encoder's
    tokenizer at the training length."""

    def text(self, texts: Sequence[str]) -> dict[str, Tensor]: ...

    def words(self, words: Sequence[Sequence[str]]): ...  # -> models.token_vectors.TokenizedWords (on device)

    def module(self, name: str, inputs: Tensor) -> dict[str, Tensor]: ...


@dataclass
class Views:
    """One feature dict per view, in the order :meth:`Objective.loss` takes them, and counters."""

    tensors: list[dict[str, Tensor]]
    counters: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ObjectiveSetup:
    """What an objective may use when it is built on a worker."""

    encoder: nn.Module          # the SentenceEncoder being trained (dim, transformer, tokenizer)
    seed: int = 42              # same on every worker: initialise own parameters identically
    world_size: int = 1
    group: Any = None           # process group for cross-worker negatives (None: world)

    @property
    def dim(self) -> int:
        return int(self.encoder.dim)


class Objective(nn.Module):
    """Base class. Subclasses set :attr:`name`, :attr:`Options`, and either :attr:`text_columns` (one text
    view per column, then ``criterion(*embeddings)``) or override :meth:`views` / :meth:`loss`."""

    name: ClassVar[str]
    Options: ClassVar[type[ObjectiveOptions]] = ObjectiveOptions
    #: one text view per column, in loss order (the default :meth:`views`)
    text_columns: ClassVar[tuple[str, ...]] = ()
    #: names of the counters :meth:`views` returns (every worker logs the same ones)
    counter_names: ClassVar[tuple[str, ...]] = ()
    #: False: the encoder is frozen (only the objective's own parameters train)
    trains_encoder: ClassVar[bool] = True
    #: False: parameters used outside the engine's forward (a head in the loss) rule out ZeRO 3
    supports_zero3: ClassVar[bool] = True
    #: hidden-state layer of token-level views (None: the last)
    token_layer: int | None = None
    #: True: the loss contrasts each anchor with the other rows of the global batch (an in-batch softmax), which
    #: :meth:`negatives_per_anchor` counts; False (a loss of pairs alone, e.g. a distance): no negatives are claimed
    contrasts_in_batch: ClassVar[bool] = False

    def __init__(self, options: ObjectiveOptions, setup: ObjectiveSetup) -> None:
        super().__init__()
        self.options = options
        self.criterion: Callable[..., Tensor] | None = None

    # -- declarations read before training (driver side) -------------------------------------------------
    @classmethod
    def columns(cls, options: ObjectiveOptions) -> tuple[str, ...]:
        """Dataset columns the objective reads (checked before Ray Train starts)."""
        return tuple(dict.fromkeys(cls.text_columns))

    @classmethod
    def check_model(cls, options: ObjectiveOptions, model_config: Callable[[], Any]) -> None:
        """Raise ValueError when the encoder cannot serve this objective; ``model_config()`` loads its HF config."""

    # -- per step -------------------------------------------------------------------------------------
    def views(self, batch: Mapping[str, Any], make: ViewMaker) -> Views:
        return Views([make.text([str(t) for t in batch[column]]) for column in self.text_columns])

    def loss(self, embeddings: list[Tensor]) -> Tensor:
        if self.criterion is None:
            raise NotImplementedError(f"{type(self).__name__} sets neither criterion nor loss()")
        return self.criterion(*embeddings)

    def after_step(self) -> None:
        """Called after every optimizer step (e.g. re-orthogonalise a linear map)."""

    def negatives_per_anchor(self, global_batch: int) -> int:
        """In-batch candidates each anchor is contrasted with, besides its positive (a logged metric): the other
        positives, and every row's hard negative when a third text column holds them; 0 unless
        :attr:`contrasts_in_batch`."""
        if not self.contrasts_in_batch:
            return 0
        hard = global_batch if len(self.text_columns) > 2 else 0
        return global_batch - 1 + hard

    def progress_note(self, negatives: int, counters: dict[str, int]) -> str:
        """What the step's progress line says after the effective batch (``counters``: the step's, summed over
        workers); empty: nothing (an objective without in-batch negatives has no figure to show)."""
        return f"{negatives} negatives/anchor" if self.contrasts_in_batch else ""

    # -- outputs ------------------------------------------------------------------------------------------
    def save(self, folder: str | os.PathLike) -> list[str]:
        """Write what must be kept next to the encoder (rank 0, at checkpoints and at the end); return the
        file names written."""
        return []
