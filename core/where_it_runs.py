"""Checks of the machine a run's work runs on (an installed Apertium mode, a model folder), made where that work runs.

A local run checks this machine before Ray starts. A run on a cluster the user chose (``--address``, else
``$RAY_ADDRESS``: a ``ray://HEAD:10001`` client, a GCS address, or a submitted job's driver) checks the cluster: the
driver, a laptop say, need not have what the cluster's image has. :func:`check_on_cluster` runs the check as one Ray
task holding no CPU right after connecting, before any actor or model starts, and raises its one-line
:class:`~interlingua.core.errors.UserError` here.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

from interlingua.core.errors import UserError


def runs_on_cluster(address: str | None) -> bool:
    """Whether a run given ``address`` works on a cluster the user chose (not on a local Ray of this machine:
    ``local`` starts one, as no address does)."""
    from interlingua.core.runtime import chosen_ray_address

    return chosen_ray_address(address) is not None


#: Set while a config is checked for a job to submit (``interlingua submit``): its work runs on the cluster, whose
#: corpus store is the cluster's ``INTERLINGUA_HOME`` (or the share ``--state-dir`` names), not this machine's.
_FOR_A_JOB: contextvars.ContextVar[bool] = contextvars.ContextVar("interlingua_checking_for_a_job", default=False)


@contextlib.contextmanager
def checking_for_a_job() -> Iterator[None]:
    """Within it, :func:`checks_this_machines_store` is False: checks of this machine's corpus store are left out."""
    token = _FOR_A_JOB.set(True)
    try:
        yield
    finally:
        _FOR_A_JOB.reset(token)


def checks_this_machines_store() -> bool:
    """Whether a config check may read this machine's corpus store: not while it checks a job to submit."""
    return not _FOR_A_JOB.get()


def check_on_cluster(check: Callable[[Any], None], config: Any,
                     measure: Callable[[Any], Any] | None = None) -> Any:
    """``check(config)`` (raising :class:`UserError`) run on the connected cluster; its message raised here, saying
    where it was found. Returns ``measure(config)`` computed there by the same task once the check passed (what only
    the cluster can tell: the digests of its model folders, say), or None without ``measure``."""
    problem, measured = on_the_cluster(_checked, check, measure, config)
    if problem:
        raise UserError(f"{problem} (checked on the Ray cluster, where the work runs: its image must provide it)")
    return measured


def _checked(check: Callable[[Any], None], measure: Callable[[Any], Any] | None, config: Any) -> tuple[str, Any]:
    """(the message of the :class:`UserError` ``check(config)`` raises, or ``""``; ``measure(config)`` when it
    passed): a string travels back, not an exception."""
    try:
        check(config)
    except UserError as error:
        return str(error), None
    return "", measure(config) if measure is not None else None


def on_the_cluster(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` computed by one Ray task holding no CPU on the connected cluster."""
    import ray

    return ray.get(ray.remote(num_cpus=0)(function).remote(*args))
