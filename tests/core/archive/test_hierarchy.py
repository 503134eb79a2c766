"""The hierarchy helper: parent, children in order and breadcrumbs, for EAD and for a table."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from app.core.archive import Archive, RecordKey
from app.core.archive.hierarchy import (
    breadcrumbs,
    child_keys,
    children_of,
    count_tops,
    hierarchy_of,
    parent_of,
    subtree,
    top_records,
)
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from tests.conftest import shared_data

VITET = ("ead", "anf", "FRAN_IR_003500.xml")


def _xpath(path: str) -> list[etree._Element]:
    """The elements of the Vitet finding aid at ``path``, read independently of the importer."""
    found = etree.parse(str(shared_data(*VITET))).xpath(path)
    assert isinstance(found, list)
    return [e for e in found if isinstance(e, etree._Element)]


def _ead(archive: Archive) -> dict[str, RecordKey]:
    run_import(archive, "ead", shared_data(*VITET))
    return external_keys(archive, "ead")


def test_ead_components_have_their_parent_children_in_order_and_trail(archive: Archive) -> None:
    keys = _ead(archive)
    expected = [str(c.get("id")) for c in _xpath("//c[@id='d_1_2']/c")]
    codes = [str(c.findtext("did/unitid")) for c in _xpath("//c[@id='d_1_2']/c")]
    shape = hierarchy_of(archive, "ead1")
    assert shape is not None and shape.order_field is not None

    nodes = children_of(archive, keys["FRAN_IR_003500#d_1_2"], shape=shape)
    trail = breadcrumbs(archive, keys["FRAN_IR_003500#d_1_2_1"])

    ids = {key: ext for ext, key in keys.items()}
    assert [ids[n.key].partition("#")[2] for n in nodes] == expected
    assert [n.reference for n in nodes] == codes
    assert [n.label for n in trail] == [
        "Fonds Vitet",
        "LUDOVIC VITET (1802-1873)",
        "Correspondance active",
    ]
    assert trail[0].level == "fonds" and trail[0].reference == "572AP/1-572AP/122"
    assert parent_of(archive, keys["FRAN_IR_003500#d_1_2_1"]) == keys["FRAN_IR_003500#d_1_2"]
    assert parent_of(archive, keys["FRAN_IR_003500"]) is None
    assert breadcrumbs(archive, keys["FRAN_IR_003500"]) == []


def test_the_fonds_children_are_the_top_components(archive: Archive) -> None:
    keys = _ead(archive)
    top = [f"FRAN_IR_003500#{c.get('id')}" for c in _xpath("/ead/archdesc/dsc/c")]

    assert child_keys(archive, keys["FRAN_IR_003500"]) == [keys[ext] for ext in top]


def test_a_subtree_is_a_component_and_everything_under_it(archive: Archive) -> None:
    keys = _ead(archive)
    ids = {key: ext for ext, key in keys.items()}
    every = {f"FRAN_IR_003500#{c.get('id')}" for c in _xpath("//c")} | {"FRAN_IR_003500"}
    below = {f"FRAN_IR_003500#{c.get('id')}" for c in _xpath("//c[@id='d_1_2']//c")}

    whole = subtree(archive, keys["FRAN_IR_003500"])
    part = subtree(archive, keys["FRAN_IR_003500#d_1_2"])
    leaf = keys["FRAN_IR_003500#d_1_2_1"]

    assert {ids[k] for k in whole} == every and len(whole) == len(every)
    assert {ids[k] for k in part} == below | {"FRAN_IR_003500#d_1_2"}
    assert list(whole) == sorted(whole, key=lambda k: k.section_id)
    assert subtree(archive, leaf) == (leaf,)
    assert subtree(archive, RecordKey("ead1", 10**9)) == ()


def test_the_top_level_records_are_each_finding_aid_s_fonds(archive: Archive) -> None:
    """Two finding aids: their two ``archdesc`` are the top-level records, paged in id order."""
    run_import(archive, "ead", shared_data(*VITET))
    run_import(archive, "ead", shared_data("ead", "anf", "FRAN_IR_007375.xml"))
    keys = external_keys(archive, "ead")
    shape = hierarchy_of(archive, "ead1")
    assert shape is not None
    fonds = sorted([keys["FRAN_IR_003500"], keys["FRAN_IR_007375"]])

    assert [r.key for r in top_records(archive, shape)] == fonds
    assert [r.key for r in top_records(archive, shape, offset=1, limit=5)] == fonds[1:]
    assert count_tops(archive, shape) == 2 < archive.count_records("ead1")


def test_a_table_with_a_parent_column_is_a_hierarchy(archive: Archive, tmp_path: Path) -> None:
    table = tmp_path / "fons.csv"
    table.write_text(
        "identifier,title,level,parentId\n"
        "F1,Fons Puig,fonds,\n"
        "S2,Correspondència,series,F1\n"
        "S1,Comptes,series,F1\n"
        "D1,Cartes 1931,file,S2\n",
        encoding="utf-8",
    )
    run_import(archive, "csv", table)
    section = next(s.tipo for s in archive.sections() if s.tipo.startswith("csv"))
    shape = hierarchy_of(archive, section)
    assert shape is not None and shape.reference_field is not None
    by_code = {r.text(shape.reference_field): r.key for r in archive.iter_records(section)}

    trail = breadcrumbs(archive, by_code["D1"])
    below = children_of(archive, by_code["F1"])

    assert [(n.reference, n.level) for n in trail] == [("F1", "fonds"), ("S2", "series")]
    assert [n.label for n in below] == ["Correspondència", "Comptes"]  # file order, no order field
    assert parent_of(archive, by_code["S1"]) == by_code["F1"]
    assert subtree(archive, by_code["F1"]) == tuple(sorted(by_code.values()))
    assert [r.key for r in top_records(archive, shape)] == [by_code["F1"]]
    assert count_tops(archive, shape) == 1
    assert subtree(archive, by_code["S2"]) == tuple(sorted((by_code["S2"], by_code["D1"])))


def test_a_cycle_in_part_of_ends(archive: Archive, tmp_path: Path) -> None:
    table = tmp_path / "cycle.csv"
    table.write_text(
        "identifier,title,parentId\nA,Un,C\nB,Dos,A\nC,Tres,B\nD,Quatre,\n", encoding="utf-8"
    )
    run_import(archive, "csv", table)
    section = next(s.tipo for s in archive.sections() if s.tipo.startswith("csv"))
    shape = hierarchy_of(archive, section)
    assert shape is not None and shape.reference_field is not None
    by_code = {r.text(shape.reference_field): r.key for r in archive.iter_records(section)}

    assert subtree(archive, by_code["A"]) == tuple(sorted(by_code[c] for c in "ABC"))
    assert [r.key for r in top_records(archive, shape)] == [by_code["D"]]  # a cycle has no top


def test_a_flat_section_is_no_hierarchy(archive: Archive, tmp_path: Path) -> None:
    table = tmp_path / "flat.csv"
    table.write_text("identifier,title\nA,Un\nB,Dos\n", encoding="utf-8")
    run_import(archive, "csv", table)
    section = next(s.tipo for s in archive.sections() if s.tipo.startswith("csv"))
    first = next(archive.iter_records(section)).key

    assert hierarchy_of(archive, section) is None
    assert children_of(archive, first) == [] and breadcrumbs(archive, first) == []
    assert subtree(archive, first) == (first,)


def test_links_among_equals_make_no_hierarchy(archive: Archive) -> None:
    """Regression: any relation to its own section was taken as "part of", so EAC-CPF agents
    ("Related agents") got a parent trail and Contents from the agents they are related to."""
    run_import(archive, "eac-cpf", shared_data("eac-cpf", "anf"))
    agents = next(
        s.tipo
        for s in archive.sections()
        if any(f.target_section == s.tipo for f in archive.fields(s.tipo) if f.kind == "relation")
    )
    related = next(
        link.source
        for record in archive.iter_records(agents)
        for link in archive.links_from(record.key)
        if link.target.section_tipo == agents
    )

    assert hierarchy_of(archive, agents) is None
    assert breadcrumbs(archive, related) == [] and children_of(archive, related) == []


def test_siblings_with_one_title_are_told_apart_by_dates_and_container(archive: Archive) -> None:
    """UW's AFL-CIO records: the files under a subseries are all "Oregon State
    Correspondence"; each child carries its own ``unitdate`` and box-folder."""
    path = shared_data("ead", "uw-labor-archives", "AFL-CIORegion9_5189.xml_LinkedDataProject.xml")
    run_import(archive, "ead", path)
    keys = external_keys(archive, "ead")
    parent = "AFL-CIORegion9_5189.xml#c4.1.4"  # the 4th c03 of the 1st c02 of the 4th c01
    units = etree.parse(str(path)).xpath("/ead/archdesc/dsc/c01[4]/c02[1]/c03[4]/c04")
    assert isinstance(units, list) and len(units) == 6

    nodes = children_of(archive, keys[parent])

    assert len({n.label for n in nodes}) == 1
    assert [n.dates for n in nodes] == [u.findtext("did/unitdate").strip() for u in units]
    assert [n.container.split()[-1] for n in nodes] == [
        u.findtext("did/container").strip() for u in units
    ]
    assert len({(n.dates, n.container) for n in nodes}) == 6
