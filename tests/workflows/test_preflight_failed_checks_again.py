"""A command's preflight whose input check fails after this machine's check passed left that check remembered, so a
later run of the same unchanged config object in the same process skipped its own ``input_preflight``."""

from __future__ import annotations

import types

import pytest

from interlingua.core.checked_once import check_in_run
from interlingua.core.config import Config
from interlingua.core.errors import UserError
from interlingua.workflows.registry import preflight


class _Settings(Config):
    bitext: str = "bible.parquet"


def _workflow(calls: list[str], *, input_ok: list[bool]) -> types.ModuleType:
    """A workflow whose run checks the inputs only where the command's machine check does not stand, as
    quickstart, train and amr-corpus do."""
    module = types.ModuleType("fake_workflow")

    def environment_preflight(config):
        calls.append("environment")

    def input_preflight(config):
        calls.append("input")
        if not input_ok[0]:
            raise UserError(f"bitext {config.bitext} not found")

    def run(config, *, address=None):
        if check_in_run(module.environment_preflight, config):
            module.input_preflight(config)
        calls.append("run")

    module.environment_preflight, module.input_preflight, module.run = environment_preflight, input_preflight, run
    return module


def test_a_run_after_a_preflight_whose_input_check_failed_checks_the_inputs_again():
    calls: list[str] = []
    input_ok = [False]
    workflow, config = _workflow(calls, input_ok=input_ok), _Settings()
    with pytest.raises(UserError, match="bitext bible.parquet not found"):
        preflight(workflow, config)
    assert calls == ["environment", "input"]
    with pytest.raises(UserError, match="bitext bible.parquet not found"):
        workflow.run(config)
    assert calls == ["environment", "input", "environment", "input"]
    input_ok[0] = True  # a preflight that passed still stands for the run that follows it
    calls.clear()
    preflight(workflow, config)
    workflow.run(config)
    assert calls == ["environment", "input", "run"]
