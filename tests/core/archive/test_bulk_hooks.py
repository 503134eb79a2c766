"""Batch hooks see what a bulk upsert wrote, as stored, inside its transaction; the items a
large import builds in their stored form are kept as they are, and stored the same."""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.core.archive import Archive, Field, RecordKey, Section, open_archive
from app.core.archive.bulk import NewRecord
from app.core.archive.bulk_plan import NormalItems, Written, normal_values, to_json
from app.core.archive.engine import Connection
from app.core.archive.importers import base, items
from app.core.archive.importers.collector import collector_paused
from app.core.archive.records import normalize_values
from app.core.errors import ArchiveError

SOURCE = "t"


@pytest.fixture
def people(archive: Archive) -> Archive:
    archive.put_section(Section("p1", {"lg-eng": "People"}, label_field="p2"))
    archive.put_field(Field("p2", "p1", {"lg-eng": "Name"}))
    return archive


def person(name: str, ext: str, **extra: Any) -> NewRecord:
    return NewRecord("p1", {"p2": [{"lang": "lg-eng", "value": name}]}, external_id=ext, **extra)


def in_transaction(conn: Connection) -> bool:
    """Whether ``conn`` (either engine's) is inside a transaction."""
    if isinstance(conn, sqlite3.Connection):
        return conn.in_transaction
    from psycopg.pq import TransactionStatus

    raw = conn.raw  # type: ignore[attr-defined]
    return bool(raw.info.transaction_status != TransactionStatus.IDLE)


def test_a_hook_sees_each_created_or_changed_record_as_stored(people: Archive) -> None:
    seen: list[list[Written]] = []
    committed: list[int] = []
    other = open_archive(people.location)  # another connection: sees only what is committed

    def count_elsewhere() -> None:
        with other.db.reading() as conn:
            committed.append(conn.execute("SELECT count(*) FROM records").fetchone()[0])

    def hook(conn: Connection, written: list[Written]) -> Callable[[], None]:
        seen.append(written)
        assert in_transaction(conn)
        return count_elsewhere

    people.upsert_records([person("Rosa", "a"), person("Jordi", "b")], source=SOURCE)
    with people.batch_hook(hook):
        result = people.upsert_records(
            [person("Rosa", "a"), person("Jordi Mas", "b", restricted=True), person("Pau", "c")],
            source=SOURCE,
        )
    people.upsert_records([person("Anna", "d")], source=SOURCE)  # after the with: no hook
    assert (result.created, result.updated, result.unchanged) == (1, 1, 1)
    assert len(seen) == 1 and committed == [3]  # told once the batch was visible to others
    by_key = {item.key: item for item in seen[0]}
    assert set(by_key) == {RecordKey("p1", 2), RecordKey("p1", 3)}  # not the unchanged Rosa
    for key, item in by_key.items():
        stored = people.get_record(key)
        assert (item.values, item.version, item.restricted) == (
            stored.values,
            stored.version,
            stored.restricted,
        )
    assert by_key[RecordKey("p1", 2)].version == 2 and by_key[RecordKey("p1", 2)].restricted
    other.close()


CASES: list[dict[str, Any]] = [
    {"a": [{"id": 1, "lang": "lg-eng", "value": "x"}, {"id": 2, "lang": "lg-cat", "value": 3}]},
    {"a": [{"id": 2, "lang": "lg-eng", "value": "x"}]},  # an id that is not the position
    {"a": [{"id": True, "lang": "lg-eng", "value": "x"}]},  # a bool is no id
    {"a": [{"id": 1, "lang": "", "value": "x"}]},  # no language: the neutral one
    {"a": [{"id": 1, "lang": "lg-eng", "value": "x", "lang_guessed": True}]},
    {"a": [{"id": 1, "lang": "lg-eng", "value": "x", "note": "dropped"}]},
    {"a": [{"lang": "lg-eng", "value": "x"}], "b": [], "c": None},
    {"a": [{"id": 1, "lang": "lg-eng", "value": None}]},
]


@pytest.mark.parametrize("values", CASES)
def test_normal_values_equal_normalize_values(values: dict[str, Any]) -> None:
    assert normal_values(values) == normalize_values(values)


def test_items_already_in_their_stored_form_are_not_copied() -> None:
    values: dict[str, list[dict[str, Any]]] = {}
    items.put(values, "a", "one", "lg-eng")
    items.put(values, "a", None)
    items.put_many(values, "a", ["two", None, "three"], "lg-cat")
    items.put_many(values, "b", [None])
    assert normal_values(values)["a"] is values["a"] and "b" not in values
    built: dict[str, list[dict[str, Any]]] = {}
    base.put(built, "a", "one", "lg-eng")
    base.put_many(built, "a", ["two", None, "three"], "lg-cat")
    assert normalize_values(built) == values


def test_fields_the_importers_start_are_taken_whole_and_stored_the_same() -> None:
    values: dict[str, list[dict[str, Any]]] = {}
    items.put(values, "a", "one", "")  # no language: the neutral one, as normalize gives it
    items.put_many(values, "b", ["two", "three"], "lg-cat")
    items.put(values, "b", 4, "lg-eng")
    items.put(values, "c", {"section_tipo": "p1", "section_id": 2})

    assert all(type(found) is NormalItems for found in values.values())
    normal = normal_values(values)
    assert all(normal[tipo] is values[tipo] for tipo in values)  # not walked, not copied
    assert normal == normalize_values(values)
    assert json.loads(to_json(normal)) == normalize_values(values)  # stored, read back equal


def test_bad_values_are_still_refused() -> None:
    with pytest.raises(ArchiveError, match="no 'value'"):
        normal_values({"a": [{"id": 1, "lang": "lg-eng", "text": "x"}]})
    with pytest.raises(ArchiveError, match="must be a list"):
        normal_values({"a": "x"})  # type: ignore[dict-item]


def test_the_collector_is_held_off_while_any_import_runs_and_restored_after() -> None:
    enabled = gc.isenabled()
    gc.enable()
    try:
        inside = threading.Event()
        leave = threading.Event()

        def other_import() -> None:
            with collector_paused():
                inside.set()
                leave.wait(10)

        with collector_paused():
            thread = threading.Thread(target=other_import)
            thread.start()
            assert inside.wait(10) and not gc.isenabled()
        assert not gc.isenabled()  # the other import still runs
        leave.set()
        thread.join(10)
        assert gc.isenabled()
        gc.disable()
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        (gc.enable if enabled else gc.disable)()
