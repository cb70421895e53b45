"""The rule of a corpus build whose inputs are not empty but give nothing to publish (``ease-corpus`` keeping no pair,
``amr-corpus`` making no NLI triple): it fails in one line saying why, and publishes nothing, so ``latest`` stays on
the version before instead of moving to one of no rows."""

from __future__ import annotations

from collections.abc import Callable

from interlingua.core.errors import UserError


def require_kept(kept: int, workflow: str, unit: str, why: Callable[[], str]) -> None:
    """:class:`UserError` ``"<workflow>: no <unit> to publish: <why()>"`` when ``kept`` is 0 (``why`` is called only
    then: it names where the rows ran out, with a hint)."""
    if kept:
        return
    raise UserError(f"{workflow}: no {unit} to publish: {why()}")
