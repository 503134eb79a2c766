"""Records, versions, links, audit and conversations in the archive store."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.archive import Archive, Field, RecordKey, Section, open_archive
from app.core.archive.bulk import NewRecord
from app.core.errors import ArchiveError


@pytest.fixture
def people(archive: Archive) -> Archive:
    archive.put_section(
        Section(
            "rsc197", {"lg-eng": "People", "lg-cat": "Persones"}, label_field="rsc85", writable=True
        )
    )
    archive.put_field(Field("rsc85", "rsc197", {"lg-eng": "Name"}))
    archive.put_field(Field("rsc89", "rsc197", {"lg-eng": "Birth date"}, kind="date"))
    archive.put_section(
        Section("oh1", {"lg-eng": "Oral history"}, restricted=True, label_field="oh16")
    )
    archive.put_field(Field("oh16", "oh1", {"lg-eng": "Title"}, multilingual=True))
    archive.put_field(
        Field("oh24", "oh1", {"lg-eng": "Informant"}, kind="relation", target_section="rsc197")
    )
    return archive


def test_create_read_update_delete_with_versions(people: Archive) -> None:
    key = people.create_record("rsc197", {"rsc85": [{"lang": "lg-nolan", "value": "Anna Pujol"}]})
    record = people.get_record(key)
    assert (record.version, record.text("rsc85")) == (1, "Anna Pujol")
    updated = people.set_field(key, "rsc89", [{"value": "1931"}])
    assert updated.version == 2
    assert updated.text("rsc89") == "1931"
    assert updated.text("rsc85") == "Anna Pujol"
    cleared = people.set_field(key, "rsc89", [])
    assert cleared.version == 3 and "rsc89" not in cleared.values
    people.delete_record(key)
    assert people.find_record(key) is None
    with pytest.raises(ArchiveError) as info:
        people.get_record(key)
    assert info.value.code == "archive.record_not_found"


def test_ids_are_allocated_per_section(people: Archive) -> None:
    first = people.create_record("rsc197", {"rsc85": [{"value": "A"}]})
    second = people.create_record("rsc197", {"rsc85": [{"value": "B"}]})
    interview = people.create_record("oh1", {})
    assert (first.section_id, second.section_id, interview.section_id) == (1, 2, 1)


def test_version_conflict_is_detected(people: Archive) -> None:
    key = people.create_record("rsc197", {"rsc85": [{"value": "A"}]})
    people.set_field(key, "rsc85", [{"value": "B"}], expected_version=1)
    with pytest.raises(ArchiveError) as info:
        people.set_field(key, "rsc85", [{"value": "C"}], expected_version=1)
    assert info.value.code == "archive.version_conflict"
    assert people.get_record(key).text("rsc85") == "B"


def test_unknown_field_and_section_are_refused(people: Archive) -> None:
    key = people.create_record("rsc197", {})
    with pytest.raises(ArchiveError) as info:
        people.set_field(key, "nope", [{"value": 1}])
    assert info.value.code == "archive.field_unknown"
    with pytest.raises(ArchiveError) as info:
        people.create_record("zz9", {})
    assert info.value.code == "archive.section_unknown"


def test_links_in_both_directions(people: Archive) -> None:
    anna = people.create_record("rsc197", {"rsc85": [{"value": "Anna"}]})
    joan = people.create_record("rsc197", {"rsc85": [{"value": "Joan"}]})
    interview = people.create_record(
        "oh1",
        {
            "oh16": [{"lang": "lg-cat", "value": "El pantà"}],
            "oh24": [{"value": anna.to_locator()}, {"value": joan.to_locator()}],
        },
    )
    assert [link.target for link in people.links_from(interview)] == [anna, joan]
    assert [link.source for link in people.links_to(anna)] == [interview]
    people.set_field(interview, "oh24", [{"value": joan.to_locator()}])
    assert people.links_to(anna) == []
    assert [link.source for link in people.links_to(joan)] == [interview]
    people.delete_record(interview)
    assert people.links_to(joan) == []


def test_labels_and_restriction(people: Archive) -> None:
    interview = people.create_record("oh1", {"oh16": [{"lang": "lg-cat", "value": "El pantà"}]})
    person = people.create_record("rsc197", {"rsc85": [{"value": "Anna"}]}, restricted=True)
    other = people.create_record("rsc197", {"rsc85": [{"value": "Joan"}]})
    assert people.record_label(interview, "lg-eng") == "El pantà"
    assert people.is_restricted(interview)
    assert people.is_restricted(person)
    assert not people.is_restricted(other)
    assert people.is_restricted(RecordKey("unknown", 1))


def test_audit_log_is_append_only(people: Archive) -> None:
    key = people.create_record("rsc197", {"rsc85": [{"value": "A"}]}, audit={"op_id": "p1"})
    people.set_field(key, "rsc85", [{"value": "B"}], audit={"op_id": "s1", "plan_hash": "h"})
    rows = people.audit_rows()
    assert [(r["action"], r["op_id"]) for r in rows] == [("create", "p1"), ("update", "s1")]
    assert rows[1]["before"] == {"rsc85": [{"id": 1, "lang": "lg-nolan", "value": "A"}]}
    for statement in ("UPDATE audit SET op_id = 'x'", "DELETE FROM audit"):
        with pytest.raises(ArchiveError):
            people.db.write(lambda c, s=statement: c.execute(s))
    assert len(people.audit_rows()) == 2


def test_failed_write_rolls_back_and_leaves_no_audit(people: Archive) -> None:
    key = people.create_record("rsc197", {"rsc85": [{"value": "A"}]})
    with pytest.raises(ArchiveError):
        people.update_record(
            key, {"rsc85": [{"value": "B"}], "missing": [{"value": 1}]}, audit={"op_id": "x"}
        )
    record = people.get_record(key)
    assert (record.version, record.text("rsc85")) == (1, "A")
    assert people.audit_rows() == []


def test_upsert_is_idempotent_through_external_ids(people: Archive) -> None:
    batch = [
        NewRecord("rsc197", {"rsc85": [{"value": f"P{i}"}]}, external_id=f"ext-{i}")
        for i in range(5)
    ]
    first = people.upsert_records(batch, source="test")
    second = people.upsert_records(batch, source="test")
    assert (first.created, second.created, second.unchanged) == (5, 0, 5)
    changed = [NewRecord("rsc197", {"rsc85": [{"value": "P0 renamed"}]}, external_id="ext-0")]
    third = people.upsert_records(changed, source="test")
    assert (third.created, third.updated) == (0, 1)
    key = people.external_key("test", "ext-0")
    assert key is not None and people.get_record(key).version == 2
    assert people.count_records("rsc197") == 5


def test_listeners_hear_committed_changes_only(people: Archive) -> None:
    heard: list[list[RecordKey]] = []
    people.add_listener(heard.append)
    key = people.create_record("rsc197", {})
    with pytest.raises(ArchiveError):
        people.set_field(key, "missing", [{"value": 1}])
    people.set_field(key, "rsc85", [{"value": "x"}])
    assert heard == [[key], [key]]


def test_concurrent_writers_are_serialised(people: Archive) -> None:
    key = people.create_record("rsc197", {"rsc85": [{"value": "0"}]})

    def bump() -> None:
        for _ in range(20):
            record = people.get_record(key)
            try:
                people.set_field(
                    key,
                    "rsc85",
                    [{"value": str(int(record.text("rsc85") or 0) + 1)}],
                    expected_version=record.version,
                )
            except ArchiveError as error:
                assert error.code == "archive.version_conflict"

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    record = people.get_record(key)
    assert int(record.text("rsc85") or 0) == record.version - 1


async def test_conversations_round_trip(people: Archive) -> None:
    await people.save_conversation(
        {
            "id": "c1",
            "title": "Reservoir",
            "model": "local",
            "history": [{"role": "user", "text": "hola"}],
            "pending_plan": {"plan_hash": "h"},
        }
    )
    saved = await people.conversation("c1")
    assert saved is not None
    assert saved["history"] == [{"role": "user", "text": "hola"}]
    assert saved["pending_plan"] == {"plan_hash": "h"}
    await people.save_conversation({**saved, "title": "Renamed", "pending_plan": None})
    assert [c["title"] for c in await people.conversations()] == ["Renamed"]
    await people.delete_conversation("c1")
    assert await people.conversations() == []


def test_data_survives_reopen(tmp_path: Path) -> None:
    archive = open_archive(tmp_path / "a", create=True)
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    key = archive.create_record("s1", {})
    archive.close()
    reopened = open_archive(tmp_path / "a")
    try:
        assert reopened.get_record(key).version == 1
        assert reopened.iter_records("s1").__next__().key == key
    finally:
        reopened.close()
