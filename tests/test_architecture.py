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
