"""Lines the training code prints inside a Ray Train worker (steps, warnings), each reaching the driver's console once."""

from __future__ import annotations

import sys


def show(line: str) -> None:
    """Write ``line`` and its newline to ``sys.stdout`` in one write, then flush.

    Not ``print``: in a Ray Train worker, Ray Train (``RAY_TRAIN_ENABLE_PRINT_PATCH``, on by default) replaces the
    builtin ``print`` with one that logs the text on the root logger, whose console handler writes it to the worker's
    stderr, and, because a Ray worker's ``sys.stdout`` is not ``sys.__stdout__``, prints it to stdout as well: Ray
    forwards both streams to the driver, so every line appeared twice there, from the CLI and from ``fit(...)``."""
    sys.stdout.write(f"{line}\n")
    sys.stdout.flush()
