"""Typed values out of psycopg's untyped rows."""

from __future__ import annotations

import numpy as np

from app.core.index.dense import Vectors


def as_int(value: object) -> int:
    """An integer column's value."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def as_float(value: object) -> float:
    """A numeric column's value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def as_str(value: object) -> str:
    """A text column's value (``NULL`` is ``""``)."""
    return "" if value is None else str(value)


def as_vector(value: object) -> Vectors:
    """A pgvector ``vector`` value as float32 (the adapter gives a numpy array for a typed
    column, a ``Vector`` for ``index_vectors``' untyped one)."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, np.float32)
