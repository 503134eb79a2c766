"""The JSON text of a record's values: written fast, read back equal, refused as before."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from app.core.archive import Archive, Field, RecordKey, Section
from app.core.archive.bulk import NewRecord
from app.core.archive.records import to_json


def item(value: Any, lang: str = "lg-nolan") -> list[dict[str, Any]]:
    return [{"id": 1, "lang": lang, "value": value}]


@pytest.mark.parametrize(
    "values",
    [
        {"a": item("Col·lecció «Amades»\n\ttab, \u2028 and ✓"), "b": item(1.5e16)},
        {"a": item({"section_tipo": "p1", "section_id": 2, "role": "artist"}), "b": item(-0.0)},
        {"a": item(2**63 - 1), "b": item(True), "c": item([1, "two", {"three": [3]}])},
        {"a": item(2**70)},  # past 64 bits: the standard encoder
        {"a": item(None), "b": item("null")},  # null in the text: the standard encoder
        {"a": item("\x00\x1f\x7f control characters")},
    ],
)
def test_values_read_back_equal(values: dict[str, Any]) -> None:
    assert json.loads(to_json(values)) == values


def test_what_only_the_standard_encoder_writes_is_written_by_it() -> None:
    values = {"a": item(math.nan), "b": item(math.inf)}
    assert to_json(values) == json.dumps(values, ensure_ascii=False)  # NaN kept, not null
    lone = {"a": item("bad \udfff")}
    assert to_json(lone) == json.dumps(lone, ensure_ascii=False)  # the database refuses it


def test_a_lone_surrogate_is_still_a_row_error(archive: Archive) -> None:
    archive.put_section(Section("p1", {"lg-eng": "People"}, label_field="p2"))
    archive.put_field(Field("p2", "p1", {"lg-eng": "Name"}))
    good = NewRecord("p1", {"p2": item("Anna")}, external_id="a")
    bad = NewRecord("p1", {"p2": item("Bad \udfff")}, external_id="b")
    result = archive.submit_upsert([good, bad], source="test", per_row=True).result()
    assert result.created == 1 and [position for position, _ in result.failed] == [1]
    assert "surrogate" in result.failed[0][1]
    assert archive.get_record(RecordKey("p1", 1)).values == {"p2": item("Anna")}
