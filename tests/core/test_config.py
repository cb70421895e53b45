"""Typed configs: YAML + ``--set`` layering, errors naming key / value / expectation; runtime defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from interlingua.core.config import (
    Config,
    ConfigError,
    apply_overrides,
    config_fields_help,
    load_config,
    parse_override,
    read_yaml,
    validate,
)
from interlingua.core.errors import UserError


class TrainSection(Config):
    lr: float = Field(1e-3, gt=0, description="learning rate")
    steps: int = Field(10, ge=1)


class ExampleConfig(Config):
    name: str = "demo"
    languages: list[str] = Field(default_factory=lambda: ["en"])
    train: TrainSection = Field(default_factory=TrainSection)


def write_yaml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- parse_override / apply_overrides -------------------------------------------------------------

@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("train.lr=1e-4", (["train", "lr"], 1e-4)),  # YAML 1.1 alone would give the string "1e-4"
        ("scale=-2E+3", (["scale"], -2000.0)),
        ("tag='1e5'", (["tag"], "1e5")),  # quoted: stays a string
        ("steps=3", (["steps"], 3)),
        ("flag=true", (["flag"], True)),
        ("langs=[en, es]", (["langs"], ["en", "es"])),
        ("name=", (["name"], "")),
        ("expr=a=b", (["expr"], "a=b")),
    ],
)
def test_parse_override_gives_yaml_scalar_types(item, expected):
    assert parse_override(item) == expected


@pytest.mark.parametrize("item", ["no_equals_sign", "=value", "  =1"])
def test_parse_override_without_key_is_a_config_error(item):
    with pytest.raises(ConfigError, match="key=value"):
        parse_override(item)


def test_apply_overrides_sets_nested_keys_without_mutating_the_input():
    data = {"train": {"lr": 0.1, "steps": 5}, "name": "x"}
    out = apply_overrides(data, ["train.lr=0.5", "extra.deep.key=1"])
    assert out == {"train": {"lr": 0.5, "steps": 5}, "name": "x", "extra": {"deep": {"key": 1}}}
    assert data == {"train": {"lr": 0.1, "steps": 5}, "name": "x"}


# --- load_config layering ------------------------------------------------------------------------

def test_defaults_when_no_file_and_no_overrides():
    config = load_config(ExampleConfig)
    assert config == ExampleConfig()
    assert config.train.lr == 1e-3


def test_yaml_then_overrides_later_layer_wins(tmp_path):
    path = write_yaml(tmp_path / "c.yaml", "name: from-yaml\ntrain:\n  lr: 0.01\n  steps: 7\n")
    config = load_config(ExampleConfig, path, ["train.steps=42", "languages=[en, es, de]"])
    assert config.name == "from-yaml"
    assert config.train.lr == 0.01
    assert config.train.steps == 42
    assert config.languages == ["en", "es", "de"]


def test_yaml_is_read_through_fsspec_urls(tmp_path):
    path = write_yaml(tmp_path / "c.yaml", "name: via-url\n")
    assert load_config(ExampleConfig, path.as_uri()).name == "via-url"


def test_empty_yaml_file_means_defaults(tmp_path):
    path = write_yaml(tmp_path / "empty.yaml", "")
    assert load_config(ExampleConfig, path) == ExampleConfig()


# --- errors --------------------------------------------------------------------------------------

def test_bad_override_value_names_key_value_and_expectation():
    with pytest.raises(ConfigError) as info:
        load_config(ExampleConfig, None, ["train.steps=abc"])
    message = str(info.value)
    assert "train.steps" in message
    assert "'abc'" in message
    assert "integer" in message  # what was expected


def test_out_of_range_value_names_the_bound():
    with pytest.raises(ConfigError) as info:
        load_config(ExampleConfig, None, ["train.lr=-1"])
    assert "train.lr = -1" in str(info.value)
    assert "greater than 0" in str(info.value)


def test_unknown_key_is_an_error_naming_the_key_and_value(tmp_path):
    path = write_yaml(tmp_path / "c.yaml", "train:\n  lrr: 0.1\n")
    with pytest.raises(ConfigError) as info:
        load_config(ExampleConfig, path)
    message = str(info.value)
    assert "train.lrr" in message and "unknown key" in message and "0.1" in message
    assert str(path) in message  # the source is named


@pytest.mark.parametrize("yaml_text, shown", [
    ("api_token: s3cr3tVALUE\n", "api_token (value not shown, the key names a credential): unknown key"),
    ("train:\n  client_secret: s3cr3tVALUE\n", "train.client_secret (value not shown, the key names a credential)"),
    ("storage_options:\n  key: AKIA\n  secret: s3cr3tVALUE\n", "storage_options (value not shown, it carries a credential)"),
    ("extra: http://alice:s3cr3tVALUE@h/x\n", "extra (value not shown, it carries a credential): unknown key"),
    ("name: ['https://h/x?token=s3cr3tVALUE']\n", "name (value not shown, it carries a credential): Input should be"),
    ("train:\n  steps: 'password=s3cr3tVALUE'\n", "train.steps (value not shown, it carries a credential)"),
])
def test_a_validation_error_never_shows_a_credential(tmp_path, yaml_text, shown):
    """``-c FILE`` with a secret-named unknown key printed ``(value '…')``, which the console's masking misses; a
    value that carries a credential is not shown either (the key and the problem are)."""
    from interlingua.core.redact import redact_text

    with pytest.raises(ConfigError) as info:
        load_config(ExampleConfig, write_yaml(tmp_path / "c.yaml", yaml_text))
    message = str(info.value)
    assert "s3cr3tVALUE" not in message and shown in message and "\n" not in message
    assert redact_text(message) == message  # nothing the console would mangle (``api_token: unknown`` was)


def test_every_bad_key_is_listed_in_one_error():
    with pytest.raises(ConfigError) as info:
        load_config(ExampleConfig, None, ["train.steps=0", "name=[1, 2]", "bogus=1"])
    message = str(info.value)
    for key in ("train.steps", "name", "bogus"):
        assert key in message


def test_invalid_yaml_and_non_mapping_yaml_are_config_errors(tmp_path):
    broken = write_yaml(tmp_path / "broken.yaml", "a: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(ExampleConfig, broken)
    listing = write_yaml(tmp_path / "list.yaml", "- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(ExampleConfig, listing)


def test_config_error_is_a_user_error_and_a_value_error():
    assert issubclass(ConfigError, UserError)
    assert issubclass(ConfigError, ValueError)


def test_assignment_is_validated():
    config = ExampleConfig()
    with pytest.raises(ValueError):
        config.train.steps = 0  # type: ignore[assignment]


def test_fields_help_lists_nested_keys_with_types_defaults_and_descriptions():
    lines = config_fields_help(ExampleConfig)
    assert "name (str, default 'demo')" in lines
    assert "train.lr (float, default 0.001)  learning rate" in lines
    assert any(line.startswith("train.steps (int, default 10)") for line in lines)
    assert any(line.startswith("languages (") and "['en']" in line for line in lines)


# --- runtime defaults ----------------------------------------------------------------------------

def test_state_dir_from_env_then_override(tmp_path, monkeypatch):
    from interlingua.core.runtime import state_dir

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    assert state_dir() == (tmp_path / "home").resolve()
    assert (tmp_path / "home").is_dir()
    assert state_dir(tmp_path / "explicit") == (tmp_path / "explicit").resolve()


def test_state_dir_default_is_dot_interlingua_in_cwd(tmp_path, monkeypatch):
    from interlingua.core.runtime import state_dir

    monkeypatch.delenv("INTERLINGUA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert state_dir() == (tmp_path / ".interlingua").resolve()


def test_tracking_target_defaults_to_sqlite_under_state_dir(tmp_path, monkeypatch):
    from interlingua.core.runtime import tracking_target

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    target = tracking_target(tmp_path)
    assert target.tracking_uri == f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert target.artifact_location == (tmp_path / "mlartifacts").as_uri()


def test_tracking_target_honours_mlflow_tracking_uri(tmp_path, monkeypatch):
    from interlingua.core.runtime import tracking_target

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow.example:5000")
    target = tracking_target(tmp_path)
    assert target.tracking_uri == "http://mlflow.example:5000"
    assert target.artifact_location is None


def test_the_local_store_exported_earlier_keeps_its_artifact_folder(tmp_path, monkeypatch):
    """``use_tracking_store`` exports the local store as MLFLOW_TRACKING_URI (for Ray workers); a later call in the
    process took it for the user's and gave no artifact folder, so experiments were created with MLflow's default,
    ``./mlruns`` in the working directory (where ``gc`` never looks)."""
    import mlflow

    from interlingua.core.runtime import OWN_TRACKING_URI, configure_mlflow, tracking_target, use_tracking_store

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv(OWN_TRACKING_URI, raising=False)
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state"
    try:
        use_tracking_store(state)  # e.g. eval resolving models:/ before a workflow's run
        assert tracking_target().artifact_location == (state / "mlartifacts").as_uri()
        configure_mlflow("later", state)
        assert mlflow.get_experiment_by_name("later").artifact_location == (state / "mlartifacts").as_uri()
        monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'user.db'}")  # the user's own: untouched
        assert tracking_target().artifact_location is None
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)


def test_device_plan_cpu_is_gloo_fp32_and_gpu_is_nccl_bf16():
    from interlingua.core.runtime import DevicePlan, device_plan

    assert device_plan(use_gpu=False) == DevicePlan(False, "gloo", "fp32")
    assert device_plan(use_gpu=True) == DevicePlan(True, "nccl", "bf16")


def test_device_plan_auto_follows_torch_without_ray():
    import torch

    from interlingua.core.runtime import device_plan

    plan = device_plan()
    assert plan.use_gpu == torch.cuda.is_available()
    if not plan.use_gpu:
        assert (plan.backend, plan.precision) == ("gloo", "fp32")


def test_partial_section_override_keeps_the_workflows_section_defaults():
    """`--set train.max_steps=50` on the quickstart keeps the quickstart's own training settings."""
    from interlingua.core.config import load_config
    from interlingua.workflows.quickstart import QuickstartConfig

    default = QuickstartConfig().train
    changed = load_config(QuickstartConfig, overrides=["train.max_steps=50", "train.batch_size=32"]).train
    assert (changed.max_steps, changed.batch_size) == (50, 32)
    assert changed.freeze_embeddings is True and default.freeze_embeddings is True  # TrainConfig's default is False
    assert changed.model_dump(exclude={"max_steps", "batch_size"}) == default.model_dump(exclude={"max_steps", "batch_size"})


def test_partial_section_in_yaml_is_merged_and_still_validated(tmp_path):
    from interlingua.core.config import ConfigError, load_config
    from interlingua.workflows.quickstart import QuickstartConfig

    path = tmp_path / "cfg.yaml"
    path.write_text("train:\n  lr: 1.0e-4\n")
    config = load_config(QuickstartConfig, path, overrides=["train.warmup_steps=5"])
    assert (config.train.lr, config.train.warmup_steps, config.train.max_steps) == (1e-4, 5, QuickstartConfig().train.max_steps)
    with pytest.raises(ConfigError, match=r"train\.batch_size = 1"):
        load_config(QuickstartConfig, overrides=["train.batch_size=1"])


def test_list_keys_shows_the_workflows_section_defaults():
    from interlingua.core.config import config_fields_help
    from interlingua.workflows.quickstart import QuickstartConfig

    lines = config_fields_help(QuickstartConfig)
    assert any(line.startswith("train.freeze_embeddings (bool, default True)") for line in lines)
    assert any(line.startswith(f"train.max_steps (int, default {QuickstartConfig().train.max_steps})") for line in lines)


def test_flatten_params_dots_nested_keys_and_keeps_leaves():
    from interlingua.core.params import flatten

    assert flatten({"model": "m", "train": {"lr": 1e-4, "zero": {"stage": 1}}, "langs": ["en", "es"]}) == {
        "model": "m", "train.lr": 1e-4, "train.zero.stage": 1, "langs": ["en", "es"]}


def test_one_problem_is_one_line_and_a_cross_key_check_shows_its_message():
    """The rule is one line per mistake: a single problem used to take two (a header, then the key), and a check
    across keys printed ``   = {every value}: Value error, ...``."""
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig

    with pytest.raises(ConfigError) as info:
        load_config(BitextCorpusConfig, None, ["max_tokens=0"])
    assert str(info.value) == "invalid config (--set): max_tokens = 0: Input should be greater than or equal to 1"
    with pytest.raises(ConfigError) as info:
        load_config(BitextCorpusConfig, None, ["format=text", "source=x"])
    assert str(info.value).startswith("invalid config (--set): format text needs target")
    assert "\n" not in str(info.value) and "{" not in str(info.value)



@pytest.mark.parametrize("config_class, key", [
    ("interlingua.trainers.engine.config:TrainConfig", "lr"),
    ("interlingua.trainers.engine.config:TrainConfig", "weight_decay"),
    ("interlingua.trainers.engine.config:TrainConfig", "gradient_clipping"),
    ("interlingua.workflows.absent:AbsentTrainConfig", "lr"),
    ("interlingua.workflows.amr_corpus:AmrCorpusConfig", "translate_gpus"),
])
@pytest.mark.parametrize("value", [float("inf"), "inf", float("nan")])
def test_every_config_float_must_be_finite(config_class, key, value):
    """``lr: .inf`` passed ``gt=0`` (and ``weight_decay: .inf`` ``ge=0``) and failed inside the optimizer."""
    import importlib

    from pydantic import ValidationError

    module, name = config_class.split(":")
    cls = getattr(importlib.import_module(module), name)
    with pytest.raises(ValidationError, match=rf"{key}\n  Input should be a finite number"):
        cls.model_validate({key: value})


class _Numbers(Config):
    count: int = 1
    rate: float = Field(0.5, gt=0)
    limit: float | None = None
    flag: bool = False
    either: int | str = 1


@pytest.mark.parametrize("key", ["count", "rate", "limit"])
@pytest.mark.parametrize("value", [True, False])
def test_a_bool_is_not_a_number(key, value):
    """pydantic reads ``max_steps: true`` as 1 and ``lr: false`` as 0.0; a number field refuses a bool, named."""
    with pytest.raises(ConfigError) as info:
        validate(_Numbers, {key: value}, source="c.yaml")
    assert str(info.value) == f"invalid config (c.yaml): {key} = {value!r}: {key} must be a number, got {value!r}"
    with pytest.raises(ValueError, match=f"{key} must be a number, got True"):
        _Numbers().__setattr__(key, True)  # an assignment too
    assert validate(_Numbers, {key: 2}).model_dump()[key] == 2  # numbers still pass; ints become floats where asked


def test_a_bool_still_fills_bool_fields_and_mixed_unions():
    assert validate(_Numbers, {"flag": True, "either": True}).model_dump() == {
        "count": 1, "rate": 0.5, "limit": None, "flag": True, "either": True}


@pytest.mark.parametrize("config_class, key", [
    ("interlingua.trainers.engine.config:TrainConfig", "lr"),
    ("interlingua.trainers.engine.config:TrainConfig", "max_steps"),
    ("interlingua.trainers.engine.config:TrainConfig", "grad_cache_chunk"),
    ("interlingua.workflows.bitext_corpus:BitextCorpusConfig", "sample_fraction"),
])
def test_workflow_configs_refuse_a_bool_for_a_number(config_class, key):
    import importlib

    module, name = config_class.split(":")
    with pytest.raises(ConfigError, match=rf"{key} = True: {key} must be a number, got True"):
        validate(getattr(importlib.import_module(module), name), {key: True})


@pytest.mark.parametrize("text, line, first", [
    ("name: x\ntrain:\n  lr: 0.1\n  steps: 3\n  lr: 0.2\n", 5, 3),
    # a merge key lets a written key override a merged one, not one written twice: that stays a typo
    ("base: &b {steps: 2}\nname: x\ntrain:\n  lr: 0.1\n  lr: 0.2\n  <<: *b\n", 5, 4),
])
def test_a_key_given_twice_in_a_file_is_refused_with_both_lines(tmp_path, text, line, first):
    """PyYAML keeps the last of two equal keys silently: ``corpus: a`` then ``corpus: b`` trained on b."""
    path = write_yaml(tmp_path / "c.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_config(ExampleConfig, path)
    assert str(info.value) == f"{path}, line {line}: key 'lr' is given twice (first on line {first}); YAML keeps only " \
                              "the last, so remove one"
    merged = write_yaml(tmp_path / "m.yaml", "base: &b {lr: 0.1}\ntrain:\n  <<: *b\n  lr: 0.3\n")  # a merge overrides
    assert read_yaml(merged) == {"base": {"lr": 0.1}, "train": {"lr": 0.3}}


def test_a_mapping_only_ever_merged_is_checked_too(tmp_path):
    inside = write_yaml(tmp_path / "i.yaml", "a: &a {lr: 1}\ntrain:\n  <<: {<<: *a, steps: 1, steps: 2}\n")
    with pytest.raises(ConfigError, match=r"i\.yaml, line 3: key 'steps' is given twice \(first on line 3\)"):
        read_yaml(inside)


def test_two_merge_keys_in_one_mapping_are_refused_with_the_list_spelling(tmp_path):
    path = write_yaml(tmp_path / "c.yaml", "a: &a {lr: 0.1}\nb: &b {steps: 2}\ntrain:\n  <<: *a\n  <<: *b\n")
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert str(info.value) == f"{path}, line 5: key '<<' is given twice (first on line 4); merge several mappings " \
                              "with one: <<: [*a, *b]"


def test_a_written_key_overrides_merged_ones_at_every_level(tmp_path):
    path = write_yaml(tmp_path / "c.yaml", "a: &a {lr: 0.1, steps: 1}\n"
                                           "b: &b {<<: *a, steps: 2}\n"         # b overrides a's steps
                                           "train: {<<: [*b, *a], lr: 0.3}\n"    # b's keys win over a's, lr over both
                                           "nested: {<<: &c {<<: *b, lr: 0.5}, steps: 9}\n")
    assert read_yaml(path) == {"a": {"lr": 0.1, "steps": 1}, "b": {"lr": 0.1, "steps": 2},
                               "train": {"lr": 0.3, "steps": 2}, "nested": {"lr": 0.5, "steps": 9}}


def test_a_dotted_key_in_a_file_gets_the_nested_spelling():
    with pytest.raises(ConfigError, match=r"train\.lr: unknown key \(value 0\.1\); the dotted spelling is --set's: in a "
                                          r"file, nest it: train: \{lr: …\}$"):
        validate(ExampleConfig, {"train.lr": 0.1}, source="c.yaml")
    with pytest.raises(ConfigError, match=r"nest it: train: \{options: \{x: …\}\}"):
        validate(ExampleConfig, {"train.options.x": 1}, source="c.yaml")
    with pytest.raises(ConfigError, match=r"traine: unknown key .*did you mean train\?"):  # an undotted one as before
        validate(ExampleConfig, {"traine": 1}, source="c.yaml")
    with pytest.raises(ConfigError, match=r"foo\.bar: unknown key \(value 1\); see --list-keys$"):  # no section foo
        validate(ExampleConfig, {"foo.bar": 1}, source="c.yaml")


def test_no_repeats_names_each_repeated_item_once():
    from interlingua.core.config import no_repeats

    assert no_repeats([3, 1, 2]) == [3, 1, 2]
    with pytest.raises(ValueError, match=r"^1 is given more than once; give each once$"):
        no_repeats([1, 2, 1, 1])
    with pytest.raises(ValueError, match=r"^'a', 'b' are given more than once"):
        no_repeats(["a", "b", "a", "b"])


def test_a_key_left_out_on_purpose_says_why_and_what_to_set():
    """train.gradient_accumulation_steps was refused with "did you mean train.gradient_clipping?": accumulation adds
    no in-batch negatives, so the engine has no such key; the hint now says so and names grad_cache_chunk."""
    from interlingua.workflows.train import TrainWorkflowConfig

    with pytest.raises(ConfigError, match=r"train\.gradient_accumulation_steps: unknown key \(value 4\); gradient "
                                          r"accumulation adds no in-batch negatives .* set grad_cache_chunk"):
        load_config(TrainWorkflowConfig, None, ["corpus=x", "train.gradient_accumulation_steps=4"])
    with pytest.raises(ConfigError, match=r"train\.epochs: unknown key \(value 2\); training length is max_steps"):
        load_config(TrainWorkflowConfig, None, ["corpus=x", "train.epochs=2"])
    with pytest.raises(ConfigError, match=r"train\.lrr: unknown key \(value 2\); did you mean train\.lr\?"):
        load_config(TrainWorkflowConfig, None, ["corpus=x", "train.lrr=2"])
