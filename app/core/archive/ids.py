"""Ids and text at the boundary, checked before any query sees them.

SQLite stores integers in 64 bits; binding a bigger Python ``int`` raises ``OverflowError``
("Python int too large to convert to SQLite INTEGER") deep inside a query. Every place that
takes ids from outside — tool arguments, chat contexts, change plans posted to the API — checks
them with :func:`check_ids` first and answers ``archive.id_out_of_range`` (an input error, HTTP
400) instead.

A lone UTF-16 surrogate (``"\ud800"`` is valid JSON) cannot be encoded as UTF-8, so SQLite,
the index, a model provider or a log fails on it; :func:`lone_surrogate_at` finds one anywhere
in a value, so each edge can refuse it with its own code.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import ArchiveError
from app.core.phrases import Phrase

SQLITE_MIN = -(2**63)
SQLITE_MAX = 2**63 - 1
ID_KEYS = frozenset({"section_id", "id", "media_id"})
"""Keys whose integer value is a record (or media) id wherever they appear."""
MAX_WALK_DEPTH = 200
"""Deeper values are not walked (the API refuses bodies nested this deep before)."""


def id_out_of_range(where: str) -> ArchiveError:
    """``archive.id_out_of_range`` for the id at ``where``."""
    return ArchiveError(
        "archive.id_out_of_range",
        Phrase.of(
            "{where} is out of range: record ids are whole numbers of at most 19 digits.",
            where=where,
        ),
        hint="Give the id of an existing record.",
        category="input",
        details={"field": where},
    )


def in_range(value: int) -> bool:
    """Whether ``value`` fits a SQLite INTEGER."""
    return SQLITE_MIN <= value <= SQLITE_MAX


def check_id(value: Any, where: str = "section_id") -> None:
    """Raise ``archive.id_out_of_range`` if ``value`` is an integer SQLite cannot hold."""
    if isinstance(value, int) and not isinstance(value, bool) and not in_range(value):
        raise id_out_of_range(where)


def check_ids(value: Any, where: str = "") -> None:
    """Check every id in ``value``: the integers under an id key (``section_id``...) at any
    depth; nothing else is touched.

    Raises:
        ArchiveError: ``archive.id_out_of_range`` naming the first offending key.
    """
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_WALK_DEPTH:
            continue
        if isinstance(item, dict):
            for key, inner in item.items():
                name = f"{path}.{key}" if path else str(key)
                if str(key) in ID_KEYS:
                    check_id(inner, name)
                stack.append((inner, name, depth + 1))
        elif isinstance(item, list | tuple):
            stack.extend((inner, path, depth + 1) for inner in item)


def lone_surrogate_at(value: Any, where: str = "") -> str | None:
    """Where in ``value`` (dotted path) a string or key holds a lone surrogate, or ``None``."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_WALK_DEPTH:
            continue
        if isinstance(item, str):
            if not _encodes(item):
                return path or "value"
        elif isinstance(item, dict):
            for key, inner in item.items():
                name = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and not _encodes(key):
                    return path or "key"
                stack.append((inner, name, depth + 1))
        elif isinstance(item, list | tuple):
            stack.extend((inner, f"{path}[{n}]", depth + 1) for n, inner in enumerate(item))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
