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
