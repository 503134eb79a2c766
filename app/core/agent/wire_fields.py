"""Readers of wire fields that :mod:`app.core.json_types` has no reader for.

The agent's ``from_dict``/``from_wire`` read their required integers and bools, the objects of
a list and their string-keyed integer maps through these, so a bad payload raises
:class:`~app.core.json_types.JsonShapeError` (a ``ValueError``) naming the key.
"""

from __future__ import annotations

from app.core.json_types import JsonObject, JsonShapeError, as_object, list_or_empty, opt_int


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def req_int(obj: JsonObject, key: str) -> int:
    """``obj[key]``, which must be an integer (not a bool)."""
    value = opt_int(obj, key)
    if value is None:
        raise JsonShapeError(f"'{key}' must be an integer, not null")
    return value


def req_bool(obj: JsonObject, key: str) -> bool:
    """``obj[key]``, which must be ``true`` or ``false``."""
    value = obj.get(key)
    if not isinstance(value, bool):
        raise JsonShapeError(f"'{key}' must be true or false, not {_kind(value)}")
    return value


def dict_items(obj: JsonObject, key: str) -> list[JsonObject]:
    """The objects of the list ``obj[key]``, other items left out (absent or null: empty)."""
    return [item for item in list_or_empty(obj, key) if isinstance(item, dict)]


def int_map(obj: JsonObject, key: str) -> dict[str, int]:
    """``obj[key]`` as an object of integers (absent or null: empty)."""
    value = obj.get(key)
    if value is None:
        return {}
    mapping = as_object(value, f"'{key}'")
    return {name: req_int(mapping, name) for name in mapping}
