"""Referential integrity of the store: ids never reused, no deletion under incoming links."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, Field, RecordKey, Section, open_archive
from app.core.archive.database import Database
from app.core.archive.migrations import MIGRATIONS
from app.core.errors import ArxiuError


def _link(tipo: str, sid: int) -> list[dict[str, Any]]:
    return [{"lang": "lg-nolan", "value": {"section_tipo": tipo, "section_id": sid}}]


@pytest.fixture
def linked(archive: Archive) -> Archive:
    """People 1–2; interviews 1 and 2 both name person 2 as informant."""
    archive.put_section(Section("oh1", {"lg-eng": "Interviews"}, writable=True))
    archive.put_section(Section("rsc197", {"lg-eng": "People"}, writable=True))
    archive.put_field(Field("oh2", "oh1", {"lg-eng": "Title"}))
    archive.put_field(
        Field("oh24", "oh1", {"lg-eng": "Informant"}, "relation", target_section="rsc197")
    )
    archive.put_field(Field("rsc85", "rsc197", {"lg-eng": "Name"}))
    for name in ("Pere", "Anna"):
        archive.create_record("rsc197", {"rsc85": [{"lang": "lg-nolan", "value": name}]})
    for title in ("First", "Second"):
        archive.create_record(
            "oh1", {"oh2": [{"lang": "lg-nolan", "value": title}], "oh24": _link("rsc197", 2)}
        )
    return archive


def test_deleting_a_linked_record_is_refused_with_the_linking_records(linked: Archive) -> None:
    anna = RecordKey("rsc197", 2)
    with pytest.raises(ArxiuError) as caught:
        linked.delete_record(anna)
    assert caught.value.code == "archive.record_linked"
    assert caught.value.details["linked_from"] == [
        {"section_tipo": "oh1", "section_id": 1, "field_tipo": "oh24"},
        {"section_tipo": "oh1", "section_id": 2, "field_tipo": "oh24"},
    ]
    assert linked.find_record(anna) is not None


def test_unlink_removes_the_links_reports_them_and_the_id_is_never_reused(
    linked: Archive,
) -> None:
    anna = RecordKey("rsc197", 2)
    audit = {"plan_hash": "h" * 64, "op_id": "d1", "model": "m", "egress": "local"}
    _, removed = linked.delete_record_unlinking(anna, unlink=True, audit=audit)
    assert [link.source for link in removed] == [RecordKey("oh1", 1), RecordKey("oh1", 2)]
    assert linked.links_to(anna) == []
    assert linked.get_record(RecordKey("oh1", 1)).items("oh24") == []
    new = linked.create_record("rsc197", {"rsc85": [{"lang": "lg-nolan", "value": "Rosa"}]})
    assert new == RecordKey("rsc197", 3)  # not 2: the deleted id stays used
    assert linked.links_to(new) == []  # no interview suddenly names Rosa
    actions = [(r["action"], r["section_tipo"], r["section_id"]) for r in linked.audit_rows()]
    assert actions == [("update", "oh1", 1), ("update", "oh1", 2), ("delete", "rsc197", 2)]


def test_deleting_the_last_record_does_not_free_its_id(linked: Archive) -> None:
    last = linked.create_record("rsc197", {"rsc85": [{"lang": "lg-nolan", "value": "Last"}]})
    linked.delete_record(last)
    again = linked.create_record("rsc197", {"rsc85": [{"lang": "lg-nolan", "value": "Next"}]})
    assert again.section_id == last.section_id + 1
    copy = linked.duplicate_record(again)
    assert copy.section_id == again.section_id + 1


def test_an_older_archive_keeps_the_ids_its_audit_says_were_deleted(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    db = Database(folder / "archive.db")
    for number, migration in enumerate(MIGRATIONS[:2], start=1):

        def step(conn: sqlite3.Connection, m: Any = migration, n: int = number) -> None:
            conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY)")
            m.apply(conn)
            conn.execute("INSERT INTO _migrations(name) VALUES (?)", (m.name,))
            conn.execute(f"PRAGMA user_version = {n}")

        db.write(step)

    def history(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO sections(tipo) VALUES ('rsc197')")
        conn.execute(
            "INSERT INTO audit(at, action, section_tipo, section_id) "
            "VALUES ('then', 'delete', 'rsc197', 7)"
        )

    db.write(history)
    db.close()
    with open_archive(folder) as archive:
        assert archive.create_record("rsc197") == RecordKey("rsc197", 8)


def test_an_import_after_a_deletion_does_not_reuse_the_deleted_id(linked: Archive) -> None:
    from app.core.archive.importers.base import reserve_keys

    pere = RecordKey("rsc197", 1)
    linked.create_record("rsc197", {"rsc85": [{"lang": "lg-nolan", "value": "Joan"}]})
    linked.delete_record(RecordKey("rsc197", 3))  # the last person, linked from nothing
    keys = reserve_keys(linked, "test-source", "rsc197", ["new-person"])
    assert keys["new-person"] == RecordKey("rsc197", 4)
    assert linked.find_record(pere) is not None
