"""Ids past SQLite's 64-bit range and lone surrogates, found before any query sees them."""

from __future__ import annotations

import pytest

from app.core.archive.ids import SQLITE_MAX, SQLITE_MIN, check_id, check_ids, lone_surrogate_at
from app.core.errors import ArchiveError


def test_check_id_accepts_the_64_bit_range_only() -> None:
    for ok in (0, 1, SQLITE_MAX, SQLITE_MIN, "12", None, True, 1.5):
        check_id(ok)
    for bad in (SQLITE_MAX + 1, SQLITE_MIN - 1, 10**30):
        with pytest.raises(ArchiveError) as caught:
            check_id(bad, "context.section_id")
        assert caught.value.code == "archive.id_out_of_range"
        assert caught.value.category == "input"
        assert caught.value.details == {"field": "context.section_id"}


def test_check_ids_walks_every_id_key_and_nothing_else() -> None:
    check_ids({"limit": 10**30, "values": {"rsc89": 10**30}, "section_id": 5})
    nested = {"ops": [{"args": {"target": {"section_tipo": "x", "section_id": 2**63}}}]}
    with pytest.raises(ArchiveError) as caught:
        check_ids(nested)
    assert caught.value.details["field"] == "ops.args.target.section_id"
    with pytest.raises(ArchiveError):
        check_ids([{"media_id": -(2**64)}])
    deep: list[object] = []
    for _ in range(10_000):  # deeper than the walk goes: no recursion, no error
        deep = [deep]
    check_ids(deep)


def test_lone_surrogates_are_found_in_values_and_keys() -> None:
    assert lone_surrogate_at({"q": "a 😀 b", "n": 1}) is None
    assert lone_surrogate_at({"options": {"question": "a \ud800"}}) == "options.question"
    assert lone_surrogate_at({"history": [{"text": "ok"}, {"text": "\udfff"}]}) == "history[1].text"
    assert lone_surrogate_at({"a": {"\udc00": 1}}) == "a"
    assert lone_surrogate_at("\ud83d") == "value"
