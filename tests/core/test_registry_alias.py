"""Registry aliases: MLflow reserves ``latest`` (any case) and ``v<digits>``; configs refuse them at load."""

import pytest

from interlingua.core.config import ConfigError, validate
from interlingua.core.names import alias_problem


@pytest.mark.parametrize("alias", ["latest", "LATEST", "v1", "V12"])
def test_mlflow_reserved_aliases_are_refused(alias):
    assert "reserved by the MLflow registry" in alias_problem(alias)


@pytest.mark.parametrize("alias", ["champion", "meaning-head", "v1beta", "prod_2"])
def test_ordinary_aliases_pass(alias):
    assert alias_problem(alias) == ""


def test_a_dot_is_refused_as_mlflow_refuses_it():
    """MLflow's alias rule is letters, digits, '_' and '-': 'prod.2' passed the safe-name rule and was refused by MLflow
    when set (after a promotion's evaluation)."""
    import re

    from mlflow.utils.validation import _REGISTERED_MODEL_ALIAS_REGEX

    assert not re.match(_REGISTERED_MODEL_ALIAS_REGEX, "prod.2")  # MLflow's own rule, in the pinned version
    assert "not a registry alias: use letters, digits, '_' and '-'" in alias_problem("prod.2")


def test_unsafe_alias_gets_the_name_rule():
    assert "not a safe name" in alias_problem("../x")


@pytest.mark.parametrize("workflow", ["train", "meaning-head", "interpolate", "quickstart", "amr-retrofit"])
def test_workflow_configs_refuse_a_reserved_alias_at_load(workflow):
    from interlingua.workflows.registry import load_workflow

    config = load_workflow(workflow).CONFIG
    required = {"train": {"corpus": "c"}, "interpolate": {"second": "models:/m/1"}}.get(workflow, {})
    assert config.model_validate(required).alias not in ("latest",)  # the defaults are valid aliases
    with pytest.raises(ConfigError, match="alias = 'latest'.*reserved by the MLflow registry"):
        validate(config, {**required, "alias": "latest"}, source="test")
