"""The JSON readers narrow a parsed payload or name the key that is wrong."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from app.core import json_types as jt


def test_the_readers_take_what_json_loads_gives() -> None:
    payload = jt.as_object(
        json.loads('{"a": "x", "n": 3, "f": 2, "b": true, "l": ["p", "q"], "o": {"k": null}}')
    )
    assert jt.req_str(payload, "a") == "x"
    assert jt.int_or(payload, "n") == 3
    assert jt.opt_float(payload, "f") == 2.0
    assert jt.bool_or(payload, "b") is True
    assert jt.str_list(payload, "l") == ["p", "q"]
    assert jt.object_or_empty(payload, "o") == {"k": None}
    assert jt.opt_str(payload, "missing", "d") == "d"
    assert jt.objects(None) == []


@pytest.mark.parametrize(
    ("reader", "text", "message"),
    [
        (jt.req_str, '{"a": 1}', "'a' must be a string, not int"),
        (jt.opt_int, '{"a": true}', "'a' must be an integer, not bool"),
        (jt.opt_float, '{"a": "1"}', "'a' must be a number, not str"),
        (jt.bool_or, '{"a": 0}', "'a' must be true or false, not int"),
        (jt.str_list, '{"a": ["x", 2]}', "'a' must be a list of strings"),
        (jt.opt_object, '{"a": []}', "'a' must be an object, not list"),
        (jt.req_str, "{}", "'a' must be a string, not null"),
    ],
)
def test_a_wrong_shape_names_the_key(
    reader: Callable[[jt.JsonObject, str], object], text: str, message: str
) -> None:
    with pytest.raises(jt.JsonShapeError, match=message):
        reader(jt.as_object(json.loads(text)), "a")


def test_a_list_of_objects_names_the_item_that_is_not_one() -> None:
    with pytest.raises(jt.JsonShapeError, match=r"ops\[1\] must be an object, not str"):
        jt.objects([{}, "x"], "ops")
    with pytest.raises(jt.JsonShapeError, match="must be a list, not dict"):
        jt.objects({}, "ops")
