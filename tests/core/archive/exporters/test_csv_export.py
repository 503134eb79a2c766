"""CSV export: every section of the demo archive and a real CSV go out and come back the same."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive.exporters import RESTRICTED_NOTICE, ExportRequest, run_export
from app.core.archive.exporters.csv_export import escape_cell, value_text
from app.core.archive.importers import run_import
from app.core.archive.importers.table_read import unescape_cell
from app.core.archive.model import RecordKey
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import own_sections

AUTHORITIES = ("agent1", "place1", "subject1")

Snapshot = dict[str, dict[str, frozenset[tuple[str, str]]]]


def external_of(archive: Archive) -> dict[RecordKey, str]:
    """Every record's external id (its key when it has none)."""
    with archive.db.reading() as conn:
        rows = conn.execute("SELECT section_tipo, section_id, external_id FROM external_ids")
        return {RecordKey(r[0], r[1]): str(r[2]) for r in rows}


def snapshot(archive: Archive, section: str, name: Callable[[RecordKey], str]) -> Snapshot:
    """``record name → field label → {(lang, text)}``: what a CSV can carry of a section.

    Relations are named by ``name(target)``; values as text, stripped (a cell is trimmed).
    """
    labels = {f.tipo: (f.label("lg-eng"), f.kind) for f in archive.fields(section)}
    out: Snapshot = {}
    for record in archive.iter_records(section):
        fields: dict[str, frozenset[tuple[str, str]]] = {}
        for tipo, items in record.values.items():
            label, kind = labels[tipo]
            if kind == "relation":
                texts = {("->", name(RecordKey(**i["value"]))) for i in items}
            else:
                texts = {
                    (i["lang"], t)
                    for i in items
                    if (t := value_text(i["value"]).replace("\\|", "|").strip())
                }
            fields[label] = frozenset(texts)
        fields["(restricted)"] = frozenset({("", str(record.restricted))})
        out[name(record.key)] = fields
    return out


def namer(archive: Archive, by_key: bool) -> Callable[[RecordKey], str]:
    """Authorities by their label; other records by their key (``by_key``) or external id."""
    ids = external_of(archive)

    def name(key: RecordKey) -> str:
        if key.section_tipo in AUTHORITIES:
            return archive.record_label(key)
        return str(key) if by_key else ids[key]

    return name


def test_every_demo_section_round_trips_through_csv(demo_archive_dir: Path, tmp_path: Path) -> None:
    demo = open_archive(demo_archive_dir, read_only=True)
    fresh = open_archive(tmp_path / "fresh", create=True)
    try:
        files = {}
        for section in demo.sections():
            out = tmp_path / "csv" / f"{section.tipo}.csv"
            run_export(demo, "csv", ExportRequest(section.tipo, out, include_restricted=True))
            files[section.tipo] = out
        for _ in range(2):  # the second pass resolves links to files imported later
            summaries = {tipo: run_import(fresh, "csv", out) for tipo, out in files.items()}
        assert all(s.created == 0 and s.unresolved == 0 for s in summaries.values())
        sections = {s.label(): s.tipo for s in fresh.sections() if s.tipo.startswith("csv")}
        for tipo in files:
            before = snapshot(demo, tipo, namer(demo, by_key=True))
            after = snapshot(fresh, sections[tipo], namer(fresh, by_key=False))
            assert after == before, tipo
            assert {f.label("lg-eng") for f in demo.fields(tipo)} == {
                f.label("lg-eng") for f in fresh.fields(sections[tipo])
            }
        demo_links = sum(len(demo.links_from(r.key)) for r in demo.iter_records())
        fresh_links = sum(len(fresh.links_from(r.key)) for r in fresh.iter_records())
        assert fresh_links == demo_links > 0
    finally:
        demo.close()
        fresh.close()


def test_a_real_csv_round_trips_with_its_creators(tmp_path: Path) -> None:
    source = shared_data("csv-archival", "nla-finding-aids", "finding-aids-totals.csv")
    first = open_archive(tmp_path / "first", create=True)
    fresh = open_archive(tmp_path / "fresh", create=True)
    try:
        [section] = own_sections(run_import(first, "csv", source))
        out = tmp_path / "out.csv"
        summary = run_export(first, "csv", ExportRequest(section, out))
        [back] = own_sections(run_import(fresh, "csv", out))

        assert summary.records == first.count_records(section)
        before = snapshot(first, section, namer(first, by_key=False))
        after = snapshot(fresh, back, namer(fresh, by_key=False))
        assert after == before
        assert fresh.count_records("agent1") == first.count_records("agent1") > 1000
    finally:
        first.close()
        fresh.close()


@pytest.fixture
def small(archive: Archive) -> Archive:
    """An archive with an open and a restricted record, one holding a formula-like title."""
    source = Path(archive.folder).parent / "small.csv"
    source.write_text(
        'Title,Notes,Access\n"=HYPERLINK(""http://evil"",""x"")",a|b,Open\nSecret,-1,Closed\n',
        encoding="utf-8",
    )
    run_import(archive, "csv", source)
    return archive


def test_export_escapes_formulas_writes_a_bom_and_leaves_restricted_records_out(
    small: Archive, tmp_path: Path
) -> None:
    out = tmp_path / "open.csv"
    summary = run_export(small, "csv", ExportRequest("csv1", out))

    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data[3:].startswith(b"#")
    rows = list(csv.reader(data.decode("utf-8-sig").splitlines()))
    assert rows[0][:3] == ["section_id", "external_id", "restricted"]
    assert rows[1][3] == '\'=HYPERLINK("http://evil","x")'
    assert (summary.records, summary.restricted_left_out) == (1, 1)


def test_export_with_restricted_records_says_so_on_its_first_line(
    small: Archive, tmp_path: Path
) -> None:
    out = tmp_path / "all.csv"
    summary = run_export(small, "csv", ExportRequest("csv1", out, include_restricted=True))

    first_line = out.read_text(encoding="utf-8-sig").splitlines()[0]
    assert first_line == f"# {RESTRICTED_NOTICE}"
    assert summary.restricted_included == 1
    back = run_import(small, "csv", out)
    assert back.skipped == [] and back.read == 2


@pytest.mark.parametrize("value", ["=1+2", "+x", "-1", "@SUM(A1)", "\tx", "'=x", "''", "'a", "a"])
def test_escaping_is_undone_by_the_importer(value: str) -> None:
    assert unescape_cell(escape_cell(value)) == value


def test_a_record_exports_with_its_subtree(archive: Archive, tmp_path: Path) -> None:
    source = tmp_path / "atom.csv"
    source.write_text(
        "legacyId,parentId,title\nF,,Fons\nS,F,Sèrie\nI,S,Unitat\nX,,Altre fons\n",
        encoding="utf-8",
    )
    run_import(archive, "csv", source)
    fonds = archive.external_key(next(iter(_sources(archive))), "F")
    assert fonds is not None
    out = tmp_path / "fonds.csv"

    summary = run_export(archive, "csv", ExportRequest("csv1", out, record=fonds))

    rows = list(csv.reader(out.read_text(encoding="utf-8-sig").splitlines()))
    assert summary.records == 3
    assert [row[1] for row in rows[1:]] == ["F", "S", "I"]
    part_of = rows[0].index("Part of [link]")
    assert rows[3][part_of] == rows[2][0] and rows[2][part_of] == rows[1][0]


def _sources(archive: Archive) -> set[str]:
    with archive.db.reading() as conn:
        return {row[0] for row in conn.execute("SELECT source FROM external_ids")}
