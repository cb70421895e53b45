"""Names that become folders follow one safe-name rule, checked when the config is loaded (before Ray)."""

import pytest

from interlingua.core.config import ConfigError, load_config
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
