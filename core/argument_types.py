"""argparse types the command lines share (``interlingua embed``, the benchmarks): a value checked as it is parsed,
so a mistake is argparse's one line before any work starts."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
