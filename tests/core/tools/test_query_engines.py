"""Field filters give the same answers on both engines: the compiled SQL is SQLite's or
PostgreSQL's (``archive.db.dialect``), and the server's ``arxiu_fold`` folds as Python's
``fold`` does; an archive copied before the server had ``arxiu_fold`` gets it from its owner;
find-or-create from several workstations at once creates one record.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from app.core.archive import Archive, Field, Section, open_archive
from app.core.archive.engine import Connection
from app.core.archive.postgres.connect import connect, database_name
from app.core.archive.postgres.roles import grant
from app.core.archive.postgres.schema import has_fold
from app.core.archive.records import next_id
from app.core.tools import matching
from app.core.tools.base import ToolContext
from app.core.tools.query import prepare
from app.core.tools.registry import ToolRegistry
from app.core.tools.resolve import fold
from tests.postgres_server import PgServer

NOLAN = "lg-nolan"
FOLDED = [
    "  Súria  ",
    "ÀÉÎÕÜ çÇ ñÑ",
    "Straße STRASSE ẞ",
    "ΣΊΣΥΦΟΣ ς",
    "Ωmega Ǆ ﬁ ĳ",
    "e\u0301\u0327 a\u0308",
    "a\u00a0b\u2003c\u3000d\te\nf\r\ng",
    "İstanbul",
    "Łódź ØRE Đ Æ Œ Þ",
    "Москва ЁЛКА",
    "l·l «cat» — ‘x’ 50% a_b",
    "１２３ ＡＢＣ ①",
    "\u2028x\u2029",
    "",
]
"""Texts whose folding differs from plain lower-casing (decomposition, ``casefold``'s
expansions, every kind of white space)."""


def test_the_sql_fold_is_pythons_fold(archive: Archive) -> None:
    with archive.db.reading() as conn:
        prepare(archive.db, conn)
        for text in FOLDED:
            row = conn.execute("SELECT arxiu_fold(?)", (text,)).fetchone()
            assert row is not None and row[0] == fold(text), text
        empty = conn.execute("SELECT arxiu_fold(?)", (None,)).fetchone()
        assert empty is not None and empty[0] is None


@pytest.fixture
def things(archive: Archive) -> Archive:
    """A section ``th1`` whose values are numbers, texts starting like numbers, booleans and
    texts (ids 1-7)."""
    archive.put_section(Section("th1", {"lg-eng": "Things"}, writable=True, label_field="th2"))
    for position, (tipo, label) in enumerate(
        (("th2", "Name"), ("th3", "Measure"), ("th4", "Checked"), ("th5", "Note")), start=1
    ):
        archive.put_field(Field(tipo, "th1", {"lg-eng": label}, "text", False, None, position))
    rows: list[tuple[str, Any, Any, list[tuple[str, str]]]] = [
        ("Zeta", 1936, True, [("lg-cat", "Una nota llarga sobre Súria")]),
        ("alfa", "1936-05-02", False, [("lg-eng", "A note")]),
        ("Ærø", "-3 graus", 1, []),
        ("50% off", "12abc", 0, [("lg-spa", "Ñandú  del   río")]),
        ("a_b", "abc", "true", []),
        ("  Maria   SERRA ", 4.5, None, []),
        ("big", "1e999 vegades", None, []),
    ]
    for name, measure, checked, notes in rows:
        values: dict[str, list[dict[str, Any]]] = {
            "th2": [{"lang": NOLAN, "value": name}],
            "th3": [{"lang": NOLAN, "value": measure}],
        }
        if checked is not None:
            values["th4"] = [{"lang": NOLAN, "value": checked}]
        if notes:
            values["th5"] = [{"lang": lang, "value": text} for lang, text in notes]
        archive.create_record("th1", values)
    return archive


async def _ids(registry: ToolRegistry, archive: Archive, *filters: dict[str, Any]) -> list[int]:
    ctx = ToolContext(archive=archive)
    result = await registry.call(
        "dedalo_search_records", {"section_tipo": "th1", "filters": list(filters)}, ctx
    )
    assert result.ok, result.message
    return [r["section_id"] for r in result.data["records"]]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"field": "th3", "op": "gte", "value": 1936}, [1, 2, 7]),
        ({"field": "th3", "op": "lt", "value": 0}, [3]),
        ({"field": "th3", "op": "between", "value": [4, 13]}, [4, 6]),
        ({"field": "th3", "op": "equals", "value": 12}, [4]),
        ({"field": "th3", "op": "gt", "value": "1936"}, [2, 5, 6, 7]),
        ({"field": "th2", "op": "lt", "value": "a"}, [1, 4, 6]),
        ({"field": "th2", "op": "gte", "value": "b"}, [3, 7]),
        ({"field": "th4", "op": "equals", "value": True}, [1, 3]),
        ({"field": "th4", "op": "equals", "value": False}, [2, 4]),
        ({"field": "th4", "op": "missing"}, [6, 7]),
        ({"field": "th2", "op": "equals", "value": "maria serra"}, [6]),
        ({"field": "th2", "op": "equals", "value": "AERO"}, []),
        ({"field": "th2", "op": "starts_with", "value": "ÆR"}, [3]),
        ({"field": "th2", "op": "contains", "value": "%"}, [4]),
        ({"field": "th2", "op": "contains", "value": "_"}, [5]),
        ({"field": "th5", "op": "contains", "value": "SURIA"}, [1]),
        ({"field": "th5", "op": "contains", "value": "nandu del rio"}, [4]),
        ({"field": "th5", "op": "contains", "value": "note", "lang": "lg-eng"}, [2]),
        ({"field": "th5", "op": "contains", "value": "nota", "lang": "lg-eng"}, []),
        ({"field": "th5", "op": "exists"}, [1, 2, 4]),
    ],
)
async def test_filters_answer_alike_on_both_engines(
    registry: ToolRegistry, things: Archive, flt: dict[str, Any], expected: list[int]
) -> None:
    assert await _ids(registry, things, flt) == expected


async def test_a_section_search_finds_folded_words_in_any_value(
    registry: ToolRegistry, things: Archive
) -> None:
    ctx = ToolContext(archive=things)
    result = await registry.call(
        "dedalo_search_section", {"section_tipo": "th1", "query": "NANDU rio"}, ctx
    )
    assert result.ok, result.message
    assert [r["section_id"] for r in result.data["records"]] == [4]


def _drop_fold(url: str) -> None:
    with connect(url, autocommit=True) as conn:
        conn.execute("DROP FUNCTION arxiu_fold(text)")
        assert not has_fold(conn)


async def test_a_postgresql_archive_copied_before_arxiu_fold_gets_it_from_its_owner(
    registry: ToolRegistry, pg_server: PgServer, pg_database: str
) -> None:
    with open_archive(pg_database, create=True) as owned:
        owned.put_section(Section("th1", {"lg-eng": "Things"}, label_field="th2"))
        owned.put_field(Field("th2", "th1", {"lg-eng": "Name"}, "text", False, None, 1))
        owned.create_record("th1", {"th2": [{"lang": NOLAN, "value": "Súria"}]})
    _drop_fold(pg_database)
    db = database_name(pg_database)
    role = f"{db}_ana"
    with connect(pg_database, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-ana'")
        grant(conn, db, role)
    filters = [{"field": "th2", "value": "suria"}]
    with open_archive(pg_server.url(db, user=role, password="pw-ana")) as archivist:
        ctx = ToolContext(archive=archivist)
        args = {"section_tipo": "th1", "filters": filters}
        listed = await registry.call("dedalo_search_records", {"section_tipo": "th1"}, ctx)
        assert listed.ok, listed.message  # no text compared, no fold needed
        refused = await registry.call("dedalo_search_records", args, ctx)
        assert (refused.ok, refused.code) == (False, "archive.pg_no_fold")
        assert refused.hint and "owner" in refused.hint
        with connect(pg_database, autocommit=True) as conn:
            assert not has_fold(conn)  # an archivist's open adds no function
        open_archive(pg_database).close()  # the owner's open adds it
        found = await registry.call("dedalo_search_records", args, ctx)
        assert found.ok, found.message
        assert [r["section_id"] for r in found.data["records"]] == [1]


def test_two_postgresql_workstations_finding_or_creating_at_once_create_one_record(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_archive(pg_database, create=True) as owned:
        owned.put_section(Section("th1", {"lg-eng": "Things"}, writable=True, label_field="th2"))
        owned.put_field(Field("th2", "th1", {"lg-eng": "Name"}, "text", False, None, 1))

    def slow_next_id(conn: Connection, tipo: str) -> int:
        time.sleep(0.2)  # between the lookup and the insert: the others look up meanwhile
        return next_id(conn, tipo)

    monkeypatch.setattr(matching, "next_id", slow_next_id)
    stations = [open_archive(pg_database) for _ in range(3)]
    start = threading.Barrier(len(stations))

    def find_or_create_at(archive: Archive, name: str) -> bool:
        start.wait()
        value = {"th2": [{"lang": NOLAN, "value": name}]}
        return matching.find_or_create(archive, "th1", {"th2": name}, value)[1]

    try:
        for round_ in range(2):
            name = f"Thing {round_}"
            with ThreadPoolExecutor(len(stations)) as pool:
                created = list(pool.map(find_or_create_at, stations, [name] * len(stations)))
            assert created.count(True) == 1, name
        assert stations[0].count_records("th1") == 2
    finally:
        for station in stations:
            station.close()
