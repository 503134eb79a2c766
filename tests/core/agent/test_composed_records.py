"""A composed answer's record line on an imported finding aid: the dates as written and the box."""

from __future__ import annotations

from lxml import etree

from app.core.agent.answer_phrases import phrases
from app.core.agent.composed_answer import record_line
from app.core.agent.composed_records import listed_record
from app.core.agent.sources import SourceHit
from app.core.archive import Archive, RecordKey
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from tests.conftest import shared_data

AFL_CIO = ("ead", "uw-labor-archives", "AFL-CIORegion9_5189.xml_LinkedDataProject.xml")


def test_a_file_of_a_finding_aid_is_listed_with_its_dates_and_box(archive: Archive) -> None:
    """ "In which box is the Oregon State Labor Council's correspondence?": six files share the
    title; each line says its dates as the finding aid writes them and its box-folder."""
    run_import(archive, "ead", shared_data(*AFL_CIO))
    keys = external_keys(archive, "ead")
    unit = etree.parse(str(shared_data(*AFL_CIO))).xpath(
        "/ead/archdesc/dsc/c01[4]/c02[1]/c03[4]/c04[1]"
    )[0]
    key = keys["AFL-CIORegion9_5189.xml#c4.1.4.1"]
    dates = unit.findtext("did/unitdate").strip()
    box = unit.findtext("did/container").strip()
    assert dates == "1992-1994" and box == "11/10"  # the file as read here

    listed = listed_record(archive, SourceHit(key.section_tipo, key.section_id), "lg-spa")
    assert listed is not None
    line = record_line(listed, phrases("lg-spa"))

    assert (listed.date, listed.container) == (dates, f"Box-folder {box}")
    assert f"({key}) · 1992-1994 · Box-folder 11/10 · inglés" in line


def test_a_record_outside_a_hierarchy_keeps_its_first_date(archive: Archive) -> None:
    """An EAC-CPF authority (no "part of"): its first date field, no box."""
    run_import(archive, "eac-cpf", shared_data("eac-cpf", "anf", "FRAN_NP_050218.xml"))
    record = next(r for s in archive.sections() for r in archive.iter_records(s.tipo))
    dates = [
        i["value"]
        for f in archive.fields(record.section_tipo)
        if f.kind == "date"
        for i in record.items(f.tipo)
    ]
    assert dates  # the file as read here

    listed = listed_record(
        archive, SourceHit(record.key.section_tipo, record.key.section_id), "lg-eng"
    )

    assert listed is not None and listed.container is None
    assert listed.date == dates[0]


def test_a_heading_s_bare_kind_is_not_quoted(archive: Archive) -> None:
    """An OHMS keyword's subject record: the hit's snippet was its kind, quoted as «subject»
    under every heading listed; a passage that says what the title does not stays."""
    run_import(archive, "ohms", shared_data("oral-history-ohms"))
    dupont = next(
        r
        for r in archive.iter_records("subject1")
        if (r.text("subject2") or "").startswith("DuPont")
    )
    question = "En quin moment de l'entrevista de Hanford parla de DuPont?"
    said = "It was Holmes who got you to DuPont? HANFORD: Yes. I was offered a job at Rohm and Haas"
    hanford = next(r for r in archive.iter_records("ohms1") if "Hanford" in archive.label_of(r))

    heading = listed_record(
        archive, SourceHit(*_parts(dupont.key), snippet="subject"), "lg-cat", question=question
    )
    passage = listed_record(
        archive, SourceHit(*_parts(hanford.key), snippet=said), "lg-cat", question=question
    )
    title = listed_record(
        archive,
        SourceHit(*_parts(hanford.key), snippet=archive.label_of(hanford)),
        "lg-cat",
        question=question,
    )

    assert heading is not None and heading.passage == ""
    assert passage is not None and passage.passage == said
    assert title is not None and title.passage == ""


def _parts(key: RecordKey) -> tuple[str, int]:
    return key.section_tipo, key.section_id
