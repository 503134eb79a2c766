"""Record versions stop lost updates on the real server: two connections edit one record."""

from __future__ import annotations

import threading
import time

import pytest

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import connect, database_name
from app.core.archive.postgres.record_versions import update_record_if_version
from app.core.archive.postgres.roles import grant
from app.core.errors import ArchiveError
from tests.postgres_server import PgServer

KEY = RecordKey("rsc197", 1)
NAME = "rsc84"  # a text field of rsc197
KNOWN_AS = "rsc90"  # a relation field of rsc197


def version_and_name(url: str, key: RecordKey = KEY) -> tuple[int, str]:
    with connect(url, vector=False) as conn:
        row = conn.execute(
            "SELECT version, data -> %s -> 0 ->> 'value' FROM records "
            "WHERE section_tipo = %s AND section_id = %s",
            (NAME, key.section_tipo, key.section_id),
        ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1])  # type: ignore[call-overload]


def named(text: str) -> dict[str, object]:
    return {NAME: [{"lang": "lg-nolan", "value": text}]}


def test_the_second_of_two_edits_of_one_version_is_refused(demo_on_postgres: str) -> None:
    read, _ = version_and_name(demo_on_postgres)
    with connect(demo_on_postgres) as first, connect(demo_on_postgres) as second:
        record = update_record_if_version(first, KEY, named("Núria Casals"), read)
        with pytest.raises(ArchiveError) as stale:
            update_record_if_version(second, KEY, named("Núria C. i Ferrer"), read)
    assert record.version == read + 1
    assert record.values[NAME][0]["value"] == "Núria Casals"
    assert stale.value.code == "archive.version_conflict"
    assert stale.value.category == "conflict"
    assert stale.value.details == {"version": read + 1, "expected_version": read}
    assert version_and_name(demo_on_postgres) == (read + 1, "Núria Casals")


def test_a_concurrent_edit_waits_for_the_first_and_is_refused(demo_on_postgres: str) -> None:
    """Both read version v; the first holds its transaction open; the second waits on the row
    lock, then finds version v + 1 and is refused (no lost update)."""
    read, _ = version_and_name(demo_on_postgres)
    outcome: list[object] = []
    with connect(demo_on_postgres) as first, connect(demo_on_postgres) as second:
        first.execute("SELECT 1")  # an open transaction: the update is a savepoint in it
        update_record_if_version(first, KEY, named("first"), read)

        def edit() -> None:
            started = time.monotonic()
            try:
                update_record_if_version(second, KEY, named("second"), read)
                outcome.append("written")
            except ArchiveError as exc:
                outcome.append(exc.code)
            outcome.append(time.monotonic() - started)

        thread = threading.Thread(target=edit)
        thread.start()
        time.sleep(0.4)
        assert outcome == []  # still waiting for the first transaction
        first.commit()
        thread.join(timeout=30)
    assert outcome[0] == "archive.version_conflict"
    assert isinstance(outcome[1], float) and outcome[1] >= 0.3
    assert version_and_name(demo_on_postgres) == (read + 1, "first")


def test_a_relation_change_rewrites_the_links_and_audit_is_kept(demo_on_postgres: str) -> None:
    read, _ = version_and_name(demo_on_postgres)
    target = {"section_tipo": "rsc197", "section_id": 3}
    value = {KNOWN_AS: [{"lang": "lg-nolan", "value": target}]}
    with connect(demo_on_postgres) as conn:
        update_record_if_version(conn, KEY, value, read, audit={"actor": "ana", "op_id": "op-1"})
        links = conn.execute(
            "SELECT field_tipo, to_section, to_id FROM links "
            "WHERE from_section = 'rsc197' AND from_id = 1 AND field_tipo = %s",
            (KNOWN_AS,),
        ).fetchall()
        audit = conn.execute(
            "SELECT action, actor, op_id, after -> %s -> 0 -> 'value' ->> 'section_id' "
            "FROM audit WHERE section_tipo = 'rsc197' AND section_id = 1",
            (KNOWN_AS,),
        ).fetchall()
    assert links == [(KNOWN_AS, "rsc197", 3)]
    assert audit == [("update", "ana", "op-1", "3")]


def test_bad_edits_are_coded_errors(demo_on_postgres: str) -> None:
    read, name = version_and_name(demo_on_postgres)
    with connect(demo_on_postgres) as conn:
        for key, values, code in (
            (RecordKey("rsc197", 99999), named("x"), "archive.record_not_found"),
            (KEY, {"nope": [{"value": "x"}]}, "archive.field_unknown"),
            (KEY, {NAME: "not a list"}, "archive.value_invalid"),
        ):
            with pytest.raises(ArchiveError) as refused:
                update_record_if_version(conn, key, values, read)
            assert refused.value.code == code
    assert version_and_name(demo_on_postgres) == (read, name)  # nothing written


def test_a_writer_without_the_restricted_right_finds_no_restricted_record(
    pg_server: PgServer, demo_on_postgres: str
) -> None:
    read, _ = version_and_name(demo_on_postgres)
    db = database_name(demo_on_postgres)
    role = f"{db}_carles"
    with connect(demo_on_postgres, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        grant(conn, db, role, write=True)
    with connect(pg_server.url(db, user=role, password="pw")) as conn:
        with pytest.raises(ArchiveError) as hidden:
            update_record_if_version(conn, RecordKey("oh1", 1), {}, 1)
        record = update_record_if_version(conn, KEY, named("by carles"), read)
    assert hidden.value.code == "archive.record_not_found"
    assert record.version == read + 1
