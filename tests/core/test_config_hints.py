"""A config's mistakes are told the same way wherever the config is built: from Python, as the CLI says them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from interlingua.core.config import ConfigError, load_config
from interlingua.trainers.engine.config import TrainConfig
from interlingua.workflows.train import TrainWorkflowConfig


def _message(build) -> str:
    with pytest.raises(ConfigError) as info:
        build()
    return str(info.value)


def test_a_config_built_from_python_is_refused_in_the_clis_one_line():
    """``TrainConfig(gradient_accumulation_steps=4)`` raised pydantic's multi-line ValidationError, without the hint
    the CLI gives for the same key."""
    python = _message(lambda: TrainConfig(gradient_accumulation_steps=4))
    cli = _message(lambda: load_config(TrainConfig, None, ["gradient_accumulation_steps=4"]))
    assert "\n" not in python
    assert python.startswith("invalid config (TrainConfig): gradient_accumulation_steps: unknown key (value 4); "
                             "gradient accumulation adds no in-batch negatives")
    assert python.removeprefix("invalid config (TrainConfig)") == cli.removeprefix("invalid config (--set)")
    assert _message(lambda: TrainConfig(lr=-1)) == "invalid config (TrainConfig): lr = -1: Input should be greater than 0"
    assert _message(lambda: TrainWorkflowConfig(corpus="c", train={"lrr": 1})) == \
        "invalid config (TrainWorkflowConfig): train.lrr: unknown key (value 1); did you mean train.lr?"
    assert issubclass(ConfigError, ValueError)


def test_validation_inside_pydantic_keeps_its_validation_error():
    """Only a Python construction is told in one line: model_validate (and so a nested section) keeps pydantic's
    error with its location, which the CLI's formatting reads."""
    with pytest.raises(ValidationError) as info:
        TrainWorkflowConfig.model_validate({"corpus": "c", "train": {"lrr": 1}})
    assert [error["loc"] for error in info.value.errors()] == [("train", "lrr")]
