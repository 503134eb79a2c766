"""JSON export and import: the demo archive and a real CSV import come back exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.archive import Archive, open_archive
from app.core.archive.exporters import RESTRICTED_NOTICE, ExportRequest, run_export
from app.core.archive.importers import run_import
from app.core.archive.model import Link
from tests.conftest import shared_data


def everything(archive: Archive) -> tuple[Any, ...]:
    """Sections, fields, records (values, restricted flags) and links of an archive."""
    records = {r.key: (r.values, r.restricted) for r in archive.iter_records()}
    links: set[Link] = set()
    for key in records:
        links.update(archive.links_from(key))
    return archive.sections(), archive.fields(), records, links


def export_all(archive: Archive, folder: Path) -> None:
    for section in archive.sections():
        out = folder / f"{section.tipo}.json"
        run_export(archive, "json", ExportRequest(section.tipo, out, include_restricted=True))


def test_the_demo_archive_round_trips_through_json(demo_archive_dir: Path, tmp_path: Path) -> None:
    demo = open_archive(demo_archive_dir, read_only=True)
    fresh = open_archive(tmp_path / "fresh", create=True)
    try:
        export_all(demo, tmp_path / "json")
        first = run_import(fresh, "json", tmp_path / "json")
        second = run_import(fresh, "json", tmp_path / "json")

        sections, fields, records, links = everything(demo)
        assert everything(fresh) == (sections, fields, records, links)
        assert first.created == len(records)
        assert first.links == len({(link.source, link.target) for link in links}) > 0
        assert (second.created, second.updated, second.unchanged) == (0, 0, len(records))
        oh1 = json.loads((tmp_path / "json" / "oh1.json").read_text(encoding="utf-8"))
        assert oh1["notice"] == RESTRICTED_NOTICE  # the demo's oral histories are restricted
        assert list(oh1)[:2] == ["arxiu_export", "notice"]
        assert any(r["media"] for r in oh1["records"]) or any(
            r["media"]
            for r in json.loads((tmp_path / "json" / "rsc170.json").read_text("utf-8"))["records"]
        )
    finally:
        demo.close()
        fresh.close()


def test_a_real_csv_import_round_trips_through_json(tmp_path: Path) -> None:
    source = shared_data(
        "csv-archival", "uw-archivesspace", "reconciledValuesWithQNumbers-2021-01-20-cec.csv"
    )
    first = open_archive(tmp_path / "first", create=True)
    fresh = open_archive(tmp_path / "fresh", create=True)
    try:
        run_import(first, "csv", source)
        export_all(first, tmp_path / "json")
        run_import(fresh, "json", tmp_path / "json")

        assert everything(fresh) == everything(first)
        again = run_import(fresh, "csv", source)  # the CSV's source and ids came along
        assert again.created == 0 and again.unchanged == first.count_records("csv1")
    finally:
        first.close()
        fresh.close()


def test_restricted_records_are_left_out_unless_asked_for(
    demo_archive_dir: Path, tmp_path: Path
) -> None:
    demo = open_archive(demo_archive_dir, read_only=True)
    try:
        summary = run_export(demo, "json", ExportRequest("oh1", tmp_path / "oh1.json"))
        doc = json.loads((tmp_path / "oh1.json").read_text(encoding="utf-8"))
    finally:
        demo.close()

    assert doc["notice"] is None and doc["records"] == []
    assert summary.restricted_left_out == demo_count(demo_archive_dir, "oh1") > 0


def demo_count(folder: Path, section: str) -> int:
    with open_archive(folder, read_only=True) as archive:
        return archive.count_records(section)


def test_a_section_exported_alone_keeps_its_links(tmp_path: Path) -> None:
    """The ANF finding aids' ``ead1`` exported alone carries the people, places and subjects its
    records link to (each once, marked ``linked``), so a fresh archive gets every link back;
    exported with ``agent1``'s own export and imported together, no record comes twice."""
    first = open_archive(tmp_path / "first", create=True)
    fresh = open_archive(tmp_path / "fresh", create=True)
    both = open_archive(tmp_path / "both", create=True)
    try:
        run_import(first, "ead", shared_data("ead", "anf"))
        out = tmp_path / "one" / "ead1.json"
        summary = run_export(first, "json", ExportRequest("ead1", out, include_restricted=True))
        doc = json.loads(out.read_text(encoding="utf-8"))
        imported = run_import(fresh, "json", out)
        folder = tmp_path / "two"
        for tipo in ("ead1", "agent1"):
            request = ExportRequest(tipo, folder / f"{tipo}.json", include_restricted=True)
            run_export(first, "json", request)
        together = run_import(both, "json", folder)

        units = {r.key: r for r in first.iter_records("ead1")}
        targets = {link.target for key in units for link in first.links_from(key)}
        outside = {t for t in targets if t.section_tipo != "ead1"}
        carried = [r for r in doc["records"] if r.get("linked")]
        assert summary.records == len(units) and len(carried) == len(outside) > 50
        assert {f"{r['section_tipo']}/{r['section_id']}" for r in carried} == {
            str(t) for t in outside
        }
        assert imported.created == len(units) + len(outside)
        for key in units:
            assert set(fresh.links_from(key)) == set(first.links_from(key))
        agents = first.count_records("agent1")
        assert together.created == len(units) + len(
            outside | {r.key for r in first.iter_records("agent1")}
        )
        assert both.count_records("agent1") == agents and together.read == together.created
    finally:
        first.close()
        fresh.close()
        both.close()
