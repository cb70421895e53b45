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


def test_list_keys_shows_a_readable_type_for_every_key_of_every_workflow():
    """``languages`` printed ``list[Annotated[str, AfterValidator(func=<function ... at 0x...>)]]``: a checked type
    inside a list (or a dict, a union) showed its validator's repr; it shows the type it checks at any depth."""
    import re

    from interlingua.core.config import config_fields_help
    from interlingua.workflows.registry import WORKFLOWS, load_workflow

    lines = {name: config_fields_help(load_workflow(name).CONFIG) for name in WORKFLOWS}
    reprs = [(name, line) for name, keys in lines.items() for line in keys
             if re.search(r"<function|<class|Validator\(|Annotated|typing\.| at 0x|\bGt\(", line)]
    assert reprs == []
    assert "languages (list[str], default ['es'])" in lines["amr-corpus"]
    assert any(line.startswith("languages (list[str] | None, default None)") for line in lines["amr-retrofit"])
    assert any(line.startswith("train.hidden (list[int], default [512, 1024, 512])") for line in lines["absent"])
    assert any(line.startswith("variants (list[Literal['absent', 'uni-sent', 'no-mismatch', 'cgan']]")
               for line in lines["absent"])


def test_an_unknown_key_in_a_list_item_gets_the_did_you_mean_of_a_top_level_key():
    """``dumps: [{path: ...}]`` (the key is ``url``) was told only "see --list-keys": the hint looked the section up
    by field names alone, so an item of a list (or of a mapping) of sections had none."""
    from interlingua.core.config import unknown_key_hint
    from interlingua.workflows.corpus_mix import CorpusMixConfig
    from interlingua.workflows.ease_corpus import EaseCorpusConfig
    from interlingua.workflows.recipe_spec import RecipeConfig

    lines = _message(lambda: load_config(EaseCorpusConfig, None, ["dumps=[{path: /d.xml.bz2, lang: en}]"]))
    assert "  dumps.0.path: unknown key (value '/d.xml.bz2'); did you mean dumps.0.url?" in lines.splitlines()
    assert _message(lambda: load_config(EaseCorpusConfig, None, ["dumps=[{url: /d.xml.bz2, lang: en, index: /i}]"])) \
        == "invalid config (--set): dumps.0.index: unknown key (value '/i'); did you mean dumps.0.index_url?"
    assert unknown_key_hint(CorpusMixConfig, ("sources", 1, "row")) == "; did you mean sources.1.rows?"
    assert unknown_key_hint(RecipeConfig, ("stages", "tr", "workflw")) == "; did you mean stages.tr.workflow?"
