"""File → Export…: the file written holds as many records as the summary says, and the summary
says each count in words that agree with it (1 registre escrit, 2 registres escrits)."""

from __future__ import annotations

import csv
from typing import Any

import pytest
from lxml import etree

from app.core.archive.exporters import FORMATS, ExportSummary
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.ui.export_dialog import ExportDialog, export_text
from tests.conftest import shared_data
from tests.ui.conftest import run

VITET = ("ead", "anf", "FRAN_IR_003500.xml")


def test_a_section_exported_as_csv_has_the_summary_s_records(
    make_window: Any, tmp_path: Any
) -> None:
    window = make_window()
    run_import(window.services.archive, "ead", shared_data(*VITET))
    dialog = ExportDialog(window.services.archive, parent=window)
    assert [dialog.format.itemData(i) for i in range(dialog.format.count())] == list(FORMATS)
    dialog.section.setCurrentIndex(dialog.section.findData("ead1"))
    dialog.format.setCurrentIndex(dialog.format.findData("csv"))
    assert not dialog.warning.isVisibleTo(dialog)
    dialog.restricted.setChecked(True)
    assert dialog.warning.isVisibleTo(dialog)  # says the export will say so at its top
    dialog.restricted.setChecked(False)
    out = tmp_path / "vitet.csv"
    dialog.out.setText(str(out))
    choice = dialog.choice()
    assert choice is not None and not choice.request.include_restricted

    text = run(make_window.loop, window.export(choice), 60)

    with out.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    written = len(rows) - 1  # the header
    assert written == window.services.archive.count_records("ead1")
    assert text.startswith(f"{written} records written to ")
    assert window.export_report is not None
    window.export_report.close()
    dialog.deleteLater()


def test_the_selected_component_exports_with_what_is_under_it(
    make_window: Any, tmp_path: Any
) -> None:
    window = make_window()
    archive = window.services.archive
    run_import(archive, "ead", shared_data(*VITET))
    component = external_keys(archive, "ead")["FRAN_IR_003500#d_1_2"]
    window.open_record(component)
    source = etree.parse(str(shared_data(*VITET)))
    expected = source.xpath("count(//c[@id='d_1_2']/descendant-or-self::c)")
    assert isinstance(expected, float) and expected > 1
    dialog = ExportDialog(archive, selected=window.record_view.key, parent=window)
    assert dialog.section_tipo() == "ead1" and dialog.subtree.isEnabled()
    dialog.subtree.setChecked(True)
    dialog.format.setCurrentIndex(dialog.format.findData("ead3"))
    out = tmp_path / "d_1_2.xml"
    dialog.out.setText(str(out))
    choice = dialog.choice()
    assert choice is not None and choice.request.record == component

    text = run(make_window.loop, window.export(choice), 60)

    written = etree.parse(str(out)).xpath(
        "count(//*[local-name()='archdesc'] | //*[local-name()='c'])"
    )
    assert written == expected
    assert text.startswith(f"{int(expected)} records written to ")
    assert window.export_report is not None
    window.export_report.close()
    dialog.deleteLater()


EXPORTED = {
    "en": (
        "0 records written to out.csv.",
        "1 record written to out.csv. 1 restricted record left out. 1 restricted record "
        "included; the export says so at its top.",
        "2 records written to out.csv. 2 restricted records left out. 2 restricted records "
        "included; the export says so at its top.",
    ),
    "ca": (
        "0 registres escrits a out.csv.",
        "1 registre escrit a out.csv. 1 registre restringit exclòs. 1 registre restringit "
        "inclòs; l'exportació ho diu al començament.",
        "2 registres escrits a out.csv. 2 registres restringits exclosos. 2 registres "
        "restringits inclosos; l'exportació ho diu al començament.",
    ),
    "es": (
        "0 registros escritos en out.csv.",
        "1 registro escrito en out.csv. 1 registro restringido excluido. 1 registro "
        "restringido incluido; la exportación lo dice al principio.",
        "2 registros escritos en out.csv. 2 registros restringidos excluidos. 2 registros "
        "restringidos incluidos; la exportación lo dice al principio.",
    ),
}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_export_s_counts_agree_with_their_number(ui_lang: str) -> None:
    for count, said in enumerate(EXPORTED[ui_lang]):
        summary = ExportSummary(
            "csv", "out.csv", records=count, restricted_left_out=count, restricted_included=count
        )
        assert export_text(summary) == said


NOT_WRITTEN = {
    "en": "1 field has no place in EAD3 and was not written: Repository",
    "ca": "1 camp no té lloc a l'EAD3 i no s'ha escrit: Arxiu",
    "es": "1 campo no tiene cabida en EAD3 y no se ha escrito: Archivo",
}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_a_spreadsheet_hierarchy_exports_as_ead3_and_says_what_has_no_place(
    make_window: Any, tmp_path: Any, ui_lang: str
) -> None:
    """File → Export… of an AtoM CSV's section as EAD3: the fonds and its series nested, and
    the summary names, in the UI's language, the column EAD3 has no place for."""
    table = tmp_path / "atom.csv"
    table.write_text(
        "legacyId,parentId,identifier,title,levelOfDescription,repository\n"
        "F1,,ES-1,Fons Puig,Fonds,Arxiu de Vic\nS1,F1,ES-1.1,Cartes,Series,\n",
        encoding="utf-8",
    )
    window = make_window()
    archive = window.services.archive
    [section] = [s for s in run_import(archive, "csv", table).sections if s.startswith("csv")]
    lang = {"en": "lg-eng", "ca": "lg-cat", "es": "lg-spa"}[ui_lang]
    dialog = ExportDialog(archive, lang=lang, parent=window)
    dialog.section.setCurrentIndex(dialog.section.findData(section))
    dialog.format.setCurrentIndex(dialog.format.findData("ead3"))
    out = tmp_path / "fons.xml"
    dialog.out.setText(str(out))
    choice = dialog.choice()
    assert choice is not None

    text = run(make_window.loop, window.export(choice), 60)

    root = etree.parse(str(out)).getroot()
    ns = {"e": "http://ead3.archivists.org/schema/"}
    assert root.xpath("e:archdesc/@level", namespaces=ns) == ["fonds"]
    assert root.xpath("e:archdesc/e:dsc/e:c/e:did/e:unitid/text()", namespaces=ns) == ["ES-1.1"]
    assert text.splitlines()[1:] == [NOT_WRITTEN[ui_lang]]
    assert window.export_report is not None
    window.export_report.close()
    dialog.deleteLater()
