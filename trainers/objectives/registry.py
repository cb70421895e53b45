"""The one registry of training objectives: name -> :class:`~interlingua.trainers.objectives.base.Objective`.

Built-in objectives are listed in :data:`BUILTIN` (name -> ``module:Class``, imported on first use, so naming
and listing them costs no import). Anything else — a plugin, a notebook, a test — registers at run time::

    @register_objective
    class MyObjective(Objective):
        name = "my_objective"
        ...

Adding an objective is one file (and, for a built-in, one line here); no engine file changes.
"""

from __future__ import annotations

import importlib

from interlingua.core.config import closest

BUILTIN: dict[str, str] = {
    "translation_ranking": "interlingua.trainers.objectives.translation_ranking:TranslationRanking",
    "simcse_unsup": "interlingua.trainers.objectives.simcse:UnsupervisedSimCSE",
    "simcse_sup": "interlingua.trainers.objectives.simcse:SupervisedSimCSE",
    "amr_retrofit": "interlingua.trainers.objectives.amr_retrofit:AMRRetrofit",
    "ease": "interlingua.trainers.objectives.ease:EASE",
    "explicit_alignment": "interlingua.trainers.objectives.explicit_alignment:ExplicitAlignment",
}

_registered: dict[str, type] = {}


def register_objective(cls: type) -> type:
    """Register ``cls`` under ``cls.name`` (usable as a decorator). Registering the same class again is a no-op;
    another class under a taken name is an error."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__} needs a class attribute `name` (the objective's config name)")
    if name in BUILTIN and BUILTIN[name] != _qualname(cls):
        raise ValueError(f"objective {name!r} is a built-in ({BUILTIN[name]})")
    known = _registered.get(name)
    if known is not None and known is not cls and _qualname(known) != _qualname(cls):
        raise ValueError(f"objective {name!r} is already registered ({_qualname(known)})")
    _registered[name] = cls
    return cls


def objective_names() -> list[str]:
    return sorted(set(BUILTIN) | set(_registered))


def objective_class(name: str) -> type:
    """The class registered as ``name``; ValueError with the known names (and a close match) otherwise."""
    if name in _registered:
        return _registered[name]
    if name in BUILTIN:
        module, _, attr = BUILTIN[name].partition(":")
        cls = getattr(importlib.import_module(module), attr)
        _registered[name] = cls
        return cls
    close = closest(name, objective_names())
    hint = f"; did you mean {close!r}?" if close else ""
    raise ValueError(f"unknown objective {name!r}: choose one of {', '.join(objective_names())}{hint}")


def _qualname(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"
