"""Schema derivation from typed functions, docstring parsing and argument validation."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

import pytest

from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.schema import SchemaError, function_schema, parse_docstring, validate


class Point(TypedDict, total=False):
    """A point.

    Args:
        x: the abscissa.
        y: the ordinate.
    """

    x: float
    y: float


class Required(TypedDict):
    """Both keys needed."""

    name: str
    size: int


async def sample(
    ctx: ToolContext,
    name: str,
    count: int = 3,
    ratio: float = 0.5,
    flag: bool = False,
    tags: list[str] | None = None,
    weights: dict[str, int] | None = None,
    mode: Literal["fast", "slow"] = "fast",
    point: Point | None = None,
    pair: Required | None = None,
    anything: Any = None,
) -> ToolResult:
    """Do a sample thing.

    Second paragraph of the description.

    Args:
        name: the name to use, which is described
            over two lines.
        count: how many.
        mode: the speed.

    Returns:
        nothing interesting.
    """
    return ToolResult(ok=True)


def test_description_is_the_text_before_the_sections() -> None:
    description, args = parse_docstring(sample.__doc__)
    assert description == "Do a sample thing.\n\nSecond paragraph of the description."
    assert args["name"] == "the name to use, which is described over two lines."
    assert set(args) == {"name", "count", "mode"}


def test_schema_types_defaults_and_required() -> None:
    _, schema = function_schema(sample)
    props = schema["properties"]
    assert "ctx" not in props
    assert schema["required"] == ["name"]
    assert schema["additionalProperties"] is False
    assert props["name"] == {
        "type": "string",
        "description": "the name to use, which is described over two lines.",
    }
    assert props["count"] == {"type": "integer", "description": "how many.", "default": 3}
    assert props["ratio"]["type"] == "number"
    assert props["flag"] == {"type": "boolean", "default": False}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["mode"]["enum"] == ["fast", "slow"] and props["mode"]["type"] == "string"
    assert props["anything"] == {}


def test_typeddicts_become_objects_with_their_own_required_keys() -> None:
    _, schema = function_schema(sample)
    point = schema["properties"]["point"]
    assert point["type"] == "object" and point["additionalProperties"] is False
    assert point["properties"]["x"] == {"type": "number", "description": "the abscissa."}
    assert "required" not in point
    assert schema["properties"]["pair"]["required"] == ["name", "size"]


def test_unsupported_annotation_is_a_developer_error() -> None:
    async def bad(ctx: ToolContext, when: complex) -> ToolResult:
        """Bad."""
        return ToolResult(ok=True)

    with pytest.raises(SchemaError):
        function_schema(bad)


def test_validate_accepts_and_coerces_digit_strings() -> None:
    _, schema = function_schema(sample)
    fixed, problems = validate({"name": "a", "count": "7", "tags": None}, schema)
    assert problems == []
    assert fixed == {"name": "a", "count": 7}


def test_validate_names_every_problem_with_its_place() -> None:
    _, schema = function_schema(sample)
    args = {
        "count": "x",
        "mode": "medium",
        "point": {"x": "far"},
        "pair": {"name": "n"},
        "bogus": 1,
        "tags": ["ok", 3],
    }
    _, problems = validate(args, schema)
    assert "$.count: expected an integer" in problems
    assert "$.mode: must be one of 'fast', 'slow'" in problems
    assert "$.point.x: expected a number" in problems
    assert "$.pair: missing 'size'" in problems
    assert "$: unknown argument 'bogus'" in problems
    assert "$.tags[1]: expected a string" in problems
    assert "$: missing 'name'" in problems


def test_booleans_are_not_integers() -> None:
    _, problems = validate(True, {"type": "integer"})
    assert problems == ["$: expected an integer"]
