"""EAC-CPF authority records (the 101 real ANF records): names, dates, relations, re-import."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive, RecordKey
from app.core.archive.bulk import NewRecord
from app.core.archive.importers import IMPORTERS, run_import
from app.core.archive.importers.authorities import AGENTS, DESCRIPTIONS, PLACES, SOURCE
from app.core.archive.importers.base import Schema, ensure_schema, external_keys, labels
from app.core.archive.importers.eac_cpf import EAD_SOURCE, agent_target
from app.core.archive.model import Section
from app.core.importing import import_dataset
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import BySource, lexical_records
from tests.core.archive.xml_query import XPath

NS = {"e": "urn:isbn:1-931666-33-4", "x": "http://www.w3.org/1999/xlink"}
HREF = "{http://www.w3.org/1999/xlink}href"
nodes = XPath(NS).nodes
IMPORTED = BySource(SOURCE)
_key, _texts = IMPORTED.key, IMPORTED.texts


def anf() -> Path:
    """The real ANF EAC-CPF folder."""
    return shared_data("eac-cpf", "anf")


def _docs() -> dict[str, etree._ElementTree]:
    return {f.name: etree.parse(str(f)) for f in sorted(anf().glob("*.xml"))}


def record_id(doc: etree._ElementTree) -> str:
    """The document's ``control/recordId``."""
    return str(doc.findtext("e:control/e:recordId", namespaces=NS))


def test_the_anf_set_imports_with_counts_from_the_files(archive: Archive) -> None:
    docs = _docs()
    ids = {record_id(d) for d in docs.values()}
    types = Counter(d.findtext(".//e:identity/e:entityType", namespaces=NS) for d in docs.values())
    names = sum(len(nodes(d, "//e:identity/e:nameEntry")) for d in docs.values())
    cpf = [r for d in docs.values() for r in nodes(d, "//e:cpfRelation")]
    resources = sum(len(nodes(d, "//e:resourceRelation")) for d in docs.values())
    linked = {
        (record_id(d), r.get(HREF))
        for d in docs.values()
        for r in nodes(d, "//e:cpfRelation")
        if r.get(HREF) in ids
    }
    dangling = sum(
        1 for r in cpf if r.get(HREF) not in ids and r.get("cpfRelationType") != "identity"
    )

    summary = run_import(archive, "eac-cpf", anf())

    places = archive.count_records(PLACES)  # the places they name, as stubs
    assert summary.created == len(docs) + places and len(docs) == len(ids) == 101
    assert summary.sections == {AGENTS: len(docs), PLACES: places} and not summary.skipped
    records = [archive.get_record(_key(archive, i)) for i in sorted(ids)]
    assert Counter(r.text("agent4") for r in records) == types
    assert sum(len(r.items("agent2")) + len(r.items("agent3")) for r in records) == names
    assert sum(len(r.items("agent12")) for r in records) == len(cpf)
    assert sum(len(r.items("agent18")) for r in records) == resources
    assert summary.links == len(linked)
    assert summary.unresolved == dangling + resources  # no EAD in this archive
    assert summary.unresolved_targets["FRAN_IR_003500"] >= 1


def test_a_person_keeps_names_dates_languages_and_relations(archive: Archive) -> None:
    run_import(archive, "eac-cpf", anf())

    vitet = archive.get_record(_key(archive, "FRAN_NP_051234"))
    assert vitet.items("agent2") == [
        {"id": 1, "lang": "lg-fra", "value": "Vitet, Ludovic (1802-1873)"}
    ]
    assert vitet.text("agent3") == "Vitet, Louis" and vitet.text("agent4") == "person"
    assert vitet.text("agent5") == "18 octobre 1802 – 5 juin 1873"
    assert (vitet.text("agent6"), vitet.text("agent7")) == ("1802-10-18", "1873-06-05")
    assert "http://catalogue.bnf.fr/ark:/12148/cb13336936n" in _texts(
        archive, "FRAN_NP_051234", "agent10"
    )
    lines = _texts(archive, "FRAN_NP_051234", "agent12")
    assert (
        "family: Costa de Beauregard, Jeanne Aubry-Vitet (1874-1966 ; comtesse) (FRAN_NP_052986)"
        in lines
    )
    family = _key(archive, "FRAN_NP_050218")
    assert family in {link.target for link in archive.links_from(vitet.key)}
    assert "occupation: écrivain" in _texts(archive, "FRAN_NP_051234", "agent15")
    assert "\u00a0" not in (vitet.text("agent9") or "")  # NBSP folded into plain spaces
    assert (vitet.text("agent9", "lg-fra") or "").startswith(
        "Ludovic Vitet (1802-1873), petit-fils"
    )
    parents = [
        line
        for line in _texts(archive, "FRAN_NP_005055", "agent12")
        if line.startswith("hierarchical-parent: ")
    ]
    assert len(parents) == 1
    assert "Direction de l'architecture et du patrimoine (1998-2010) (FRAN_NP_005406)" in parents[0]


def test_biographies_keep_paragraphs_and_list_items_as_lines(archive: Archive) -> None:
    doc = etree.parse(str(anf() / "FRAN_NP_005061.xml"))
    items = [
        " ".join("".join(str(t) for t in i.itertext()).split())
        for i in nodes(doc, "//e:structureOrGenealogy//e:item")
    ]

    run_import(archive, "eac-cpf", anf())

    lines = (_texts(archive, "FRAN_NP_005061", "agent17")[0]).split("\n\n")
    assert items and all(item in lines for item in items)
    assert lines[0] == "Les Archives nationales sont aujourd'hui implantées sur trois sites :"
    places = archive.get_record(_key(archive, "FRAN_NP_005061")).items("agent8")
    assert len(places) == 3


def test_a_second_import_creates_nothing(archive: Archive) -> None:
    run_import(archive, "eac-cpf", anf())

    again = run_import(archive, "eac-cpf", anf())

    assert (again.created, again.updated, again.unchanged) == (0, 0, 101)
    assert archive.count_records(AGENTS) == 101


def test_a_broken_file_is_reported_and_changes_nothing(archive: Archive, tmp_path: Path) -> None:
    folder = tmp_path / "eac"
    folder.mkdir()
    for name in ("FRAN_NP_050218.xml", "FRAN_NP_051234.xml"):
        shutil.copy(anf() / name, folder / name)
    run_import(archive, "eac-cpf", folder)
    before = {r.key: r.values for r in archive.iter_records()}
    data = (anf() / "FRAN_NP_005055.xml").read_bytes()
    (folder / "FRAN_NP_005055.xml").write_bytes(data[: len(data) // 2])  # cut in the middle
    (folder / "notes.xml").write_bytes(b"<notes><note>not an authority</note></notes>")

    summary = run_import(archive, "eac-cpf", folder)

    codes = {(s.file, s.code) for s in summary.skipped}
    assert codes == {
        ("FRAN_NP_005055.xml", "import.xml_malformed"),
        ("notes.xml", "import.not_eac_cpf"),
    }
    assert all(s.line > 0 for s in summary.skipped)
    assert (summary.created, summary.unchanged) == (0, 2)
    assert {r.key: r.values for r in archive.iter_records()} == before


def test_a_wrapper_of_records_reports_duplicates_and_missing_ids(
    archive: Archive, tmp_path: Path
) -> None:
    record = (anf() / "FRAN_NP_050218.xml").read_bytes().split(b"?>", 1)[1]
    nameless = record.replace(b"<recordId>FRAN_NP_050218</recordId>", b"<recordId/>")
    (tmp_path / "set.xml").write_bytes(b"<records>" + record + record + nameless + b"</records>")

    summary = run_import(archive, "eac-cpf", tmp_path / "set.xml")

    assert (summary.read, summary.created) == (3, 1)
    assert [s.code for s in summary.skipped] == ["import.duplicate_id", "import.missing_id"]
    assert _texts(archive, "FRAN_NP_050218", "agent2") == ["Vitet (famille ; 1701-1900)"]


def test_a_standard_date_that_is_no_day_is_kept_as_written_only(
    archive: Archive, tmp_path: Path
) -> None:
    """``1701-13-01`` matches the ISO pattern but names no month: the dates as written stay,
    the start date is not set; the end date still is."""
    data = (anf() / "FRAN_NP_050218.xml").read_bytes()
    assert data.count(b'standardDate="1701-01-01"') == 1
    (tmp_path / "bad.xml").write_bytes(
        data.replace(b'standardDate="1701-01-01"', b'standardDate="1701-13-01"')
    )

    run_import(archive, "eac-cpf", tmp_path / "bad.xml")

    assert _texts(archive, "FRAN_NP_050218", "agent6") == []
    assert _texts(archive, "FRAN_NP_050218", "agent7") == ["1900-12-31"]
    assert _texts(archive, "FRAN_NP_050218", "agent5") == ["XVIIIe siècle – XIXe siècle"]


def test_a_target_given_as_a_full_uri_resolves(archive: Archive, tmp_path: Path) -> None:
    folder = tmp_path / "eac"
    folder.mkdir()
    shutil.copy(anf() / "FRAN_NP_050218.xml", folder / "FRAN_NP_050218.xml")
    uri = "https://www.siv.archives-nationales.culture.gouv.fr/siv/NP/FRAN_NP_050218"
    data = (anf() / "FRAN_NP_051234.xml").read_bytes()
    assert data.count(b'xlink:href="FRAN_NP_050218"') == 1
    data = data.replace(b'xlink:href="FRAN_NP_050218"', f'xlink:href="{uri}"'.encode())
    (folder / "FRAN_NP_051234.xml").write_bytes(data)

    run_import(archive, "eac-cpf", folder)

    family = _key(archive, "FRAN_NP_050218")
    assert family in {link.target for link in archive.links_from(_key(archive, "FRAN_NP_051234"))}
    assert agent_target(uri, {})[0] == "FRAN_NP_050218"


def _descriptions(archive: Archive, ids: list[str]) -> dict[str, RecordKey]:
    """``ead1`` records under the EAD importer's source, as an EAD import leaves them."""
    ensure_schema(
        archive,
        Schema(
            (Section(DESCRIPTIONS, labels("Descriptions", "Descripcions", "Descripciones")),), ()
        ),
    )
    result = archive.upsert_records(
        [NewRecord(DESCRIPTIONS, {}, external_id=i) for i in ids], source=EAD_SOURCE
    )
    return dict(zip(ids, result.keys, strict=True))


def test_resource_relations_link_to_descriptions_once_they_are_there(archive: Archive) -> None:
    first = run_import(archive, "eac-cpf", anf())
    assert not archive.get_record(_key(archive, "FRAN_NP_051234")).items("agent13")
    keys = _descriptions(archive, ["FRAN_IR_003500", "FRAN_IR_003500#d_1"])

    again = run_import(archive, "eac-cpf", anf())

    assert again.created == 0 and again.updated >= 2
    assert again.unresolved < first.unresolved
    assert "FRAN_IR_003500#d_1" not in again.unresolved_targets
    ludovic = archive.get_record(_key(archive, "FRAN_NP_051234"))
    family = archive.get_record(_key(archive, "FRAN_NP_050218"))
    assert keys["FRAN_IR_003500#d_1"] in {
        RecordKey(i["value"]["section_tipo"], i["value"]["section_id"])
        for i in ludovic.items("agent13")
    }
    assert keys["FRAN_IR_003500"] in {link.target for link in archive.links_from(family.key)}


@pytest.mark.skipif("ead" not in IMPORTERS, reason="the EAD importer is not installed")
def test_with_the_real_ead_first_one_person_is_one_record(archive: Archive) -> None:
    run_import(archive, "ead", shared_data("ead", "anf"))
    stubs = archive.count_records(AGENTS)

    summary = run_import(archive, "eac-cpf", anf())

    agents = external_keys(archive, SOURCE)
    places = summary.sections[PLACES]  # the stubs of the places the EAD did not name
    assert summary.created + summary.updated == 101 + places
    assert archive.count_records(AGENTS) == stubs + summary.created - places
    family = agents["FRAN_NP_050218"]
    assert archive.get_record(family).text("agent4") == "family"
    assert any(link.source.section_tipo == DESCRIPTIONS for link in archive.links_to(family))
    assert archive.links_from(agents["FRAN_NP_051234"])


QUESTIONS = (
    ("Who was Jean Favier and which institutions is he linked to?", "FRAN_NP_050312"),
    (
        "When was the Service national des travaux created and what was its parent body?",
        "FRAN_NP_005055",
    ),
    ("Which family created the Fonds Vitet?", "FRAN_NP_050218"),
    ("Quan va néixer i morir Félicien de Saulcy i quins càrrecs va tenir?", "FRAN_NP_050095"),
    ("¿Qué fondos produjo Ludovic Vitet y con qué familia está emparentado?", "FRAN_NP_051234"),
)


def test_the_readme_questions_find_their_records(archive: Archive) -> None:
    import_dataset(archive, "eac-cpf", anf())

    for question, record_id in QUESTIONS:
        assert _key(archive, record_id) in lexical_records(archive, question, 20)[:5], question
