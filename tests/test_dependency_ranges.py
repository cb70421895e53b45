"""pyproject.toml's ranges say what its comment promises: each lower bound is the locked version, and each
range stops before the next major release (calendar-versioned packages, which have none, are named)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: packages versioned by date: no "next major release" to stop at
CALENDAR_VERSIONED = frozenset({"fsspec"})


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [text for group in project["optional-dependencies"].values() for text in group]
    return [Requirement(text) for text in project["dependencies"] + extras]


def _locked_versions() -> dict[str, Version]:
    packages = tomllib.loads((ROOT / "uv.lock").read_text())["package"]
    return {package["name"]: Version(Version(package["version"]).public) for package in packages}  # 2.13.0+cpu -> 2.13.0


def range_problems(requirements: list[Requirement], locked: dict[str, Version]) -> list[str]:
    """One line per requirement whose lower bound is not its locked version, or that has no upper bound."""
    problems = []
    for requirement in requirements:
        operators = {spec.operator: Version(spec.version) for spec in requirement.specifier}
        if "==" in operators:
            lower = upper = operators["=="]
        else:
            lower, upper = operators.get(">="), operators.get("<")
        name = requirement.name.lower()
        if lower != locked.get(name):
            problems.append(f"{name}: lower bound {lower}, locked {locked.get(name)}")
        if upper is None and name not in CALENDAR_VERSIONED:
            problems.append(f"{name}: no upper bound")
    return problems


def test_each_lower_bound_is_the_locked_version_and_each_range_has_an_upper_bound():
    assert range_problems(_requirements(), _locked_versions()) == []


def test_the_check_names_a_loose_lower_bound_and_a_missing_upper_bound():
    locked = {"numpy": Version("2.4.6"), "pyarrow": Version("25.0.1"), "fsspec": Version("2026.9.0")}
    requirements = [Requirement("numpy>=2.4,<3"), Requirement("pyarrow>=25.0.1"), Requirement("fsspec>=2026.9.0")]
    assert range_problems(requirements, locked) == ["numpy: lower bound 2.4, locked 2.4.6", "pyarrow: no upper bound"]
