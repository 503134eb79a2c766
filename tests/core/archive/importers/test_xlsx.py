"""XLSX: workbooks built here with openpyxl import; hostile zips are refused before openpyxl."""

from __future__ import annotations

import datetime as dt
import hashlib
import zipfile
from pathlib import Path

import openpyxl
import pytest

from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.importers import xlsx as xlsx_module
from app.core.archive.importers.base import ImportOptions
from app.core.archive.importers.xlsx import check_workbook, read_xlsx
from app.core.errors import ImportFailed
from tests.core.archive.importers.lookups import authority_records, own_sections

ROWS: list[list[object]] = [
    ["Codi de referència", "Títol", "Data", "Autor"],
    ["ES-1", "Fons Puig i Cadafalch", dt.datetime(1936, 7, 18), "Puig i Cadafalch, Josep"],
    ["ES-2", "Col·lecció de cançons", 1950, "Amades, Joan"],
    ["ES-3", '=HYPERLINK("http://example.org","x")', None, None],
]


def make_workbook(path: Path, rows: list[list[object]] = ROWS, extra_sheet: bool = False) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Inventari"
    for row in rows:
        sheet.append(row)
    formula = sheet.cell(row=4, column=2)
    formula.data_type = "s"  # a formula-like text cell, as a spreadsheet stores typed text
    if extra_sheet:
        other = book.create_sheet("Altres")
        other.append(["Title", "Date"])
        other.append(["Second sheet", "2001"])
    book.save(path)
    return path


def rewrite(source: Path, target: Path, changes: dict[str, bytes]) -> Path:
    """A copy of the workbook ``source`` with some parts replaced or added."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            new.writestr(item.filename, changes.get(item.filename, old.read(item.filename)))
        for name in set(changes) - set(old.namelist()):
            new.writestr(name, changes[name])
    return target


def archive_digest(archive: Archive) -> str:
    with archive.db.reading() as conn:
        rows = conn.execute("SELECT section_tipo, section_id, data FROM records ORDER BY 1, 2")
        return hashlib.sha256(repr([tuple(r) for r in rows]).encode()).hexdigest()


def test_a_workbook_reads_as_a_table_with_typed_cells(tmp_path: Path) -> None:
    table = read_xlsx(make_workbook(tmp_path / "inventari.xlsx"))

    assert table.header == ROWS[0]
    assert [r.cells for r in table.rows] == [
        ("ES-1", "Fons Puig i Cadafalch", "1936-07-18", "Puig i Cadafalch, Josep"),
        ("ES-2", "Col·lecció de cançons", "1950", "Amades, Joan"),
        ("ES-3", '=HYPERLINK("http://example.org","x")', "", ""),
    ]
    assert [r.line for r in table.rows] == [2, 3, 4]


def test_a_workbook_imports_with_its_catalan_header_and_a_chosen_sheet(
    archive: Archive, tmp_path: Path
) -> None:
    path = make_workbook(tmp_path / "inventari.xlsx", extra_sheet=True)

    first = run_import(archive, "csv", path)
    stubs = authority_records(archive)
    second = run_import(archive, "csv", path, options=ImportOptions(sheet="Altres"))
    again = run_import(archive, "csv", path)

    assert (first.created, first.links, first.skipped) == (3 + stubs, 2, [])
    assert sum(own_sections(first).values()) == 3 and stubs == 2  # a person and a place
    assert second.created == 1 and set(second.sections) != set(first.sections)
    assert (again.created, again.unchanged) == (0, 3)
    [tipo] = own_sections(first)
    titles = {r.text(archive.section(tipo).label_field or "") for r in archive.iter_records(tipo)}
    assert '=HYPERLINK("http://example.org","x")' in titles
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "csv", path, options=ImportOptions(sheet="Nope"))
    assert caught.value.code == "import.sheet_unknown"


def hostile(tmp_path: Path, name: str) -> Path:
    good = make_workbook(tmp_path / "good.xlsx")
    if name == "not_zip":
        return _write(tmp_path / "bad.xlsx", b"title,date\nthis is CSV, not a workbook\n")
    if name == "truncated":
        return _write(tmp_path / "bad.xlsx", good.read_bytes()[: good.stat().st_size // 2])
    if name == "bomb":
        return rewrite(good, tmp_path / "bad.xlsx", {"xl/worksheets/sheet1.xml": b" " * 4_000_000})
    if name == "entities":
        laughs = (
            b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><sst>&lol2;</sst>'
        )
        return rewrite(good, tmp_path / "bad.xlsx", {"xl/sharedStrings.xml": laughs})
    if name == "shared_strings":
        huge = b'<?xml version="1.0"?><sst count="3000000" uniqueCount="3000000"></sst>'
        return rewrite(good, tmp_path / "bad.xlsx", {"xl/sharedStrings.xml": huge})
    if name == "rows":
        sheet = zipfile.ZipFile(good).read("xl/worksheets/sheet1.xml")
        sheet = sheet.replace(b'<dimension ref="A1:D4"/>', b'<dimension ref="A1:D2000000"/>')
        assert b"A1:D2000000" in sheet
        return rewrite(good, tmp_path / "bad.xlsx", {"xl/worksheets/sheet1.xml": sheet})
    raise AssertionError(name)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("not_zip", "import.not_zip"),
        ("truncated", "import.not_zip"),
        ("bomb", "import.zip_bomb"),
        ("entities", "import.xml_entity"),
        ("shared_strings", "import.too_large"),
        ("rows", "import.too_many_rows"),
    ],
)
def test_hostile_workbooks_are_refused_with_a_code_and_change_nothing(
    archive: Archive, tmp_path: Path, name: str, code: str
) -> None:
    run_import(archive, "csv", make_workbook(tmp_path / "first.xlsx"))
    before = archive_digest(archive)
    path = hostile(tmp_path, name)

    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "csv", path)

    assert caught.value.code == code
    assert archive_digest(archive) == before


def test_a_workbook_expanding_past_the_total_bound_is_a_zip_bomb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_workbook(tmp_path / "good.xlsx")
    total = sum(i.file_size for i in zipfile.ZipFile(path).infolist())
    monkeypatch.setattr(xlsx_module, "MAX_UNCOMPRESSED", total - 1)

    with pytest.raises(ImportFailed) as caught:
        check_workbook(path)
    assert caught.value.code == "import.zip_bomb"
