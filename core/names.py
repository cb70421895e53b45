"""The one rule for names that become folder names (corpus names, experiments, run names), and the rule for
language codes and registered model names in configs.

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


#: MLflow's alias rule (``mlflow.utils.validation``: ``[\w\-]*``, not empty, at most 255 characters): ``\w`` is a
#: letter or digit of any script (``str.isalnum``) or ``_``. Unlike MLflow's ``$``, a trailing newline is refused.
_ALIAS = re.compile(r"[\w-]{1,255}")
_ALIAS_RULE = "letters and digits (any script), '_' and '-', 1 to 255 characters"
#: Aliases MLflow reserves for version references (``latest`` in any case, too).
_VERSION_ALIAS = re.compile(r"[vV]\d+")


def alias_problem(alias: object) -> str:
    """Why ``alias`` cannot be an MLflow registry alias, or ``""``: MLflow's rule (:data:`_ALIAS`; the
    safe-name rule it used to follow allowed ``.``, which MLflow refused only when the alias was set, after an
    evaluation, and refused ``-x``, ``_x`` or ``é``, which MLflow takes) and its reserved ``latest`` (any case) and
    ``v<digits>``."""
    if not isinstance(alias, str):
        return f"expected a string, got {type(alias).__name__}"
    if not _ALIAS.fullmatch(alias):
        return f"{alias!r} is not a registry alias: use {_ALIAS_RULE} (MLflow's rule)"
    if alias.lower() == "latest" or _VERSION_ALIAS.fullmatch(alias):
        return f"{alias!r} is reserved by the MLflow registry (latest, v<digits>); choose another alias"
    return ""


RegistryAlias = Annotated[str, AfterValidator(_validator(alias_problem))]
"""A config field type for a registered model's alias, checked when the config is validated."""


#: an ISO 639 code (2 or 3 lowercase letters), optionally with subtags: ``pt-BR``, ``zh-Hant``, ``sr_Latn``
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}([-_][A-Za-z0-9]{2,8})*")


def language_problem(code: object) -> str:
    """Why ``code`` is not a language code, or ``""`` (``english``, ``EN``, ``en es`` and ``""`` are not)."""
    if not isinstance(code, str):
        return f"expected a language code, got {type(code).__name__}"
    if LANGUAGE_CODE.fullmatch(code):
        return ""
    hint = f" (lowercase: {code.lower()!r})" if LANGUAGE_CODE.fullmatch(code.lower()) else ""
    return (f"{code!r} is not a language code{hint}: use an ISO 639 code such as en, es, zh, optionally with a region "
            "or script (pt-BR, zh-Hant)")


LanguageCode = Annotated[str, AfterValidator(_validator(language_problem))]
"""A config field type: a language code (:func:`language_problem`), checked when the config is validated."""


def registered_model_problem(name: object) -> str:
    """Why ``name`` cannot name a model in the MLflow registry, or ``""``: MLflow refuses an empty name and ``/`` or
    ``:`` in it (the registration would fail after training); the rest is free text up to 256 characters."""
    if not isinstance(name, str):
        return f"expected a registered model name, got {type(name).__name__}"
    if (not name.strip() or len(name) > 256 or "/" in name or ":" in name or name != name.strip() or name == "."
            or name.startswith("..")):
        return (f"{name!r} cannot name a registered model: 1-256 characters, no '/' or ':', not '.' or starting with "
                "'..', no leading or trailing space (MLflow's rule; e.g. team-encoder)")
    return ""


RegisteredModelName = Annotated[str, AfterValidator(_validator(registered_model_problem))]
"""A config field type for an MLflow registered model name, checked when the config is validated."""


def experiment_problem(name: object) -> str:
    """Why ``name`` cannot name an MLflow experiment, or ``""``: MLflow takes any non-empty name (``team/nightly runs``
    included) but refuses an empty one, after Ray and the work before the run started."""
    if not isinstance(name, str):
        return f"expected an experiment name, got {type(name).__name__}"
    if not name.strip():
        return f"{name!r} cannot name an MLflow experiment: give a non-empty name"
    return ""


ExperimentName = Annotated[str, AfterValidator(_validator(experiment_problem))]
"""A config field type for an MLflow experiment name (non-empty), checked when the config is validated."""


def location_problem(value: object) -> str:
    """Why ``value`` cannot name an input (a path, URL or model spec), or ``""``: an empty or blank one is refused; as
    the default it silently stood for (``--set source=$SRC`` with ``SRC`` unset built the Bible corpus)."""
    if isinstance(value, str) and not value.strip():
        return f"{value!r} is empty: give a path, URL or model spec, or leave the key out (null) for its default"
    return ""


Location = Annotated[str, AfterValidator(_validator(location_problem))]
"""A config field type for an input's path, URL or model spec: not empty or blank."""
