"""Dublin Core export: the 2,200 real Caltech records round-trip, any section maps to oai_dc,
restricted records are left out unless asked for, and then the file says so first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive, open_archive
from app.core.archive.exporters import RESTRICTED_NOTICE, ExportRequest, run_export
from app.core.archive.exporters.dublin_core import element_for
from app.core.archive.importers import run_import
from app.core.archive.importers.authorities import AGENTS
from app.core.archive.importers.authorities import SOURCE as AUTHORITY
from app.core.archive.importers.base import external_keys
from app.core.archive.importers.dublin_core import SECTION, SOURCE
from tests.conftest import shared_data
from tests.core.archive.exporters.round_trip import Exported, round_trip
from tests.core.archive.xml_query import XPath

NS = {
    "oai": "http://www.openarchives.org/OAI/2.0/",
    "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/",
    "dc": "http://purl.org/dc/elements/1.1/",
}
XML = XPath(NS)
nodes, strings = XML.nodes, XML.strings


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """The real Caltech set through import → export → import."""
    work = tmp_path_factory.mktemp("dc")
    request = ExportRequest(SECTION, work / "caltech.xml")
    with round_trip(work, ("dc", "dc"), [shared_data("oai-dc", "caltech")], request) as done:
        yield done


def test_the_real_set_round_trips_record_by_record(exported: Exported) -> None:
    first = external_keys(exported.archive, SOURCE)
    second = external_keys(exported.again, SOURCE)
    records = nodes(etree.parse(str(exported.out)), "//oai:record")

    assert exported.summary.records == len(records) == len(first) == 2200
    assert sorted(first) == sorted(second)
    for identifier, key in first.items():
        before, after = (
            exported.archive.get_record(key),
            exported.again.get_record(second[identifier]),
        )
        assert after.values == before.values, identifier
        assert after.restricted == before.restricted


def test_the_export_is_an_oai_pmh_list_of_records(exported: Exported) -> None:
    doc = etree.parse(str(exported.out))
    source = etree.parse(
        str(shared_data("oai-dc", "caltech", "caltecharchives-repositories-2-resources-34.xml"))
    )
    identifier = "oai:archives.caltech.edu:aspace_2027cb0df95e8258bc8e538d96e783bc"
    path = f"//oai:record[oai:header/oai:identifier='{identifier}']"

    assert doc.getroot().tag == "{http://www.openarchives.org/OAI/2.0/}OAI-PMH"
    assert strings(doc, "//oai:request/@verb") == ["ListRecords"]
    for element in ("title", "date", "identifier"):
        query = f"{path}//dc:{element}/text()"
        assert strings(doc, query) == strings(source, query), element
    assert RESTRICTED_NOTICE not in exported.out.read_text(encoding="utf-8")


def test_any_section_maps_to_dublin_core(archive: Archive, tmp_path: Path) -> None:
    run_import(archive, "eac-cpf", shared_data("eac-cpf", "anf"))
    out = tmp_path / "agents.xml"
    fields = {f.tipo: f for f in archive.fields(AGENTS)}

    summary = run_export(archive, "dc", ExportRequest(AGENTS, out))

    assert summary.records == archive.count_records(AGENTS)
    assert element_for(fields["agent2"], "agent2") == "title"
    assert (
        element_for(fields["agent6"]) == "date" and element_for(fields["agent9"]) == "description"
    )
    assert element_for(fields["agent11"]) == "relation"  # related agents are not creators
    assert element_for(fields["agent8"]) == "coverage"  # places
    doc = etree.parse(str(out))
    key = archive.external_key(AUTHORITY, "FRAN_NP_051234")
    assert key is not None
    record = nodes(doc, f"//oai:record[oai:header/oai:identifier='oai:arxiu:{key}']")
    assert len(record) == 1
    assert strings(record[0], ".//dc:title/text()") == ["Vitet, Ludovic (1802-1873)"]
    assert strings(record[0], ".//dc:title/@xml:lang") == ["fr"]
    assert "1802-10-18" in strings(record[0], ".//dc:date/text()")
    family = archive.external_key(AUTHORITY, "FRAN_NP_050218")
    assert family is not None
    relations = strings(record[0], ".//dc:relation/text()")
    assert archive.record_label(family) in relations  # the related agent's name

    back = run_import(archive, "dc", out)

    assert back.created == summary.records
    again = archive.get_record(archive.external_key(SOURCE, f"oai:arxiu:{key}") or key)
    assert again.text("dc2") == "Vitet, Ludovic (1802-1873)"
    assert again.items("dc2")[0]["lang"] == "lg-fra"


CLOSED = """<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>
<record><header><identifier>oai:x:1</identifier><datestamp>2024-01-01</datestamp></header>
<metadata><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
 xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Expedients de personal</dc:title>
<dc:rights xml:lang="ca">Documentació no consultable fins al 2040.</dc:rights></oai_dc:dc>
</metadata></record>
<record><header><identifier>oai:x:2</identifier><datestamp>2024-01-01</datestamp></header>
<metadata><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
 xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Cartells</dc:title></oai_dc:dc>
</metadata></record></ListRecords></OAI-PMH>"""


def test_restricted_records_out_unless_asked_and_then_said_first(
    archive: Archive, tmp_path: Path
) -> None:
    (tmp_path / "in.xml").write_text(CLOSED, encoding="utf-8")
    run_import(archive, "dc", tmp_path / "in.xml")

    open_only = run_export(archive, "dc", ExportRequest(SECTION, tmp_path / "open.xml"))
    both = run_export(
        archive, "dc", ExportRequest(SECTION, tmp_path / "all.xml", include_restricted=True)
    )

    assert (open_only.records, open_only.restricted_left_out) == (1, 1)
    assert "Expedients" not in (tmp_path / "open.xml").read_text(encoding="utf-8")
    assert (both.records, both.restricted_included) == (2, 1)
    text = (tmp_path / "all.xml").read_text(encoding="utf-8")
    assert RESTRICTED_NOTICE in text.splitlines()[0]
    fresh = open_archive(tmp_path / "fresh", create=True)
    run_import(fresh, "dc", tmp_path / "all.xml")
    key = fresh.external_key(SOURCE, "oai:x:1")
    assert key is not None and fresh.is_restricted(key)
    fresh.close()
