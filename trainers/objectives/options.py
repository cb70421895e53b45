"""Validation of objective options: one clear ValueError naming the option, its value and what was expected.

The ``require_*`` functions check the arguments of the loss classes and ``info_nce``; :data:`Number` is the type of
the numeric fields of the objectives' typed options (pydantic), with the same rules: a bool is not a number
(``temperature: true`` is refused, not read as 1.0), and NaN and ±inf are refused (an infinite temperature makes
the loss the constant log n with zero gradient; an infinite margin makes it NaN).
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo


def require_number(name: str, value: float) -> float:
    """Return ``value`` as a float if it is a finite real number (not a bool), else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def require_positive(name: str, value: float) -> float:
    """Return ``value`` if it is a finite real number > 0, else raise ValueError."""
    if not require_number(name, value) > 0:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    return float(value)


#: the smallest softmax temperature an objective accepts. Cosines lie in [-1, 1], so at τ = 1e-4 the logits already
#: span ±10⁴ and the softmax is a hard max; a smaller τ adds nothing but overflow (below about 3e-39, 1/τ is
#: infinite in float32 and the loss NaN). Published settings are 0.01–0.1 (SimCSE 0.05; CLIP caps 1/τ at 100).
MIN_TEMPERATURE = 1e-4


def require_temperature(name: str, value: float) -> float:
    """Return ``value`` if it is a finite real number >= :data:`MIN_TEMPERATURE`, else raise ValueError."""
    if not require_number(name, value) >= MIN_TEMPERATURE:
        raise ValueError(f"{name} must be a number >= {MIN_TEMPERATURE:g} (a softmax temperature), got {value!r}")
    return float(value)


def require_non_negative(name: str, value: float) -> float:
    """Return ``value`` if it is a finite real number >= 0, else raise ValueError."""
    if not require_number(name, value) >= 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def require_probability(name: str, value: float) -> float:
    """Return ``value`` if it lies in [0, 1], else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def require_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ValueError."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def _not_a_bool(value, info: ValidationInfo):
    """Before pydantic's coercion and bounds: a bool is refused, a non-finite number named as such, written as a
    number or as text (``"inf"``, ``"nan"``, ``"1e999"`` from YAML or the command line); other text is left to
    pydantic's coercion and its message."""
    if isinstance(value, (bool, int, float)):
        require_number(info.field_name, value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        if not math.isfinite(number):
            raise ValueError(f"{info.field_name} must be a finite number, got {value!r}")
    return value


#: a numeric option field: a float, bools refused (bounds such as ``gt=0`` go in its ``Field``); finite in every
#: :class:`~interlingua.core.config.Config` (``allow_inf_nan=False``), text such as ``"inf"`` included
Number = Annotated[float, BeforeValidator(_not_a_bool)]
