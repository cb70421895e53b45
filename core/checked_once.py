"""A check of a config remembered for that very config: the same object with the same content.

``interlingua run`` checks a config (the recipe's stages, this machine's ``environment_preflight``) before the
workflow's run, which checks it too when called alone: the run skips what the command checked, and checks a config
changed since, or another object, itself.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any


def content_key(config: Any) -> str | None:
    """A text that differs whenever ``config``'s content does (``repr`` of its fields: NaN is not None, nor 1.0 1), for
    any value a config built in code holds; None when one cannot be shown (its ``repr`` raises): not remembered."""
    try:
        return repr(config.model_dump())
    except Exception:  # noqa: BLE001 - a value of the caller's whose repr fails: checked every time instead
        return None


#: The machine check :func:`check_before_run` passed last: (the check, a weak reference to the config, its content).
_PASSED: tuple[Callable[[Any], None], weakref.ref, str] | None = None


def check_before_run(check: Callable[[Any], None], config: Any) -> None:
    """``check(config)`` of this machine, made by a command before it runs the work, remembered as passed for this
    very config: the run's own :func:`check_in_run` of it is then skipped."""
    global _PASSED
    _PASSED = None
    check(config)
    key = content_key(config)
    _PASSED = (check, weakref.ref(config), key) if key is not None else None


def check_in_run(check: Callable[[Any], None], config: Any) -> bool:
    """``check(config)`` of this machine in a workflow's run, unless :func:`check_before_run` passed it for this very
    config (unchanged since) just before: taken once, so a second run of it checks again. False when the command's
    check stood (the command made the checks it makes with it, ``input_preflight`` say), True when checked here."""
    global _PASSED
    passed, _PASSED = _PASSED, None
    if passed is not None and passed[0] is check and passed[1]() is config and passed[2] == content_key(config):
        return False
    check(config)
    return True


def forget_checks() -> None:
    """Drop what :func:`check_before_run` remembered: a command's checks that failed after it (``input_preflight``)
    do not stand, so a later run of the same config checks this machine itself."""
    global _PASSED
    _PASSED = None
