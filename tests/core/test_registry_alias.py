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


#: Aliases on each side of MLflow's rule: its characters (any script's letters and digits, '_', '-'), its length,
#: its reserved names, and what the safe-name rule took or refused otherwise ('.', a leading '_' or '-', 'é').
_ALIASES = ["champion", "prod.2", "cham.pion", "cham pion", "../x", "a/b", "a@b", "x\ty", "", "-x", "_x", "é", "日本",
            "ab²", "a" * 255, "a" * 256, "latest", "LaTeSt", "v1", "V12", "v١", "v1beta", "prod_2", "meaning-head"]


def _mlflow_refuses(alias: str) -> bool:
    """Whether MLflow's own checks (the installed version's) refuse ``alias`` when it is set."""
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import _validate_model_alias_name, _validate_model_alias_name_reserved

    try:
        _validate_model_alias_name(alias)
        _validate_model_alias_name_reserved(alias)
    except MlflowException:
        return True
    return False


@pytest.mark.parametrize("alias", _ALIASES)
def test_the_alias_rule_is_mlflow_s(alias):
    """'prod.2' passed the safe-name rule and was refused by MLflow when set (after a promotion's evaluation); '-x',
    '_x' and 'é', which MLflow takes, were refused."""
    assert bool(alias_problem(alias)) == _mlflow_refuses(alias)


def test_a_trailing_newline_is_refused_though_mlflow_s_pattern_lets_it_through():
    assert not _mlflow_refuses("champion\n") and alias_problem("champion\n")


@pytest.mark.parametrize("alias", ["cham pion", "cham.pion", "../x", ""])
def test_the_refusal_lists_exactly_the_characters_the_rule_takes(alias):
    """'cham pion' was told '.' is allowed, then 'cham.pion' was refused for its '.'."""
    assert alias_problem(alias) == (f"{alias!r} is not a registry alias: use letters and digits (any script), '_' and "
                                    "'-', 1 to 255 characters (MLflow's rule)")


@pytest.mark.parametrize("workflow", ["train", "meaning-head", "interpolate", "quickstart", "amr-retrofit"])
def test_workflow_configs_refuse_a_reserved_alias_at_load(workflow):
    from interlingua.workflows.registry import load_workflow

    config = load_workflow(workflow).CONFIG
    required = {"train": {"corpus": "c"}, "interpolate": {"second": "models:/m/1"}}.get(workflow, {})
    assert config.model_validate(required).alias not in ("latest",)  # the defaults are valid aliases
    with pytest.raises(ConfigError, match="alias = 'latest'.*reserved by the MLflow registry"):
        validate(config, {**required, "alias": "latest"}, source="test")
