"""Record changes heard through LISTEN/NOTIFY on the real server: across processes within a
second, keys only, restricted ids withheld, nothing from a rollback."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn, connect, database_name
from app.core.archive.postgres.record_changes import (
    MIGRATION_NAME,
    RecordChange,
    RecordChangeListener,
    ensure_record_changes,
    has_record_changes,
    parse_change,
)
from app.core.archive.postgres.record_versions import update_record_if_version
from app.core.archive.postgres.roles import CONVERSATION_OWNER_STEP, grant
from app.core.archive.postgres.schema import LEXICAL_NAME
from app.core.errors import ArchiveError
from tests.core.archive.postgres import pg_children
from tests.postgres_server import PgServer

ROUNDS = 5
TOUCH = "UPDATE records SET updated_at = now() WHERE section_tipo = %s AND section_id = %s"


@pytest.fixture
def people(pg_server: PgServer, demo_on_postgres: str) -> Iterator[dict[str, str]]:
    """ana reads the demo archive without the restricted right, berta with it."""
    db = database_name(demo_on_postgres)
    urls = {}
    with connect(demo_on_postgres, autocommit=True) as conn:
        for who, restricted in (("ana", False), ("berta", True)):
            role = f"{db}_{who}"
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{who}'")
            grant(conn, db, role, restricted=restricted)
            urls[who] = pg_server.url(db, user=role, password=f"pw-{who}")
    yield urls


def heard(listener: RecordChangeListener, timeout: float = 2.0) -> list[RecordChange]:
    """What arrives: the first change within ``timeout``, then every one until 0.3 s pass
    with none."""
    got = list(listener.changes(timeout=timeout, stop_after=1))
    while got and (more := list(listener.changes(timeout=0.3))):
        got += more
    return got + listener.pending()


def test_a_change_in_one_process_is_heard_in_another_within_a_second(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    ctx = pg_children.context()
    ready, queue = ctx.Event(), ctx.Queue()
    child = ctx.Process(target=pg_children.listen, args=(people["ana"], ROUNDS, 5.0, ready, queue))
    child.start()
    assert ready.wait(timeout=60)
    latencies = []
    with connect(demo_on_postgres) as conn:
        for number in range(1, ROUNDS + 1):
            sent = time.time()
            conn.execute(TOUCH, ("rsc197", number))
            conn.commit()
            got = queue.get(timeout=10)
            assert got is not None, "no notification within 5 s"
            payload, section_id, received = got
            assert (payload, section_id) == (f"rsc197:{number}:update", number)
            latencies.append(received - sent)
    child.join(timeout=30)
    assert child.exitcode == 0
    shown = ", ".join(f"{1000 * s:.1f}" for s in latencies)
    print(f"\nupdate -> heard in another process (ms, from before the UPDATE): {shown}")
    assert max(latencies) < 1.0


def test_inserts_deletes_and_links_are_heard_and_a_rollback_is_not(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    with RecordChangeListener(people["ana"]) as listener, connect(demo_on_postgres) as conn:
        conn.execute(TOUCH, ("rsc197", 1))
        conn.rollback()
        conn.execute(
            "INSERT INTO records(section_tipo, section_id, data, created_at, updated_at) "
            "VALUES ('rsc197', 900, '{}', now(), now())"
        )
        conn.execute("INSERT INTO links VALUES ('rsc197', 900, 'rsc90', 'rsc197', 2)")
        conn.commit()
        conn.execute("DELETE FROM links WHERE from_section = 'rsc197' AND from_id = 900")
        conn.execute("DELETE FROM records WHERE section_tipo = 'rsc197' AND section_id = 900")
        conn.commit()
        changes = heard(listener)
        writer_pid = conn.info.backend_pid
    assert [c.payload() for c in changes] == [
        "rsc197:900:insert",
        "rsc197:900:link",
        "rsc197:2:link",
        "rsc197:900:link",  # the second transaction: the link goes, then the record
        "rsc197:2:link",
        "rsc197:900:delete",
    ]
    assert {c.pid for c in changes} == {writer_pid}
    assert changes[0].key == RecordKey("rsc197", 900)


def test_a_restricted_record_change_names_its_section_only(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    """Keys only, never values; and for a restricted record (its section's flag or its own),
    not even its id: any role may LISTEN, and row-level security does not cover notifications."""
    with connect(demo_on_postgres) as conn:
        row = conn.execute("SELECT data::text FROM records WHERE section_tipo = 'oh1'").fetchone()
        assert row is not None
        secret_text = str(row[0])
        listeners = [RecordChangeListener(people[who]) for who in ("ana", "berta")]
        try:
            conn.execute(TOUCH, ("oh1", 3))  # a restricted section
            conn.execute(
                "UPDATE records SET restricted = true WHERE section_tipo = 'rsc197' "
                "AND section_id = 5"
            )  # an open section's record made restricted: the change is withheld too
            conn.commit()
            conn.execute(TOUCH, ("rsc197", 5))  # now restricted by its own flag
            conn.execute(TOUCH, ("rsc197", 6))  # open
            conn.commit()
            seen = [[c.payload() for c in heard(one)] for one in listeners]
        finally:
            for one in listeners:
                one.close()
    expected = ["oh1::update", "rsc197::update", "rsc197::update", "rsc197:6:update"]
    assert seen[0] == seen[1] == expected
    for payload in seen[0]:
        assert payload.split(":")[0] in ("oh1", "rsc197")
        assert payload not in secret_text and len(payload) < 40
    assert parse_change("oh1::update") == RecordChange("oh1", None, "update")
    assert parse_change("oh1::update").key is None


def test_a_link_to_a_restricted_record_withholds_both_ends(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    with RecordChangeListener(people["ana"]) as listener, connect(demo_on_postgres) as conn:
        conn.execute("INSERT INTO links VALUES ('oh1', 1, 'oh24', 'rsc197', 7)")
        conn.commit()
        changes = heard(listener)
    assert [c.payload() for c in changes] == ["oh1::link", "rsc197::link"]


def test_a_payload_that_is_not_a_change_is_dropped(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    """Any connected role may NOTIFY on the channel: the listener keeps only changes."""
    with RecordChangeListener(people["berta"]) as listener, connect(people["ana"]) as conn:
        for fake in ("hello", "rsc197:x:update", "rsc197:1:drop", ":1:update", "a:b"):
            conn.execute("SELECT pg_notify('arxiu_records', %s)", (fake,))
        conn.execute("SELECT pg_notify('arxiu_records', 'rsc197:1:update')")
        conn.commit()
        changes = heard(listener)
    assert [c.payload() for c in changes] == ["rsc197:1:update"]
    assert listener.dropped == 5
    for fake in ("hello", "rsc197:١:update", "rsc197:-1:update"):
        with pytest.raises(ArchiveError) as refused:
            parse_change(fake)
        assert refused.value.code == "archive.change_malformed"


def _drop_triggers(conn: Conn) -> None:
    conn.execute("DROP TRIGGER records_notify ON records")
    conn.execute("DROP TRIGGER links_notify ON links")
    conn.execute("DELETE FROM _migrations WHERE name = %s", (MIGRATION_NAME,))
    conn.commit()


def test_an_archive_made_before_the_triggers_gets_them_and_again_is_harmless(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    with connect(demo_on_postgres) as conn:
        assert has_record_changes(conn)
        _drop_triggers(conn)
        assert not has_record_changes(conn)
        with RecordChangeListener(people["ana"]) as listener:
            conn.execute(TOUCH, ("rsc197", 1))
            conn.commit()
            assert heard(listener, timeout=0.5) == []
            for _ in range(2):
                with conn.transaction():
                    ensure_record_changes(conn)
            conn.execute(TOUCH, ("rsc197", 1))
            conn.commit()
            assert [c.payload() for c in heard(listener)] == ["rsc197:1:update"]
        names = conn.execute("SELECT name FROM _migrations ORDER BY name").fetchall()
    assert names == [
        ("pg_0001_base",),
        (MIGRATION_NAME,),
        (CONVERSATION_OWNER_STEP,),
        (LEXICAL_NAME,),
    ]


def test_a_lost_connection_is_a_coded_error(pg_server: PgServer, people: dict[str, str]) -> None:
    with RecordChangeListener(people["ana"]) as listener:
        with pg_server.admin() as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (listener.backend_pid,))
        with pytest.raises(ArchiveError) as lost:
            list(listener.changes(timeout=5))
    assert lost.value.code == "archive.pg_listen_lost"
    assert lost.value.retryable


def test_a_writer_without_the_restricted_right_is_heard_and_hides_nothing_it_cannot_see(
    pg_server: PgServer, people: dict[str, str], demo_on_postgres: str
) -> None:
    """The triggers run as the archive's owner (their helpers are no one else's to call), so a
    writer's change is announced; a restricted record stays out of that writer's reach."""
    db = database_name(demo_on_postgres)
    role = f"{db}_carles"
    with connect(demo_on_postgres, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        grant(conn, db, role, write=True)
    writer = pg_server.url(db, user=role, password="pw")
    with RecordChangeListener(people["ana"]) as listener, connect(writer) as conn:
        version = conn.execute(
            "SELECT version FROM records WHERE section_tipo = 'rsc197' AND section_id = 8"
        ).fetchone()
        assert version is not None
        conn.commit()  # else the update would be a savepoint of the read's transaction
        update_record_if_version(
            conn, RecordKey("rsc197", 8), {"rsc84": [{"value": "Carles"}]}, int(str(version[0]))
        )
        with pytest.raises(ArchiveError) as hidden:
            update_record_if_version(conn, RecordKey("oh1", 2), {}, 1)
        assert hidden.value.code == "archive.record_not_found"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT arxiu_notify_change('oh1', 2, false, 'update')")
        conn.rollback()
        changes = heard(listener)
    assert [c.payload() for c in changes] == ["rsc197:8:update"]
