"""A harvest's record reader places a page's skips (line of the record, the page) and keeps the
phrase the crosswalk said each reason with, so the app and the CLI say it in their language."""

from __future__ import annotations

from app.core.archive import Archive
from app.core.archive.importers import dublin_core
from app.core.archive.importers.base import Built, ImportRun, ImportSummary, Skip, ensure_schema
from app.core.archive.importers.oai_pmh import BAD_RECORD
from app.core.archive.importers.oai_reader import RecordReader, Target, line_of
from app.core.archive.importers.safe_xml import Element, parse_file
from app.core.i18n_tables import load_table
from app.core.import_report import skip_reason
from tests.conftest import shared_data

OAI = "{http://www.openarchives.org/OAI/2.0/}"
FILE = "caltecharchives-repositories-2-resources-34.xml"
SOURCE = "http://repository.test/oai"
NO_ID = "a record without an identifier"
Page = list[Built | Skip]


def test_a_skip_of_the_page_keeps_its_phrase(archive: Archive) -> None:
    """The Dublin Core page of three real records, the second said to be unusable."""
    summary = ImportSummary("oai", SOURCE)
    ensure_schema(archive, dublin_core.SCHEMA)
    target = Target(archive, ImportRun(archive, summary, SOURCE), SOURCE)

    def page(archive: Archive, records: list[Element], found: ImportSummary) -> Page:
        made = dublin_core.dc_page(archive, records, found)
        made[1] = Skip.said(0, "", BAD_RECORD, NO_ID)
        return made

    records = list(parse_file(shared_data("oai-dc", "caltech", FILE)).iter(f"{OAI}record"))[:3]
    RecordReader(target, page).read(records, "page 4")
    target.run.flush()

    assert (summary.read, summary.created) == (3, 2)
    [skip] = summary.skipped
    assert (skip.line, skip.file, skip.code) == (line_of(records[1]), "page 4", BAD_RECORD)
    assert skip.line > 0 and skip.phrase is not None and skip.phrase.template == NO_ID
    assert skip_reason(skip, load_table("ca")) == "un registre sense identificador"
    assert skip_reason(skip, load_table("es")) == "un registro sin identificador"
    assert skip_reason(skip, {}) == NO_ID
