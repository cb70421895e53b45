"""Names that become folders follow one safe-name rule, checked when the config is loaded (before Ray)."""

import pytest

from interlingua.core.config import ConfigError, load_config, validate
from interlingua.core.errors import UserError
from interlingua.core.names import check_name, name_problem


@pytest.mark.parametrize("name", ["bible-en-es", "v1.2_final", "A", "x" * 128])
def test_safe_names_pass(name):
    assert name_problem(name) == "" and check_name(name) == name


@pytest.mark.parametrize("name", ["../../evil", "a/b", "..", ".hidden", "-x", "a..b", "", "x" * 129, "latest",
                                  "a b", "a\\b", "név", 3])
def test_unsafe_names_are_refused(name):
    assert name_problem(name)
    with pytest.raises(UserError, match="corpus_name"):
        check_name(name, "corpus_name")


@pytest.mark.parametrize("workflow, key", [("bitext_corpus", "corpus_name"), ("quickstart", "corpus_name"),
                                           ("amr_corpus", "corpus_name"), ("ease_corpus", "name"),
                                           ("quickstart", "experiment")])
def test_workflow_configs_refuse_path_like_names_at_load(workflow, key):
    import importlib

    module = importlib.import_module(f"interlingua.workflows.{workflow}")
    with pytest.raises(ConfigError, match=rf"{key} = '\.\./\.\./evil': .*not a safe name"):
        load_config(module.CONFIG, None, [f"{key}=../../evil"])


@pytest.mark.parametrize("code", ["en", "es", "zh", "yue", "pt-BR", "zh-Hant", "sr_Latn", "zh-min-nan"])
def test_language_codes_pass(code):
    from interlingua.core.names import language_problem

    assert language_problem(code) == ""


@pytest.mark.parametrize(("code", "hint"), [("english", ""), ("EN", "(lowercase: 'en')"), ("", ""), ("en es", ""),
                                            ("e", ""), ("en-", ""), ("Es-MX", "(lowercase: 'es-mx')")])
def test_what_is_not_a_language_code_is_refused_with_the_rule(code, hint):
    from interlingua.core.names import language_problem

    assert language_problem(code) == (f"{code!r} is not a language code{' ' + hint if hint else ''}: use an ISO 639 "
                                      "code such as en, es, zh, optionally with a region or script (pt-BR, zh-Hant)")


@pytest.mark.parametrize("name", ["interlingua-encoder", "My Encoder v2", "x" * 256, "a.b"])
def test_registered_model_names_mlflow_takes_pass(name):
    from interlingua.core.names import registered_model_problem

    assert registered_model_problem(name) == ""


@pytest.mark.parametrize("name", ["", "  ", "team/encoder", "enc:v2", ".", "..x", " lead", "x" * 257])
def test_registered_model_names_mlflow_refuses_are_refused_at_load(name):
    """MLflow refused these only at registration, after the training."""
    from interlingua.core.names import registered_model_problem

    assert "cannot name a registered model" in registered_model_problem(name)
    from interlingua.workflows.quickstart import QuickstartConfig

    with pytest.raises(ConfigError, match="registered_model = .*cannot name a registered model"):
        validate(QuickstartConfig, {"registered_model": name}, source="t")
