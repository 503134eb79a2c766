"""A history entry's JSON edges: the stored key order, and what a bad entry raises."""

from __future__ import annotations

import json

import pytest

from app.core.agent.history_entry import entry_json, history_entry, read_entry
from app.core.json_types import JsonShapeError, JsonValue


def test_an_entry_is_tainted_only_when_marked_and_keeps_the_stored_key_order() -> None:
    assert history_entry("user", "Who left?") == {"role": "user", "text": "Who left?"}
    tainted = history_entry("assistant", "Joan.", tainted=True)
    assert json.dumps(entry_json(tainted)) == (
        '{"role": "assistant", "text": "Joan.", "tainted": true}'
    )


@pytest.mark.parametrize(
    "stored",
    [
        '{"role": "user", "text": "Hola"}',
        '{"role": "assistant", "text": "Bon dia", "tainted": true}',
        '{"role": "assistant", "text": "", "tainted": false}',
    ],
)
def test_a_stored_entry_reads_back_to_the_same_bytes(stored: str) -> None:
    assert json.dumps(entry_json(read_entry(json.loads(stored)))) == stored


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ("text only", "must be an object"),
        ({"role": "system", "text": "x"}, "'role'"),
        ({"role": "user"}, "'text'"),
        ({"role": "user", "text": 3}, "'text'"),
        ({"role": "assistant", "text": "x", "tainted": "yes"}, "'tainted'"),
    ],
)
def test_a_bad_entry_is_a_shape_error_naming_what_is_wrong(value: JsonValue, names: str) -> None:
    with pytest.raises(JsonShapeError, match=names):
        read_entry(value, "history[0]")
