"""Table imports (KIND ``csv``): the real CSV exports, the mapping saved and edited, AtoM rows."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.authorities import AGENTS, SUBJECTS
from app.core.archive.importers.base import ImportOptions
from app.core.archive.importers.tabular import agent_kind, normal_date, preview, split_cell
from app.core.archive.model import RecordKey
from app.core.errors import ImportFailed
from app.core.importing import import_dataset
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import authority_records, lexical_records, own_sections

AGENTS_FILE = "uw-archivesspace/aSpace_agents_20200917.csv"
RECONCILED_FILE = "uw-archivesspace/reconciledValuesWithQNumbers-2021-01-20-cec.csv"
NLA_FILE = "nla-finding-aids/finding-aids-totals.csv"
REAL = {
    AGENTS_FILE: (None, None),
    RECONCILED_FILE: (None, "origination_name"),
    NLA_FILE: ("collection_number", "creator"),
}
"""File → (identifier column, creator column), as the data's README describes them."""


def real_rows(relative: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a real file, read by the csv module alone."""
    path = shared_data("csv-archival", *relative.split("/"))
    with path.open(encoding="utf-8-sig", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    return header, rows


def expected(
    header: list[str], rows: list[list[str]], id_column: str | None, creator_column: str | None
) -> tuple[int, int]:
    """``(records, creator links)``: rows with distinct identifiers (rows without one count
    once per distinct content), and the non-empty creator cells of those first rows."""
    index = header.index(id_column) if id_column else None
    creators = header.index(creator_column) if creator_column else None
    seen: set[tuple[str, ...]] = set()
    links = 0
    for row in rows:
        has_id = index is not None and row[index].strip()
        key = ("id", row[index].strip()) if has_id and index is not None else ("row", *row)
        if key in seen:
            continue
        seen.add(key)
        links += creators is not None and bool(row[creators].strip())
    return len(seen), links


@pytest.mark.parametrize("relative", list(REAL))
def test_each_real_file_imports_every_row_and_again_creates_nothing(
    archive: Archive, relative: str
) -> None:
    header, rows = real_rows(relative)
    path = shared_data("csv-archival", *relative.split("/"))

    first = run_import(archive, "csv", path)
    stubs = authority_records(archive)
    second = run_import(archive, "csv", path)

    records, links = expected(header, rows, *REAL[relative])
    assert first.read == len(rows)
    assert first.created == records + stubs and sum(own_sections(first).values()) == records
    assert len(first.skipped) == len(rows) - records
    assert {s.code for s in first.skipped} <= {"import.duplicate_id"}
    [section] = own_sections(first)
    assert archive.count_records(section) == records
    assert first.links == links and first.unresolved == 0
    if links:
        assert archive.count_records(AGENTS) > 0
    assert (second.created, second.updated, second.unchanged) == (0, 0, records)
    assert second.skipped == first.skipped


@pytest.fixture(scope="module")
def real_archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    """The three real files imported as the front ends do (records, then the lexical index)."""
    archive = open_archive(tmp_path_factory.mktemp("csv-real") / "archive", create=True)
    for relative in REAL:
        import_dataset(archive, "csv", shared_data("csv-archival", *relative.split("/")))
    yield archive
    archive.close()


@pytest.mark.parametrize(
    ("relative", "header", "english", "catalan"),
    [
        (RECONCILED_FILE, "unittitle", "Title", "Títol"),
        (RECONCILED_FILE, "bioghist", "Biographical history", "Història biogràfica"),
        (RECONCILED_FILE, "Qid", "Wikidata id", "Identificador Wikidata"),
        (NLA_FILE, "abstract", "Description", "Descripció"),
    ],
)
def test_a_column_named_after_an_ead_element_is_labelled_in_the_three_languages(
    real_archive: Archive, relative: str, header: str, english: str, catalan: str
) -> None:
    """The real files' machine headers (``unittitle``, ``bioghist``, ``abstract``) become
    fields a Catalan or Spanish window names in its language, not the header as written."""
    header_row, _ = real_rows(relative)
    assert header in header_row
    labels = [f.labels for f in real_archive.fields() if f.section_tipo.startswith("csv")]
    assert any(lab.get("lg-eng") == english and lab.get("lg-cat") == catalan for lab in labels)
    assert {"lg-nolan": header} not in labels


def record_text(archive: Archive, key: RecordKey) -> str:
    record = archive.get_record(key)
    return " ".join(str(i["value"]) for items in record.values.values() for i in items)


@pytest.mark.parametrize(
    ("query", "lang", "answer"),
    [
        ("What is Carlos Bulosan's Wikidata id and which collection is his?", "lg-eng", "Q5041871"),
        ("Quina és la font de l'autoritat 'Bulosan, Aurelio'?", "lg-cat", "NACO Authority File"),
        ("¿Hay papeles de Lady Jane Franklin y de qué fechas?", "lg-spa", "1837 - 1859"),
        (
            "How large are the Papers of Sir Robert Menzies and what years do they span?",
            "lg-eng",
            "151.86 metres",
        ),
    ],
)
def test_the_readme_questions_find_their_records(
    real_archive: Archive, query: str, lang: str, answer: str
) -> None:
    keys = lexical_records(real_archive, query, 50, lang)[:10]

    assert any(answer in record_text(real_archive, key) for key in keys), [
        real_archive.record_label(k) for k in keys
    ]


ATOM = (
    "legacyId,parentId,identifier,title,levelOfDescription,eventDates,eventStartDates,"
    "scopeAndContent,accessConditions,eventActors,subjectAccessPoints,placeAccessPoints,culture\n"
    "F1,,ES-AMV-1,Fons Puig,Fonds,1900-1950,1900,Papers de la família,Open,"
    '"Puig, Josep|Família Puig",Arquitectura|Urbanisme,Vic,ca\n'
    "S1,F1,ES-AMV-1.1,Correspondència,Series,,18/07/1936,Cartes,Closed until 2030,"
    '"Puig, Josep",Arquitectura,Vic|Girona,ca\n'
    "I1,S1,ES-AMV-1.1.1,Carta a Gaudí,Item,,,,,,,,ca\n"
    "I2,NOPE,ES-AMV-1.1.2,Carta perduda,Item,,,,,,,,ca\n"
)


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_an_atom_csv_builds_the_hierarchy_links_and_restrictions(
    archive: Archive, tmp_path: Path
) -> None:
    summary = run_import(archive, "csv", write(tmp_path, "atom.csv", ATOM))

    [section] = own_sections(summary)
    code = _field(archive, section, "Reference code")  # AtoM's identifier
    by_id = {r.text(code): r for r in archive.iter_records(section)}
    fonds, series, item, lost = (by_id[f"ES-AMV-{n}"] for n in ("1", "1.1", "1.1.1", "1.1.2"))
    # legacyId is the key re-imports match (and parentId names), not a field or the label's code
    assert {archive.external_key(f"csv:{_layout(archive)}", k) for k in ("F1", "S1")} == {
        fonds.key,
        series.key,
    }
    assert archive.label_of(series, "lg-cat") == "ES-AMV-1.1 · Correspondència"
    assert not any(value.get("value") == "F1" for items in fonds.values.values() for value in items)
    part_of = _field(archive, section, "Part of")
    assert [i["value"]["section_id"] for i in series.items(part_of)] == [fonds.section_id]
    assert [i["value"]["section_id"] for i in item.items(part_of)] == [series.section_id]
    assert lost.items(part_of) == [] and summary.unresolved_targets["parent NOPE"] == 1
    assert archive.is_restricted(series.key) and not archive.is_restricted(fonds.key)
    assert fonds.items(_field(archive, section, "Title"))[0]["lang"] == "lg-cat"
    assert series.text(_field(archive, section, "From")) == "1936-07-18"
    agents = {archive.record_label(k) for k in _targets(fonds, _field(archive, section, "Creator"))}
    assert agents == {"Puig, Josep", "Família Puig"}
    subjects = _targets(fonds, _field(archive, section, "Subjects"))
    assert {k.section_tipo for k in subjects} == {SUBJECTS} and len(subjects) == 2
    assert archive.count_records(AGENTS) == 2  # "Puig, Josep" twice is one person
    # links: fonds 2 agents + 2 subjects + 1 place; series 1 + 1 + 2 + parent; item parent
    assert summary.links == 5 + 5 + 1


def _layout(archive: Archive) -> str:
    """The layout key of the one table imported into ``archive``."""
    with archive.db.reading() as conn:
        [(source,)] = conn.execute(
            "SELECT DISTINCT source FROM external_ids WHERE source LIKE 'csv:%'"
        ).fetchall()
    return str(source)[len("csv:") :]


def _field(archive: Archive, section: str, label: str) -> str:
    [tipo] = [f.tipo for f in archive.fields(section) if f.label("lg-eng") == label]
    return tipo


def _targets(record: object, tipo: str) -> list[RecordKey]:
    assert hasattr(record, "items")
    return [RecordKey(**i["value"]) for i in record.items(tipo)]


def test_the_mapping_is_saved_edited_and_reused_for_the_same_layout(
    archive: Archive, tmp_path: Path
) -> None:
    text = "Codi de referència;Títol;Data;Observacions\nA-1;Primer;1901;nota u\nA-2;Segon;1902;x\n"
    first = run_import(archive, "csv", write(tmp_path, "part1.csv", text, "cp1252"))
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"columns": [{"column": "Observacions", "role": "ignore"}]}))
    edited = run_import(
        archive,
        "csv",
        write(tmp_path, "part2.csv", text.replace("A-2;Segon", "A-3;Tercer"), "cp1252"),
        options=ImportOptions(mapping_file=str(mapping)),
    )
    later = run_import(archive, "csv", write(tmp_path, "part3.csv", text.replace("A-1", "A-4")))

    assert first.sections == {"csv1": 2}
    assert edited.sections == {"csv1": 2} and later.sections == {"csv1": 2}
    assert (edited.created, edited.updated) == (1, 1)  # A-1 lost its note: updated
    assert (later.created, later.updated) == (1, 1)  # A-4 new; A-2 loses its note
    notes = _field(archive, "csv1", "Observacions")
    assert [r for r in archive.iter_records("csv1") if r.items(notes)] == []
    assert archive.section("csv1").labels == {"lg-nolan": "part1"}
    texts = {r.text(_field(archive, "csv1", "Title")) for r in archive.iter_records("csv1")}
    assert texts == {"Primer", "Segon", "Tercer"} and archive.count_records("csv1") == 4


def test_rows_without_an_identifier_are_matched_by_content(
    archive: Archive, tmp_path: Path
) -> None:
    text = "Title,Date\nOne,1900\nTwo,1901\n"
    run_import(archive, "csv", write(tmp_path, "a.csv", text))

    again = run_import(archive, "csv", write(tmp_path, "a.csv", text.replace("Two", "Deux")))

    assert (again.created, again.unchanged) == (1, 1)  # the limit: an edited row is new
    assert archive.count_records("csv1") == 3


def test_preview_shows_the_typed_rows_and_writes_nothing(archive: Archive, tmp_path: Path) -> None:
    path = write(tmp_path, "atom.csv", ATOM)

    shown = preview(path, rows=2, archive=archive)

    assert shown.total_rows == 4 and shown.encoding == "utf-8" and shown.delimiter == ","
    assert [r.external_id for r in shown.rows] == ["F1", "S1"]
    cells = {c.column: c.values for c in shown.rows[1].cells}
    assert cells["placeAccessPoints"] == ("Vic", "Girona")
    assert cells["eventStartDates"] == ("1936-07-18",)
    assert shown.rows[1].restricted is True and shown.rows[0].restricted is None
    assert archive.sections() == []
    assert json.loads(json.dumps(shown.to_dict()))["mapping"]["columns"][0]["role"] == "external_id"


def test_a_semicolon_catalan_utf16_file_keeps_its_accents(archive: Archive, tmp_path: Path) -> None:
    text = "\ufeffTítol;Lloc;Matèries\nCol·lecció Puig;Vic;Façanes|Modernisme\n"
    summary = run_import(archive, "csv", write(tmp_path, "fons.csv", text, "utf-16"))

    [record] = archive.iter_records("csv1")
    assert record.text(_field(archive, "csv1", "Title")) == "Col·lecció Puig"
    assert summary.links == 3
    assert {
        archive.record_label(k) for k in _targets(record, _field(archive, "csv1", "Subjects"))
    } == {
        "Façanes",
        "Modernisme",
    }


def test_helpers() -> None:
    assert split_cell(r"a|b\|c| |d") == ["a", "b|c", "d"]
    assert split_cell("a|b", multi=False) == ["a|b"]
    assert normal_date("18/07/1936") == "1936-07-18"
    assert normal_date("31/02/1936") == "31/02/1936"  # no such day: kept as written
    assert normal_date("1936-07") == "1936-07"
    assert normal_date("c. 1936") == "c. 1936"
    assert agent_kind("Ames, Margaret Beckman, 1856-1909") == "person"
    assert agent_kind("AFL-CIO. Region No. 9") == "corporateBody"
    assert agent_kind("Família Puig") == "family"


@pytest.mark.parametrize("content", [b"", b"\r\n\r\n", b"\xef\xbb\xbf"])
def test_a_file_without_a_header_is_refused(
    archive: Archive, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(content)

    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "csv", path)

    assert caught.value.code == "import.unreadable" and archive.sections() == []


@pytest.mark.parametrize(
    ("names", "hint"),
    [
        (["fons.csv", "notes.txt", "scan.pdf"], "Give one of its tables: fons.csv, notes.txt."),
        (["scan.pdf"], "Give a .csv or .xlsx file; a folder of documents imports with "
         "`arxiu import folder`."),
    ],
)  # fmt: skip
def test_a_folder_given_as_a_table_is_refused_naming_its_tables(
    archive: Archive, tmp_path: Path, names: list[str], hint: str
) -> None:
    """``arxiu import csv FOLDER``: a coded error in words, not the OS's "Is a directory",
    and the tables the folder holds named; nothing written."""
    folder = tmp_path / "exports"
    folder.mkdir()
    for name in names:
        (folder / name).write_text("Títol\nCarta\n", encoding="utf-8")

    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "csv", folder)

    assert caught.value.code == "import.unreadable"
    assert caught.value.message == f"{folder} is a folder: a table import reads one file."
    assert caught.value.hint == hint
    assert archive.sections() == []
