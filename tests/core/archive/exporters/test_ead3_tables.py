"""EAD3 export of a hierarchy catalogued in a spreadsheet (AtoM's CSV template, or a person's
own Catalan or Spanish columns): schema-valid, nested as the rows' parents say, each column
where its role belongs, and imported back as the same fonds, series and items."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive, open_archive
from app.core.archive.exporters import ExportRequest, run_export
from app.core.archive.hierarchy import breadcrumbs, hierarchy_of
from app.core.archive.importers import run_import
from app.core.archive.importers.ead_fields import CREATORS, EAD3_NS, LEVEL, TITLE, UNITID
from app.core.archive.model import Record, RecordKey
from app.core.archive.records import locators
from app.core.errors import ArxiuError
from tests.conftest import shared_data
from tests.core.archive.xml_query import XPath

NS = {"e": EAD3_NS}
nodes, strings = XPath(NS).nodes, XPath(NS).strings
ATOM = (
    "legacyId,parentId,identifier,title,levelOfDescription,eventDates,eventStartDates,"
    "eventEndDates,extentAndMedium,scopeAndContent,archivalHistory,arrangement,accessConditions,"
    "eventActors,subjectAccessPoints,placeAccessPoints,repository,digitalObjectURI,culture\n"
    "F1,,ES-AMV-1,Fons Puig,Fonds,1900-1950,1900,1950,2 m,Papers de la família,"
    "Donat per la família el 1990,Per sèries,Open,"
    '"Puig, Josep|Família Puig",Arquitectura|Urbanisme,Vic,Arxiu Municipal de Vic,,ca\n'
    "S1,F1,ES-AMV-1.1,Correspondència,Series,1920-1936,1920,1936,,Cartes,,,Closed until 2030,"
    '"Puig, Josep",Arquitectura,Vic|Girona,,,ca\n'
    "I1,S1,ES-AMV-1.1.1,Carta a Gaudí,Item,1926,1926,1926,,,,,,,,,,"
    "https://example.org/carta.jpg,ca\n"
    "S2,F1,ES-AMV-1.2,Plànols,Series,,,,3 carpetes,,,,,,,,,,ca\n"
)
"""AtoM's archival description template: a fonds, a closed series with an item, an open series."""


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    """The EAD3 1.1.1 schema (shared data; nothing fetched)."""
    return etree.XMLSchema(etree.parse(str(shared_data("schemas", "ead3.xsd"))))


def _import(archive: Archive, tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    summary = run_import(archive, "csv", path)
    [section] = [tipo for tipo in summary.sections if tipo.startswith("csv")]
    return section


def test_an_atom_csv_exports_as_valid_ead3_nested_by_its_parents(
    archive: Archive, tmp_path: Path, schema: etree.XMLSchema
) -> None:
    section = _import(archive, tmp_path, "atom.csv", ATOM)
    out = tmp_path / "fons.xml"

    summary = run_export(archive, "ead3", ExportRequest(section, out, include_restricted=True))

    document = etree.parse(str(out))
    assert schema.validate(document), str(schema.error_log)
    root = document.getroot()
    assert strings(root, "e:control/e:recordid/text()") == ["ES-AMV-1"]
    [archdesc] = nodes(root, "e:archdesc")
    assert archdesc.get("level") == "fonds"
    assert strings(archdesc, "e:did/e:unitid/text()") == ["ES-AMV-1"]
    assert strings(archdesc, "e:did/e:unitdate/@normal") == ["1900/1950"]
    assert strings(archdesc, "e:did/e:physdesc/text()") == ["2 m"]
    assert strings(archdesc, "e:did/e:origination/*/e:part/text()") == [
        "Puig, Josep",
        "Família Puig",
    ]
    assert strings(archdesc, "e:custodhist/e:p/text()") == ["Donat per la família el 1990"]
    assert strings(archdesc, "e:arrangement/e:p/text()") == ["Per sèries"]
    assert strings(archdesc, "e:controlaccess/e:geogname/e:part/text()") == ["Vic"]
    series = nodes(archdesc, "e:dsc/e:c")
    assert [(c.get("level"), c.get("id")) for c in series] == [("series", "S1"), ("series", "S2")]
    assert series[0].get("audience") == "internal"  # closed until 2030
    [item] = nodes(series[0], "e:c")
    assert (item.get("level"), strings(item, "e:did/e:unitid/text()")) == ("item", ["ES-AMV-1.1.1"])
    assert strings(item, "e:did/e:dao/@href") == ["https://example.org/carta.jpg"]
    assert summary.records == 4 and summary.restricted_included == 1
    notes = [note.english() for note in summary.notes]
    assert any("Repository" in note and "no place in EAD3" in note for note in notes), notes


def test_restricted_rows_are_left_out_with_what_is_under_them(
    archive: Archive, tmp_path: Path, schema: etree.XMLSchema
) -> None:
    section = _import(archive, tmp_path, "atom.csv", ATOM)
    out = tmp_path / "fons.xml"

    summary = run_export(archive, "ead3", ExportRequest(section, out))

    document = etree.parse(str(out))
    assert schema.validate(document), str(schema.error_log)
    assert strings(document.getroot(), "//e:c/@id") == ["S2"]
    assert "Closed until 2030" not in out.read_text(encoding="utf-8")
    assert (summary.records, summary.restricted_left_out) == (2, 1)


def test_the_export_imports_back_as_the_same_hierarchy(archive: Archive, tmp_path: Path) -> None:
    """CSV in, EAD3 out, EAD in: the same units, codes, titles, levels, creators and nesting."""
    section = _import(archive, tmp_path, "atom.csv", ATOM)
    out = tmp_path / "fons.xml"
    run_export(archive, "ead3", ExportRequest(section, out, include_restricted=True))

    run_import(archive, "ead", out)

    shape = hierarchy_of(archive, section)
    assert shape is not None and shape.reference_field is not None
    code = shape.reference_field

    def units(tipo: str, code_field: str) -> dict[str, tuple[str, str, list[str], list[str]]]:
        found = {}
        for record in archive.iter_records(tipo):
            trail = [node.label for node in breadcrumbs(archive, record.key)]
            creators = sorted(archive.record_label(k) for k in _targets(record, creators_of[tipo]))
            found[record.text(code_field) or ""] = (
                record.text(titles[tipo]) or "",
                (record.text(levels[tipo]) or "").lower(),
                trail,
                creators,
            )
        return found

    fields = {f.label("lg-eng"): f.tipo for f in archive.fields(section)}
    titles = {section: fields["Title"], "ead1": TITLE}
    levels = {section: fields["Level"], "ead1": LEVEL}
    creators_of = {section: fields["Creator"], "ead1": CREATORS}
    original, back = units(section, code), units("ead1", UNITID)
    assert back.keys() == original.keys() == {f"ES-AMV-1{s}" for s in ("", ".1", ".1.1", ".2")}
    for unit, (title, level, trail, creators) in original.items():
        assert back[unit][0] == title and back[unit][1] == level and back[unit][3] == creators
        assert [t.split(" · ")[-1] for t in back[unit][2]] == [t.split(" · ")[-1] for t in trail], (
            unit
        )


def _targets(record: Record, tipo: str) -> list[RecordKey]:
    return locators(record.items(tipo))


@pytest.mark.parametrize(
    ("header", "levels"),
    [
        ("Codi;Forma part de;Títol;Nivell\n", ("Fons", "Sèrie", "Unitat documental")),
        ("Código;Forma parte de;Título;Nivel\n", ("Fondo", "Serie", "Expediente")),
    ],
)
def test_levels_written_in_catalan_or_spanish_become_eads_levels(
    archive: Archive, tmp_path: Path, schema: etree.XMLSchema, header: str, levels: tuple[str, ...]
) -> None:
    rows = f"A;;Fons Soler;{levels[0]}\nB;A;Cartes;{levels[1]}\nC;B;Carta;{levels[2]}\n"
    section = _import(archive, tmp_path, "fons.csv", header + rows)
    out = tmp_path / "fons.xml"

    run_export(archive, "ead3", ExportRequest(section, out))

    document = etree.parse(str(out))
    assert schema.validate(document), str(schema.error_log)
    got = [n.get("level") for n in nodes(document.getroot(), "//e:archdesc | //e:c")]
    expected = {"Unitat documental": "item", "Expediente": "file"}[levels[2]]
    assert got == ["fonds", "series", expected]
    assert strings(document.getroot(), "e:control/e:recordid/text()") == ["A"]


def test_a_table_that_is_not_a_hierarchy_is_refused_with_a_reason(
    archive: Archive, tmp_path: Path
) -> None:
    section = _import(archive, tmp_path, "list.csv", "Títol,Data\nCarta,1926\n")

    with pytest.raises(ArxiuError) as caught:
        run_export(archive, "ead3", ExportRequest(section, tmp_path / "x.xml"))

    assert caught.value.code == "export.section_unsupported"
    assert "part of" in caught.value.message and not (tmp_path / "x.xml").exists()


def test_real_finding_aids_through_a_spreadsheet_come_back_as_valid_ead3(
    tmp_path: Path, schema: etree.XMLSchema
) -> None:
    """The UW finding aids imported, exported as CSV (Catalan headings), that sheet imported
    as a table, and the table exported as EAD3: every row a unit of a valid finding aid, its
    notes and containers where EAD puts them (found by their Catalan labels), nothing left
    out but the identifier and source-file columns; imported back, the same units."""
    with open_archive(tmp_path / "a", create=True) as archive:
        run_import(archive, "ead", shared_data("ead", "uw-labor-archives"))
        sheet = tmp_path / "fons.csv"
        rows = run_export(archive, "csv", ExportRequest("ead1", sheet, lang="lg-cat")).records
        [section] = [s for s in run_import(archive, "csv", sheet).sections if s.startswith("csv")]
        out = tmp_path / "ead3"

        summary = run_export(
            archive, "ead3", ExportRequest(section, out, include_restricted=True, lang="lg-cat")
        )

        units = 0
        containers = notes = 0
        for file in sorted(out.glob("*.xml")):
            document = etree.parse(str(file))
            assert schema.validate(document), (file.name, str(schema.error_log))
            units += len(nodes(document, "//e:archdesc | //e:c"))
            containers += len(nodes(document, "//e:did/e:container"))
            notes += len(nodes(document, "//e:custodhist | //e:arrangement | //e:bioghist"))
        assert units == summary.records == rows
        assert containers > 0 and notes > 0
        assert summary.notes[0].english() == (
            "2 fields have no place in EAD3 and were not written: Identificador, Fitxer d'origen"
        )
    with open_archive(tmp_path / "b", create=True) as back:
        assert run_import(back, "ead", out).sections["ead1"] == rows
