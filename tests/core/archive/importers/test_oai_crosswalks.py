"""The harvester's crosswalks: ``oai_dc`` is the Dublin Core importer's, on real records."""

from __future__ import annotations

from app.core.archive import Archive
from app.core.archive.importers import dublin_core
from app.core.archive.importers.base import Built, Skip
from app.core.archive.importers.oai_crosswalks import CROSSWALKS, dublin_core_crosswalk
from app.core.archive.importers.safe_xml import parse_file
from tests.conftest import shared_data

OAI = "{http://www.openarchives.org/OAI/2.0/}"
FILE = "caltecharchives-repositories-2-resources-34.xml"


def test_oai_dc_pages_become_dc1_records(archive: Archive) -> None:
    crosswalk = CROSSWALKS["oai_dc"]()
    assert crosswalk == dublin_core_crosswalk()
    assert crosswalk.schema is dublin_core.SCHEMA
    root = parse_file(shared_data("oai-dc", "caltech", FILE))
    records = list(root.iter(f"{OAI}record"))[:3]
    built = crosswalk.page(archive, records)
    assert [type(b) for b in built] == [Built, Built, Built]
    ids = [r.findtext(f"{OAI}header/{OAI}identifier") for r in records]
    assert [b.record.external_id for b in built if isinstance(b, Built)] == ids
    assert all(b.record.section_tipo == dublin_core.SECTION for b in built if isinstance(b, Built))


def test_a_record_without_dc_is_a_skip(archive: Archive) -> None:
    root = parse_file(shared_data("oai-dc", "caltech", FILE))
    record = next(root.iter(f"{OAI}record"))
    metadata = record.find(f"{OAI}metadata")
    assert metadata is not None
    record.remove(metadata)
    (made,) = dublin_core_crosswalk().page(archive, [record])
    assert isinstance(made, Skip)
