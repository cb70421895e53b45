"""Checks on the driver before Ray Train starts: the dataset has the objective's columns, the encoder can serve
the objective (e.g. has the layer asked for); and the objective class can travel to the workers."""

from __future__ import annotations

import sys

from interlingua.core.errors import UserError
from interlingua.trainers.engine.config import TrainConfig


class TrainingInputError(UserError, ValueError):
    """A dataset or model that cannot be trained with the chosen objective (found before training starts)."""


def check_before_training(model: str, train_dataset, config: TrainConfig) -> type:
    """Raise :class:`TrainingInputError` on a mismatch; return the objective class to ship to the workers."""
    objective = config.objective_class
    options = config.objective_options
    needed = list(objective.columns(options))
    have = list(train_dataset.columns())
    missing = [c for c in needed if c not in have]
    if missing:
        raise TrainingInputError(f"objective {config.objective!r} needs columns {needed}; the training dataset lacks "
                                 f"{missing} (has {have})")
    try:
        objective.check_model(options, lambda: _model_config(model))
    except ValueError as err:
        raise TrainingInputError(f"model {model!r} cannot be trained with objective {config.objective!r}: {err}") from None
    _ship_by_value(objective)
    return objective


def _model_config(model: str):
    from transformers import AutoConfig

    from interlingua.models.load import resolve_model_folder

    return AutoConfig.from_pretrained(resolve_model_folder(model))


def _ship_by_value(objective: type) -> None:
    """An objective defined outside an installed package (a script, a notebook, a test file) is pickled by value,
    so Ray Train workers need not import its module."""
    module = sys.modules.get(objective.__module__)
    if module is None or objective.__module__.startswith("interlingua.") or objective.__module__ == "__main__":
        return
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(module)
