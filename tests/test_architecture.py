"""The import layers of pyproject.toml's import-linter contract hold, and every package is in a layer."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_is_in_exactly_one_layer():
    config = _pyproject()
    packages = set(config["tool"]["setuptools"]["package-dir"])
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    layered = [name.strip() for layer in contract["layers"] for name in layer.split("|")]
    assert sorted(layered) == sorted(packages)
    assert sorted(config["tool"]["importlinter"]["root_packages"]) == sorted(packages)


def test_import_contracts_are_kept(monkeypatch):
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, show_timings=False) == 0


#: MLflow calls that record text (params, tags, JSON/text artifacts, run names, model versions' descriptions and
#: tags): only ``core/tracking.py`` makes them, masked; everyone else calls ``tracking.<function>``.
MLFLOW_TEXT_CALLS = frozenset({
    "log_param", "log_params", "set_tag", "set_tags", "log_dict", "log_text", "log_table", "log_input", "create_run",
    "set_experiment_tag", "set_experiment_tags", "update_model_version", "set_model_version_tag",
    "set_registered_model_tag", "update_registered_model", "create_registered_model", "create_model_version",
})
TRACKING_MODULE = Path("core") / "tracking.py"


def mlflow_text_calls(source: str) -> list[tuple[int, str]]:
    """``(line, call)`` of every call of :data:`MLFLOW_TEXT_CALLS` in ``source`` not made on the ``tracking`` module,
    and of ``log_batch`` with ``params=`` or ``tags=``."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, owner = node.func.attr, node.func.value
        through_tracking = isinstance(owner, ast.Name) and owner.id == "tracking"
        if name in MLFLOW_TEXT_CALLS and not through_tracking:
            found.append((node.lineno, f"{ast.unparse(node.func)}(...)"))
        elif name == "log_batch" and {k.arg for k in node.keywords} & {"params", "tags"}:
            found.append((node.lineno, f"{ast.unparse(node.func)}(params/tags=...)"))
    return found


def test_text_reaches_mlflow_only_through_the_masking_tracking_module():
    """A new call site that logs params, tags or text to MLflow directly would skip ``core.redact``'s masking:
    every package file but ``core/tracking.py`` goes through ``interlingua.core.tracking``."""
    folders = sorted(set(_pyproject()["tool"]["setuptools"]["package-dir"].values()))
    offenders = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative != TRACKING_MODULE:
                offenders += [f"{relative}:{line}: {call}" for line, call in mlflow_text_calls(path.read_text())]
    assert offenders == [], "log through interlingua.core.tracking (it masks credentials):\n" + "\n".join(offenders)
    assert mlflow_text_calls((ROOT / TRACKING_MODULE).read_text())  # the scan sees calls where they are made


def test_the_scan_finds_direct_mlflow_calls_and_passes_the_tracking_module():
    source = ("import mlflow\nmlflow.log_params({'a': 1})\nclient.set_tag(r, 'k', 'v')\nMlflowClient().log_text(r, t, 'x')\n"
              "c.log_batch(r, params=[p])\nc.log_batch(r, metrics=[m])\ntracking.log_params({'a': 1})\n"
              "mlflow.log_metric('m', 1.0)\n")
    assert [line for line, _ in mlflow_text_calls(source)] == [2, 3, 4, 5]
