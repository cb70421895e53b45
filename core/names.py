"""The one rule for names that become folder names (corpus names, experiments, run names).

A safe name is 1–128 characters of letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit:
no path separator, no ``..``, nothing that could leave the folder it names (``corpus_name=../../evil``).
Configs declare such fields as :data:`SafeName`, so a bad value is a config error at load, before Ray starts.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from interlingua.core.errors import UserError

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
RESERVED_NAMES = frozenset({"latest"})
_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters"


def name_problem(name: object) -> str:
    """Why ``name`` is not a safe name, or ``""`` when it is."""
    if not isinstance(name, str):
        return f"expected a string, got {type(name).__name__}"
    if not SAFE_NAME.fullmatch(name) or ".." in name:
        return f"{name!r} is not a safe name: use {_RULE} (no '/', no '..')"
    if name in RESERVED_NAMES:
        return f"{name!r} is reserved"
    return ""


def split_corpus_ref(text: str) -> tuple[str, str | None]:
    """(name, version or None) of a corpus reference ``NAME``, ``NAME@VERSION`` or ``NAME/VERSION``: split at the
    first ``@`` or ``/``; an empty version is None. Neither part is checked."""
    name, _, version = text.replace("/", "@").partition("@")
    return name, version or None


def check_name(name: str, what: str = "name") -> str:
    """``name`` if it is safe, else :class:`UserError` naming ``what`` (e.g. ``corpus_name``)."""
    problem = name_problem(name)
    if problem:
        raise UserError(f"{what}: {problem}")
    return name


def _validator(problem_of):
    """A pydantic after-validator raising ValueError with ``problem_of(value)`` when it is not empty."""
    def validate(value: str) -> str:
        problem = problem_of(value)
        if problem:
            raise ValueError(problem)
        return value
    return validate


SafeName = Annotated[str, AfterValidator(_validator(name_problem))]
"""A config field type: a :func:`name_problem`-free string, checked when the config is validated."""


def alias_problem(alias: object) -> str:
    """Why ``alias`` cannot be an MLflow registry alias, or ``""``: MLflow reserves ``latest`` (any case) and
    ``v<digits>`` (version references); the rest is the safe-name rule."""
    problem = name_problem(alias) if alias not in RESERVED_NAMES else ""
    if problem:
        return problem
    if str(alias).lower() == "latest" or re.fullmatch(r"[vV]\d+", str(alias)):
        return f"{alias!r} is reserved by the MLflow registry (latest, v<digits>); choose another alias"
    return ""


RegistryAlias = Annotated[str, AfterValidator(_validator(alias_problem))]
"""A config field type for a registered model's alias, checked when the config is validated."""
