"""The value types of ``attention-explorer-score``'s options (:mod:`model.scorer.main`): argparse ``type=`` callables
that turn a bad value into one usage line."""

from __future__ import annotations

import argparse


def positive_int(value: str) -> int:
    """``value`` as a whole number >= 1. Raises argparse.ArgumentTypeError saying what is wrong."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def positive_float(value: str) -> float:
    """``value`` as a number > 0. Raises argparse.ArgumentTypeError saying what is wrong."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not x > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value}")
    return x


def unit_interval(value: str) -> float:
    """``value`` as a number in (0, 1). Raises argparse.ArgumentTypeError saying what is wrong."""
    x = positive_float(value)
    if not x < 1:
        raise argparse.ArgumentTypeError(f"must be below 1, got {value}")
    return x


__all__ = ["positive_float", "positive_int", "unit_interval"]
