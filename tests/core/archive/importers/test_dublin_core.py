"""Dublin Core (``oai_dc``): the 2,200 real Caltech records, headers, languages, rights, skips."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive, RecordKey
from app.core.archive.importers import run_import
from app.core.archive.importers.authorities import AGENTS, SUBJECTS
from app.core.archive.importers.dublin_core import (
    SECTION,
    SOURCE,
    build_record,
    dc_record,
    iso_date,
    record_elements,
    rights_close,
)
from app.core.archive.importers.safe_xml import parse_bytes
from app.core.importing import import_dataset
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import (
    BySource,
    authority_records,
    lexical_records,
    own_sections,
)
from tests.core.archive.xml_query import XPath

NS = {
    "oai": "http://www.openarchives.org/OAI/2.0/",
    "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/",
    "dc": "http://purl.org/dc/elements/1.1/",
}
GLASER = "caltecharchives-repositories-2-resources-34.xml"
MACCREADY = "caltecharchives-repositories-2-resources-197.xml"
XML = XPath(NS)
nodes, strings = XML.nodes, XML.strings
IMPORTED = BySource(SOURCE)
_key, _texts = IMPORTED.key, IMPORTED.texts


def caltech() -> Path:
    """The real Caltech OAI static-repository folder."""
    return shared_data("oai-dc", "caltech")


def test_the_caltech_set_imports_with_counts_from_the_files(archive: Archive) -> None:
    docs = [etree.parse(str(f)) for f in sorted(caltech().glob("*.xml"))]
    records = [r for d in docs for r in nodes(d, "//oai:record")]
    count = {
        name: sum(len(nodes(d, f"//oai_dc:dc/dc:{name}[normalize-space()]")) for d in docs)
        for name in ("title", "date", "identifier")
    }

    summary = run_import(archive, "dc", caltech())

    assert summary.created == len(records) == 2200 and not summary.skipped
    assert summary.sections == {SECTION: len(records)}
    stored = list(archive.iter_records(SECTION))
    for name, tipos in (("title", ("dc2", "dc23")), ("date", ("dc10",)), ("identifier", ("dc14",))):
        assert sum(len(r.items(t)) for r in stored for t in tipos) == count[name], name
    assert all(len(r.items("dc2")) == 1 for r in stored)  # one label: the item's own title
    sample = records[len(records) // 3]
    identifier = str(sample.findtext("oai:header/oai:identifier", namespaces=NS))
    titles = strings(sample, ".//dc:title/text()")
    assert _texts(archive, identifier, "dc2") + _texts(archive, identifier, "dc23") == titles
    assert _texts(archive, identifier, "dc20") == [identifier]
    assert _texts(archive, identifier, "dc21") == [
        sample.findtext("oai:header/oai:datestamp", namespaces=NS)
    ]


def test_dates_titles_and_languages_of_a_record(archive: Archive) -> None:
    run_import(archive, "dc", caltech() / MACCREADY)

    record = archive.get_record(_key(archive, "oai:archives.caltech.edu:aspace_id267181"))
    assert record.text("dc2") == "Gossamer Condor 20th year reunion"
    assert record.text("dc10") == "1997 August 23" and record.text("dc11") == "1997-08-23"
    assert (
        "https://digital.archives.caltech.edu/collections/MacCreadyPB/MacCreadyPB_01_02_004_10"
        in [i["value"] for i in record.items("dc14")]
    )
    title = record.items("dc23")[0]
    assert title["value"] == "Paul B. MacCready Papers"
    assert title["lang"] in ("lg-eng", "lg-nolan")
    assert title.get("lang_guessed") is (True if title["lang"] == "lg-eng" else None)
    assert record.restricted is None


def test_iso_dates_as_archivists_write_them() -> None:
    assert iso_date("1997 August 23") == "1997-08-23"
    assert iso_date("ca. 1943-1983") == "1943/1983"
    assert iso_date("1997 June 12-15") == "1997-06-12/1997-06-15"
    assert iso_date("April 12-July 5, 1997") == "1997-04-12/1997-07-05"
    assert iso_date("1997 December - 1998 January") == "1997-12/1998-01"
    assert iso_date("2023-09-05T10:00:00Z") == "2023-09-05"
    assert iso_date("12 de març de 1964") == "1964-03-12"
    assert iso_date("undated") is None and iso_date("1950s") is None
    assert iso_date("1989-13") is None and iso_date("31 April 1997") is None
    assert iso_date("1997-02-29") is None and iso_date("29 February 2000") == "2000-02-29"


def test_a_second_import_creates_nothing(archive: Archive) -> None:
    first = run_import(archive, "dc", caltech())

    again = run_import(archive, "dc", caltech())

    assert (again.created, again.updated, again.unchanged) == (0, 0, first.created)
    assert archive.count_records(SECTION) == first.created


def test_a_broken_file_is_reported_and_changes_nothing(archive: Archive, tmp_path: Path) -> None:
    folder = tmp_path / "dc"
    folder.mkdir()
    shutil.copy(caltech() / GLASER, folder / GLASER)
    first = run_import(archive, "dc", folder)
    before = {r.key: r.values for r in archive.iter_records()}
    data = (caltech() / MACCREADY).read_bytes()
    (folder / "broken.xml").write_bytes(data[: len(data) // 2])
    (folder / "other.xml").write_bytes(b"<catalogue><item>not Dublin Core</item></catalogue>")

    summary = run_import(archive, "dc", folder)

    assert {(s.file, s.code) for s in summary.skipped} == {
        ("broken.xml", "import.xml_malformed"),
        ("other.xml", "import.not_dublin_core"),
    }
    assert all(s.line > 0 for s in summary.skipped)
    assert (summary.created, summary.unchanged) == (0, first.created)
    assert {r.key: r.values for r in archive.iter_records()} == before


LIST_RECORDS = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
  <responseDate>2024-05-01T10:00:00Z</responseDate>
  <request verb="ListRecords" metadataPrefix="oai_dc">http://example.org/oai</request>
  <ListRecords>
    <record>
      <header><identifier>oai:example.org:1</identifier><datestamp>2024-04-30</datestamp>
        <setSpec>fotos</setSpec></header>
      <metadata>
        <oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
                   xmlns:dc="http://purl.org/dc/elements/1.1/"
                   xmlns:dcterms="http://purl.org/dc/terms/">
          <dc:title xml:lang="ca">Vaga de tramvies de Barcelona</dc:title>
          <dc:title xml:lang="es">Huelga de tranvías de Barcelona</dc:title>
          <dc:creator>Pérez de Rozas, Carlos</dc:creator>
          <dc:subject xml:lang="ca">Vagues</dc:subject>
          <dc:date>1951</dc:date>
          <dc:rights>Tots els drets reservats.</dc:rights>
          <dcterms:accessRights>Accés restringit fins al 2030.</dcterms:accessRights>
        </oai_dc:dc>
      </metadata>
    </record>
    <record>
      <header status="deleted"><identifier>oai:example.org:2</identifier>
        <datestamp>2024-04-29</datestamp></header>
    </record>
    <record>
      <header><identifier>oai:example.org:3</identifier><datestamp>2024-04-30</datestamp></header>
      <metadata>
        <oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
                   xmlns:dc="http://purl.org/dc/elements/1.1/">
          <dc:title>La memòria dels pobles que l'aigua va cobrir</dc:title>
          <dc:creator>Pérez de Rozas, Carlos</dc:creator>
          <dc:rights>Tous droits réservés. Librement communicable.</dc:rights>
        </oai_dc:dc>
      </metadata>
    </record>
  </ListRecords>
</OAI-PMH>
"""


def test_headers_languages_rights_links_and_deleted_records(
    archive: Archive, tmp_path: Path
) -> None:
    path = tmp_path / "page.xml"
    path.write_text(LIST_RECORDS, encoding="utf-8")

    summary = run_import(archive, "dc", path)

    assert summary.created == 2 + authority_records(archive) and summary.read == 3
    assert own_sections(summary) == {"dc1": 2}
    assert [(s.code, s.file) for s in summary.skipped] == [("import.deleted_record", "page.xml")]
    first = archive.get_record(_key(archive, "oai:example.org:1"))
    assert [(i["lang"], i["value"]) for i in first.items("dc2")] == [
        ("lg-cat", "Vaga de tramvies de Barcelona"),
        ("lg-spa", "Huelga de tranvías de Barcelona"),
    ]
    assert first.text("dc22") == "fotos" and first.text("dc21") == "2024-04-30"
    assert first.restricted is True  # the access statement closes it, not the copyright one
    assert [i["value"] for i in first.items("dc19")] == [
        "Tots els drets reservats.",
        "Accés restringit fins al 2030.",
    ]
    third = archive.get_record(_key(archive, "oai:example.org:3"))
    assert third.restricted is None
    assert third.items("dc2")[0]["lang"] == "lg-cat" and third.items("dc2")[0]["lang_guessed"]
    creator = {link.target for link in archive.links_from(first.key)} & {
        link.target for link in archive.links_from(third.key)
    }
    assert len(creator) == 1 and archive.record_label(creator.pop()) == "Pérez de Rozas, Carlos"
    assert archive.count_records(AGENTS) == 1 and archive.count_records(SUBJECTS) == 1
    assert summary.links == 3  # creator and subject of the first, creator of the third


def test_a_bare_oai_dc_file_takes_its_id_from_dc_identifier(
    archive: Archive, tmp_path: Path
) -> None:
    (tmp_path / "one.xml").write_text(
        '<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Carta</dc:title>'
        "<dc:identifier>ACB-12</dc:identifier><dc:language>spa</dc:language>"
        "<dc:description>Carta del alcalde sobre las obras del pantano.</dc:description>"
        "</oai_dc:dc>",
        encoding="utf-8",
    )

    summary = run_import(archive, "dc", tmp_path)

    assert summary.created == 1
    record = archive.get_record(_key(archive, "ACB-12"))
    assert (
        record.items("dc7")[0]["lang"] == "lg-spa" and "lang_guessed" not in record.items("dc7")[0]
    )


def test_the_harvester_crosswalk_reads_one_metadata_element() -> None:
    root = parse_bytes(LIST_RECORDS.encode(), "page")
    records = record_elements(root)
    dc = records[0].find(".//oai_dc:dc", namespaces=NS)
    assert dc is not None

    built = build_record(dc, "oai:example.org:1")

    assert built.record.external_id == "oai:example.org:1" and built.record.restricted is True
    assert dc_record(dc).record.values == built.record.values


@pytest.mark.parametrize(
    ("text", "closes"),
    [
        ("Closed until 2030.", True),
        ("Access restricted: contact the archivist.", True),
        ("Non communicable.", True),
        ("Acceso restringido.", True),
        ("All rights reserved.", False),
        ("Tous droits réservés.", False),
        ("Todos los derechos reservados. Sin restricciones.", False),
        ("Open for research.", False),
    ],
)
def test_rights_statements_that_close_the_material(text: str, closes: bool) -> None:
    assert rights_close(text) is closes


QUESTIONS = (
    (
        "Is the Gossamer Condor 20th-year reunion material digitised, and where?",
        "oai:archives.caltech.edu:aspace_id267181",
    ),
    (
        "¿A qué serie pertenece el registro aspace_2027cb0df95e8258bc8e538d96e783bc?",
        "oai:archives.caltech.edu:aspace_2027cb0df95e8258bc8e538d96e783bc",
    ),
)


def test_the_readme_questions_find_their_records(archive: Archive) -> None:
    import_dataset(archive, "dc", caltech())

    for question, identifier in QUESTIONS:
        assert _key(archive, identifier) in lexical_records(archive, question, 20)[:3], question
    # the dates (language-neutral) and the titles (guessed English) are separate metadata
    # chunks, so the best hits match the year; they are Glaser's digitised files of 1964
    found = lexical_records(archive, "Quins documents digitalitzats de Glaser són de 1964?", 10)
    for key in found[:2]:
        assert "1964" in _texts_of(archive, key, "dc10")
        assert any(i.startswith("GlaserDA_") for i in _texts_of(archive, key, "dc14"))


def _texts_of(archive: Archive, key: RecordKey, tipo: str) -> list[str]:
    return [str(i["value"]) for i in archive.get_record(key).items(tipo)]
