"""JSON as a type: what ``json.loads`` returns and ``json.dumps`` accepts, checked by mypy.

:data:`JsonValue` is recursive and holds no ``Any``: a value built for the wire must be made
of ``str``, ``int``, ``float``, ``bool``, ``None``, lists and string-keyed dicts of those, and
a value read from the wire must be narrowed before it is used. The readers below do that
narrowing in one place; each raises :class:`JsonShapeError` (a ``ValueError``) that names the
key and what it should have been, so the edge that parses a payload can turn it into its own
coded error.

Use these at the wire edges only (``to_dict``/``from_dict``, a provider's stream events, a
file's JSON rows); between layers, pass typed objects.
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
"""Any JSON value."""
JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object (string keys)."""
JsonList: TypeAlias = "list[JsonValue]"
"""A JSON array."""


class JsonShapeError(ValueError):
    """A JSON value that is not of the shape a reader expects."""


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def as_object(value: object, what: str = "the value") -> JsonObject:
    """``value`` as a JSON object, or :class:`JsonShapeError`."""
    if not isinstance(value, dict):
        raise JsonShapeError(f"{what} must be an object, not {_kind(value)}")
    return value


def as_list(value: object, what: str = "the value") -> JsonList:
    """``value`` as a JSON array, or :class:`JsonShapeError`."""
    if not isinstance(value, list):
        raise JsonShapeError(f"{what} must be a list, not {_kind(value)}")
    return value


def objects(value: object, what: str = "the value") -> list[JsonObject]:
    """``value`` as a list of JSON objects (``None`` → empty)."""
    if value is None:
        return []
    return [as_object(item, f"{what}[{n}]") for n, item in enumerate(as_list(value, what))]


def req_str(obj: JsonObject, key: str) -> str:
    """``obj[key]``, which must be a string."""
    value = obj.get(key)
    if not isinstance(value, str):
        raise JsonShapeError(f"'{key}' must be a string, not {_kind(value)}")
    return value


def opt_str(obj: JsonObject, key: str, default: str | None = None) -> str | None:
    """``obj[key]`` as a string, ``default`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise JsonShapeError(f"'{key}' must be a string, not {_kind(value)}")
    return value


def str_or(obj: JsonObject, key: str, default: str = "") -> str:
    """``obj[key]`` as a string, ``default`` when absent or null."""
    value = opt_str(obj, key)
    return default if value is None else value


def opt_int(obj: JsonObject, key: str, default: int | None = None) -> int | None:
    """``obj[key]`` as an integer (not a bool), ``default`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise JsonShapeError(f"'{key}' must be an integer, not {_kind(value)}")
    return value


def int_or(obj: JsonObject, key: str, default: int = 0) -> int:
    """``obj[key]`` as an integer, ``default`` when absent or null."""
    value = opt_int(obj, key)
    return default if value is None else value


def opt_float(obj: JsonObject, key: str, default: float | None = None) -> float | None:
    """``obj[key]`` as a number (integer or float, not a bool), ``default`` when absent."""
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JsonShapeError(f"'{key}' must be a number, not {_kind(value)}")
    return float(value)


def bool_or(obj: JsonObject, key: str, default: bool = False) -> bool:
    """``obj[key]`` as a bool, ``default`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise JsonShapeError(f"'{key}' must be true or false, not {_kind(value)}")
    return value


def opt_object(obj: JsonObject, key: str) -> JsonObject | None:
    """``obj[key]`` as an object, ``None`` when absent or null."""
    value = obj.get(key)
    return None if value is None else as_object(value, f"'{key}'")


def object_or_empty(obj: JsonObject, key: str) -> JsonObject:
    """``obj[key]`` as an object, empty when absent or null."""
    return opt_object(obj, key) or {}


def list_or_empty(obj: JsonObject, key: str) -> JsonList:
    """``obj[key]`` as a list, empty when absent or null."""
    value = obj.get(key)
    return [] if value is None else as_list(value, f"'{key}'")


def str_list(obj: JsonObject, key: str) -> list[str]:
    """``obj[key]`` as a list of strings, empty when absent or null."""
    items = list_or_empty(obj, key)
    if not all(isinstance(item, str) for item in items):
        raise JsonShapeError(f"'{key}' must be a list of strings")
    return [item for item in items if isinstance(item, str)]
