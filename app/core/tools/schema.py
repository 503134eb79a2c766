"""JSON schemas derived from typed tool functions, and the small validator that checks calls.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``Any`` (or ``object``),
``list[X]``, ``dict[str, X]`` (``dict[str, object]``: any object), ``Literal[...]``,
``X | None`` (optional: ``null`` counts as absent), unions (``anyOf``) and ``TypedDict``
classes (objects with their own required keys). Google-style ``Args:`` lines of the
docstring become the properties' descriptions.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SECTION_RE = re.compile(r"^\s*(Args|Arguments|Returns|Raises|Yields|Example|Examples|Note):\s*$")
_ARG_RE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


class SchemaError(TypeError):
    """A tool's signature uses an annotation the registry cannot describe (a developer error)."""


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (text before the first section) and the ``Args:`` descriptions."""
    lines = inspect.cleandoc(doc or "").splitlines()
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION_RE.match(line)
        if header:
            section, current = header.group(1), None
            continue
        if section is None:
            description.append(line)
        elif section in ("Args", "Arguments"):
            item = _ARG_RE.match(line)
            if item and len(line) - len(line.lstrip()) <= 4:
                current = item.group(1)
                args[current] = item.group(2).strip()
            elif current and line.strip():
                args[current] = (args[current] + " " + line.strip()).strip()
    return "\n".join(description).strip(), args


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def type_schema(tp: Any) -> dict[str, object]:
    """The JSON schema of one annotation."""
    if tp is Any or tp is object:
        return {}
    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}
    if _is_typeddict(tp):
        return _typeddict_schema(tp)
    origin = get_origin(tp)
    if origin is Literal:
        values = list(get_args(tp))
        schema: dict[str, object] = {"enum": values}
        kinds = {_PRIMITIVES.get(type(v)) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
        inner = get_args(tp)
        items = type_schema(inner[0]) if inner else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if origin is dict or tp is dict:
        inner = get_args(tp)
        if len(inner) == 2 and inner[1] is not Any and inner[1] is not object:
            return {"type": "object", "additionalProperties": type_schema(inner[1])}
        return {"type": "object"}
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        if len(options) == 1:
            return type_schema(options[0])
        return {"anyOf": [type_schema(a) for a in options]}
    raise SchemaError(f"cannot describe the annotation {tp!r} as a JSON schema")


def _typeddict_schema(tp: Any) -> dict[str, object]:
    hints = get_type_hints(tp)
    _, described = parse_docstring(tp.__doc__)
    props: dict[str, dict[str, object]] = {}
    for key, hint in hints.items():
        props[key] = type_schema(hint)
        if key in described:
            props[key]["description"] = described[key]
    schema: dict[str, object] = {"type": "object", "properties": props}
    required = sorted(getattr(tp, "__required_keys__", set()))
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def function_schema(fn: Callable[..., Any]) -> tuple[str, dict[str, object]]:
    """The description and the parameters' schema of a tool ``fn(ctx, ...)``."""
    description, described = parse_docstring(fn.__doc__)
    hints = get_type_hints(fn)
    params = list(inspect.signature(fn).parameters.values())[1:]  # the first is the context
    props: dict[str, dict[str, object]] = {}
    required: list[str] = []
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SchemaError(f"{fn.__name__}: *args/**kwargs cannot be described")
        prop = dict(type_schema(hints.get(param.name, Any)))
        if param.name in described:
            prop["description"] = described[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif param.default is not None and _json_default(param.default):
            prop["default"] = param.default
        props[param.name] = prop
    schema: dict[str, object] = {"type": "object", "properties": props, "required": required}
    schema["additionalProperties"] = False
    return description, schema


def _json_default(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value in ([], {}, ())


# -- validation ---------------------------------------------------------------------------------
def validate(value: Any, schema: Mapping[str, object], where: str = "$") -> tuple[Any, list[str]]:
    """Check ``value`` against ``schema`` (one :func:`type_schema` made); returns the value
    (digit strings made integers, nulls of optional properties dropped) and the problems
    found, each naming where it is."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        for option in options:
            fixed, problems = validate(value, option, where)
            if not problems:
                return fixed, []
        return value, [f"{where}: does not match any allowed form"]
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        allowed = ", ".join(repr(v) for v in enum)
        return value, [f"{where}: must be one of {allowed}"]
    kind = schema.get("type")
    if not isinstance(kind, str):
        return value, []
    checker = _CHECKERS[kind]
    return checker(value, schema, where)


def _check_string(value: Any, schema: Mapping[str, object], where: str) -> tuple[Any, list[str]]:
    return value, [] if isinstance(value, str) else [f"{where}: expected a string"]


def _check_integer(value: Any, schema: Mapping[str, object], where: str) -> tuple[Any, list[str]]:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip()), []
    if isinstance(value, float) and value.is_integer():
        return int(value), []
    if isinstance(value, int) and not isinstance(value, bool):
        return value, []
    return value, [f"{where}: expected an integer"]


def _check_number(value: Any, schema: Mapping[str, object], where: str) -> tuple[Any, list[str]]:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return value, [] if ok else [f"{where}: expected a number"]


def _check_boolean(value: Any, schema: Mapping[str, object], where: str) -> tuple[Any, list[str]]:
    return value, [] if isinstance(value, bool) else [f"{where}: expected true or false"]


def _check_array(value: Any, schema: Mapping[str, object], where: str) -> tuple[Any, list[str]]:
    if not isinstance(value, list):
        return value, [f"{where}: expected a list"]
    items = schema.get("items")
    if not isinstance(items, Mapping) or not items:
        return value, []
    out, problems = [], []
    for number, item in enumerate(value):
        fixed, found = validate(item, items, f"{where}[{number}]")
        out.append(fixed)
        problems.extend(found)
    return out, problems


def _check_object(value: Any, schema: Mapping[str, object], where: str) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return value, [f"{where}: expected an object"]
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        props = {}
    listed = schema.get("required", [])
    required = set(listed) if isinstance(listed, list) else set()
    extra = schema.get("additionalProperties", True)
    out: dict[str, Any] = {}
    problems: list[str] = []
    for key, item in value.items():
        if item is None and key in props and key not in required:
            continue  # an optional argument given as null counts as absent
        if key in props:
            out[key], found = validate(item, props[key], f"{where}.{key}")
        elif extra is False:
            out[key], found = item, [f"{where}: unknown argument {key!r}"]
        elif isinstance(extra, dict):
            out[key], found = validate(item, extra, f"{where}.{key}")
        else:
            out[key], found = item, []
        problems.extend(found)
    problems.extend(f"{where}: missing {key!r}" for key in sorted(required - set(out)))
    return out, problems


_CHECKERS = {
    "string": _check_string,
    "integer": _check_integer,
    "number": _check_number,
    "boolean": _check_boolean,
    "array": _check_array,
    "object": _check_object,
}
