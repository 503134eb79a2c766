"""The planned bulk upsert stores what the record-by-record path stores, in a few statements."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, Field, RecordKey, Section, open_archive
from app.core.archive.bulk import NewRecord, UpsertResult, upsert_in_order, upsert_planned
from app.core.archive.bulk_plan import Replan
from app.core.archive.model import NEUTRAL_LANG
from app.core.archive.records import normalize_values

Upsert = Callable[[sqlite3.Connection, str, list[NewRecord]], UpsertResult]
SOURCE = "test"


def _schema(archive: Archive) -> None:
    archive.put_section(Section("p1", {"lg-eng": "People"}, label_field="p2"))
    archive.put_field(Field("p2", "p1", {"lg-eng": "Name"}))
    archive.put_field(Field("p3", "p1", {"lg-eng": "Knows"}, kind="relation", target_section="p1"))
    archive.put_section(Section("d1", {"lg-eng": "Documents"}, label_field="d2"))
    archive.put_field(Field("d2", "d1", {"lg-eng": "Title"}))
    archive.put_field(Field("d3", "d1", {"lg-eng": "Author"}, kind="relation", target_section="p1"))


def _person(name: str, ext: str | None, *, knows: tuple[int, ...] = (), **extra: Any) -> NewRecord:
    values: dict[str, list[dict[str, Any]]] = {"p2": [{"lang": "lg-eng", "value": name}]}
    if knows:
        values["p3"] = [{"value": {"section_tipo": "p1", "section_id": i}} for i in knows]
    return NewRecord("p1", values, external_id=ext, **extra)


def _document(title: str, ext: str, author: int) -> NewRecord:
    values: dict[str, list[dict[str, Any]]] = {
        "d2": [{"value": title}],
        "d3": [{"value": {"section_tipo": "p1", "section_id": author}}],
    }
    return NewRecord("d1", values, external_id=ext)


def _seeded(path: Path) -> Archive:
    """An archive with people, a document, a deleted record whose external id remains."""
    archive = open_archive(path, create=True)
    _schema(archive)
    archive.upsert_records(
        [
            _person("Anna", "a"),
            _person("Bernat", "b", knows=(1,)),
            _person("Carme", "c", restricted=True),
            _person("Dolors", "d"),
            _document("Letter", "letter", 1),
        ],
        source=SOURCE,
    )
    archive.delete_record(RecordKey("p1", 4))  # "d" still maps to p1/4, now gone
    return archive


def _mixed_batch() -> list[NewRecord]:
    return [
        _person("Anna", "a"),  # unchanged
        _person("Bernat Vidal", "b", knows=(1, 3)),  # changed, with a new link
        _person("Carme", "c", restricted=False),  # restriction changed
        _person("Dolors", "d"),  # its record was deleted: created again at p1/4
        _person("Eulàlia", "e", knows=(2,)),  # new
        _person("Eulàlia Soler", "e", knows=(1,)),  # the same again: updated in the batch
        _person("Ferran", "f"),  # new
        _person("Ferran", "f"),  # the same again: unchanged
        _person("Gil", None, section_id=2),  # by id: updates p1/2 ("b")
        _person("Helena", None, section_id=40),  # by id, new
        _person("Helena", None, section_id=40),  # by id, unchanged
        _person("Isidre", None),  # new: the next fresh id (p1/7), as record by record
        _document("Letter, second draft", "letter", 5),
        _document("Notes", "notes", 40),
    ]


def _state(archive: Archive) -> dict[str, list[tuple[Any, ...]]]:
    """Everything a bulk upsert writes, time stamps aside."""
    queries = {
        "records": "SELECT section_tipo, section_id, data, version, restricted FROM records",
        "links": "SELECT * FROM links",
        "external_ids": "SELECT * FROM external_ids",
        "id_marks": "SELECT * FROM id_marks",
    }
    with archive.db.reading() as conn:
        return {
            name: sorted(tuple(row) for row in conn.execute(sql).fetchall())
            for name, sql in queries.items()
        }


def _both(
    tmp_path: Path, batch: list[NewRecord], planned: Upsert, reference: Upsert
) -> tuple[tuple[UpsertResult, dict[str, Any]], tuple[UpsertResult, dict[str, Any]]]:
    out = []
    for name, upsert in (("planned", planned), ("reference", reference)):
        archive = _seeded(tmp_path / name)
        result = archive.db.write(lambda conn, u=upsert: u(conn, SOURCE, batch))  # type: ignore[misc]
        out.append((result, _state(archive)))
        archive.close()
    return out[0], out[1]


def test_a_mixed_batch_is_stored_as_record_by_record(tmp_path: Path) -> None:
    batch = _mixed_batch()
    (planned, planned_state), (reference, reference_state) = _both(
        tmp_path, batch, upsert_planned, upsert_in_order
    )

    assert planned == reference
    assert (planned.created, planned.updated, planned.unchanged) == (6, 5, 3)
    assert planned_state == reference_state
    assert planned.keys[3] == RecordKey("p1", 4) and planned.keys[11] == RecordKey("p1", 7)
    assert ("p1", 5, "p3", "p1", 1) in planned_state["links"]  # "e" as the batch left it
    assert ("p1", 5, "p3", "p1", 2) not in planned_state["links"]
    versions = {(r[0], r[1]): r[3] for r in planned_state["records"]}
    assert versions[("p1", 2)] == 3 and versions[("p1", 5)] == 2  # two updates; created+updated


def test_a_second_import_of_the_batch_is_stored_as_record_by_record(tmp_path: Path) -> None:
    batch = _mixed_batch()

    def twice(upsert: Upsert) -> Upsert:
        def run(conn: sqlite3.Connection, source: str, records: list[NewRecord]) -> UpsertResult:
            upsert_planned(conn, source, records)
            return upsert(conn, source, records)

        return run

    (planned, planned_state), (reference, reference_state) = _both(
        tmp_path, batch, twice(upsert_planned), twice(upsert_in_order)
    )
    assert planned == reference and planned_state == reference_state
    assert planned.created == 1 and planned.unchanged == 9  # Isidre has no id: new each time


def test_failing_records_are_left_out_as_record_by_record(tmp_path: Path) -> None:
    batch = _mixed_batch()
    batch.insert(5, _person("Bad\udfff", "bad"))  # cannot be encoded: fails at the insert
    not_a_list: Any = "not a list"
    batch.insert(2, NewRecord("p1", {"p2": not_a_list}, external_id="worse"))  # at normalising
    batch.append(NewRecord("nowhere", {}, external_id="x"))  # unknown section

    def reference(conn: sqlite3.Connection, source: str, records: list[NewRecord]) -> Any:
        return upsert_in_order(conn, source, records, per_row=True)

    results = []
    for name in ("planned", "reference"):
        archive = _seeded(tmp_path / name)
        if name == "planned":
            result = archive.submit_upsert(batch, source=SOURCE, per_row=True).result()
        else:
            result = archive.db.write(lambda conn: reference(conn, SOURCE, batch))
        results.append((result, _state(archive)))
        archive.close()

    (planned, planned_state), (expected, expected_state) = results
    assert [position for position, _ in planned.failed] == [2, 6, 16]
    assert planned == expected and planned_state == expected_state


def test_without_per_row_a_failure_is_raised_as_before(tmp_path: Path) -> None:
    archive = _seeded(tmp_path / "a")
    before = _state(archive)
    batch = [*_mixed_batch(), _person("Bad\udfff", "bad")]
    with pytest.raises(UnicodeEncodeError):
        archive.upsert_records(batch, source=SOURCE)
    assert _state(archive) == before
    archive.close()


def test_a_fresh_id_that_a_record_took_explicitly_is_replanned(tmp_path: Path) -> None:
    batch = [_person("Joan", "j"), _person("Kim", None, section_id=6), _person("Lluís", "l")]
    archive = _seeded(tmp_path / "a")  # next free id: 5 (p1/4 was deleted)
    with pytest.raises(Replan):
        archive.db.write(lambda conn: upsert_planned(conn, SOURCE, batch))
    result = archive.submit_upsert(batch, source=SOURCE, per_row=True).result()
    assert result.keys == [RecordKey("p1", 5), RecordKey("p1", 6)]  # as record by record
    assert [position for position, _ in result.failed] == [2]
    assert "UNIQUE" in result.failed[0][1]
    archive.close()


def test_a_batch_takes_a_few_statements_not_some_per_record(tmp_path: Path) -> None:
    archive = _seeded(tmp_path / "a")
    batch = [_person(f"P{i}", f"ext-{i}", knows=(1,)) for i in range(300)]
    statements: list[str] = []

    def run(conn: sqlite3.Connection) -> UpsertResult:
        conn.set_trace_callback(statements.append)
        try:
            return upsert_planned(conn, SOURCE, batch)
        finally:
            conn.set_trace_callback(None)

    result = archive.db.write(run)
    assert result.created == 300
    assert len([s for s in statements if not s.startswith(("INSERT", "DELETE"))]) < 10
    assert archive.count_records("p1") == 303
    assert len(archive.links_to(RecordKey("p1", 1))) == 302  # and "b", and the letter
    archive.close()


def test_normalised_items_keep_their_ids_and_languages_whatever_their_type() -> None:
    values: Any = {
        "f1": [
            {"value": "a", "id": "7", "lang": "lg-cat"},
            {"value": "b", "id": 2.0, "lang": None},
            {"value": "c", "id": True, "lang": 5, "lang_guessed": True, "extra": 1},
            {"value": "d", "id": 0, "lang": ""},
        ],
        "f2": [],
        "f3": None,
    }
    assert normalize_values(values) == {
        "f1": [
            {"id": 7, "lang": "lg-cat", "value": "a"},
            {"id": 2, "lang": NEUTRAL_LANG, "value": "b"},
            {"id": 1, "lang": "5", "value": "c", "lang_guessed": True},
            {"id": 4, "lang": NEUTRAL_LANG, "value": "d"},
        ]
    }


@pytest.mark.parametrize("upsert", [upsert_planned, upsert_in_order], ids=["planned", "in order"])
def test_a_reimport_that_says_nothing_of_access_keeps_a_persons_restriction(
    tmp_path: Path, upsert: Upsert
) -> None:
    archive = open_archive(tmp_path / "a", create=True)
    _schema(archive)
    archive.db.write(lambda conn: upsert(conn, SOURCE, [_person("Anna", "a")]))
    archive.db.write(lambda conn: conn.execute("UPDATE records SET restricted = 1"))
    changed = [_person("Anna Pujol", "a")]  # changed values, no word on access
    result = archive.db.write(lambda conn: upsert(conn, SOURCE, changed))
    assert result.updated == 1
    assert archive.find_record(RecordKey("p1", 1)).restricted is True  # type: ignore[union-attr]
    again = archive.db.write(lambda conn: upsert(conn, SOURCE, changed))
    assert again.unchanged == 1
    opened = [_person("Anna Pujol", "a", restricted=False)]  # the source opens it: it says so
    archive.db.write(lambda conn: upsert(conn, SOURCE, opened))
    assert archive.find_record(RecordKey("p1", 1)).restricted is False  # type: ignore[union-attr]
    archive.close()
