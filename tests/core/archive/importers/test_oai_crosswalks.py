"""The harvester's crosswalks on real records: ``oai_dc`` is the Dublin Core importer's, one
record per OAI record; ``oai_ead``/``ead`` the EAD importer's, a whole hierarchy per record."""

from __future__ import annotations

from app.core.archive import Archive
from app.core.archive.importers import dublin_core
from app.core.archive.importers.base import ImportRun, ImportSummary, ensure_schema
from app.core.archive.importers.ead_fields import SCHEMA as EAD_SCHEMA
from app.core.archive.importers.ead_fields import SECTION as EAD_SECTION
from app.core.archive.importers.oai_crosswalks import CROSSWALKS, Crosswalk
from app.core.archive.importers.oai_reader import Target
from app.core.archive.importers.safe_xml import parse_file
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import authority_records

OAI = "{http://www.openarchives.org/OAI/2.0/}"
FILE = "caltecharchives-repositories-2-resources-34.xml"
SOURCE = "http://repository.test/oai"


def started(archive: Archive, crosswalk: Crosswalk) -> tuple[Target, ImportSummary]:
    """A harvest's target and summary, the crosswalk's schema in place."""
    summary = ImportSummary("oai", SOURCE)
    ensure_schema(archive, crosswalk.schema)
    return Target(archive, ImportRun(archive, summary, SOURCE), SOURCE), summary


def test_oai_dc_records_become_one_dc1_record_each(archive: Archive) -> None:
    crosswalk = CROSSWALKS["oai_dc"]()
    assert crosswalk is not None and crosswalk.schema is dublin_core.SCHEMA
    target, summary = started(archive, crosswalk)
    root = parse_file(shared_data("oai-dc", "caltech", FILE))
    records = list(root.iter(f"{OAI}record"))[:3]
    assert crosswalk.start(target).read(records, "page 1") == []
    target.run.flush()
    assert (summary.read, summary.created, summary.skipped) == (3, 3, [])
    ids = [r.findtext(f"{OAI}header/{OAI}identifier") for r in records]
    assert sorted(archive.external_key(SOURCE, i) is not None for i in ids) == [True] * 3
    assert archive.count_records(dublin_core.SECTION) == 3


def test_a_record_without_dc_is_a_skip_with_its_page(archive: Archive) -> None:
    crosswalk = CROSSWALKS["oai_dc"]()
    assert crosswalk is not None
    target, summary = started(archive, crosswalk)
    root = parse_file(shared_data("oai-dc", "caltech", FILE))
    record = next(root.iter(f"{OAI}record"))
    metadata = record.find(f"{OAI}metadata")
    assert metadata is not None
    record.remove(metadata)
    crosswalk.start(target).read([record], "page 7")
    target.run.flush()
    assert summary.created == 0
    assert [(s.file, s.code) for s in summary.skipped] == [("page 7", dublin_core.NOT_DC)]


def test_an_oai_ead_record_becomes_its_whole_hierarchy(archive: Archive) -> None:
    crosswalk = CROSSWALKS["oai_ead"]()
    assert crosswalk is not None and crosswalk == CROSSWALKS["ead"]()
    assert crosswalk.schema is EAD_SCHEMA
    target, summary = started(archive, crosswalk)
    root = parse_file(shared_data("ead", "caltech-aspace-oai", "glaser-ead.xml"))
    units = int(
        root.xpath("count(//*[local-name()='archdesc' or starts-with(local-name(), 'c0')])")
    )
    assert units == 906  # the Glaser papers: the archdesc and 905 components
    reader = crosswalk.start(target)
    assert reader.read(list(root.iter(f"{OAI}record")), "page 1") == []
    target.run.flush()
    assert (summary.read, summary.sections[EAD_SECTION]) == (units, units)
    assert summary.created == units + authority_records(archive)
    assert archive.count_records(EAD_SECTION) == units
    withdrawn = reader.withdrawn("oai:caltech//repositories/2/resources/34", 1, "page 2")
    assert withdrawn is not None and len(withdrawn.keys) == units
    assert withdrawn.keys[-1] == archive.external_key(SOURCE, "GlaserDA")
