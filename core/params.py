"""Nested config dicts as flat MLflow params (``{"train": {"lr": 1e-4}}`` -> ``{"train.lr": 1e-4}``), credentials
masked (:func:`interlingua.core.redact.redact`): what goes to MLflow never holds a password or a token."""

from __future__ import annotations

from typing import Any

from interlingua.core.redact import redact


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys for every leaf of ``d`` (dicts are descended into; lists and scalars are leaves)."""
    out: dict[str, Any] = {}
    for key, value in redact(d).items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
