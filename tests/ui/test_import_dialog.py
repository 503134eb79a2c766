"""File → Import…: the standards first, a table's edited mapping imported, the real summary."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from app.core.archive.importers.csv_mapping import guess_mapping
from app.ui import i18n
from app.ui.browser.sections_view import TIPO_ROLE
from app.ui.import_dialog import ImportChoiceDialog, progress_dialog
from app.ui.importing import formats
from tests.conftest import shared_data
from tests.ui.conftest import run

STANDARDS = ["ead", "eac-cpf", "dc", "oai", "csv", "folder", "ohms", "json"]
DEVELOPER = {"nomisma", "igch", "tate", "poilus", "beir"}
VITET = ("ead", "anf", "FRAN_IR_003500.xml")


def _units(path: Path) -> int:
    """The archdesc and every component of an EAD file, counted with an XPath of our own."""
    count = etree.parse(str(path)).xpath("count(//archdesc | //c)")
    assert isinstance(count, float)
    return int(count)


def test_the_standards_come_first_and_the_developer_datasets_last(qapp: Any) -> None:
    dialog = ImportChoiceDialog()
    kinds = dialog.kinds()

    assert kinds[: len(STANDARDS)] == STANDARDS
    assert set(kinds[-len(DEVELOPER) :]) == DEVELOPER
    assert dialog.headings()[0] == "Archival standards"
    assert dialog.headings()[-1] == "Developer datasets"
    assert dialog.current().kind == "ead"  # what a person sees selected first
    dialog.select_kind("oai")
    assert dialog.url.isVisibleTo(dialog) and not dialog.path.isVisibleTo(dialog)
    dialog.url.setText("http://127.0.0.1:9/oai")
    dialog.set_spec.setText("letters")
    dialog.from_date.setText("2024-01-01")
    choice = dialog.choice()
    assert choice is not None and choice.kind == "oai" and choice.options is not None
    assert (choice.options.set_spec, choice.options.from_date) == ("letters", "2024-01-01")
    assert choice.options.metadata_prefix == "oai_dc"  # Dublin Core unless EAD is chosen
    dialog.metadata.setCurrentIndex(dialog.metadata.findData("oai_ead"))
    choice = dialog.choice()
    assert choice is not None and choice.options is not None
    assert choice.options.metadata_prefix == "oai_ead"
    dialog.deleteLater()


def test_the_mapping_edited_in_the_dialog_is_the_mapping_imported(
    make_window: Any, tmp_path: Path
) -> None:
    table = tmp_path / "caixes.csv"
    table.write_text(
        "Títol;Notes internes;Signatura\n"
        "Cartes de la família;no publicar;C-1\n"
        "Fotografies del mas;revisat;C-2\n",
        encoding="utf-8",
    )
    guessed = {
        r.column: r.role for r in guess_mapping(["Títol", "Notes internes", "Signatura"]).columns
    }
    assert guessed["Notes internes"] != "ignore"  # the edit below changes the guess
    window = make_window()
    dialog = ImportChoiceDialog(window, window.services.archive)
    dialog.select_kind("csv")
    dialog.path.setText(str(table))
    assert dialog.next_page() and dialog.pages.currentIndex() == 1
    assert dialog.mapping.table.rowCount() == 3
    preview = dialog.mapping.table.item(0, 2)
    assert preview is not None and "Cartes de la família" in preview.text()
    dialog.mapping.set_role("Notes internes", "ignore")
    choice = dialog.choice()
    assert choice is not None and choice.mapping_file is not None

    text = run(make_window.loop, window.import_choice(choice), 60)

    archive = window.services.archive
    section = next(s for s in archive.sections() if s.tipo.startswith("csv"))
    labels = {f.label("lg-eng") for f in archive.fields(section.tipo)}
    assert "Notes internes" not in labels and labels  # the ignored column made no field
    values = [
        str(v) for r in archive.iter_records(section.tipo) for i in r.values.values() for v in i
    ]
    assert not any("no publicar" in v for v in values)
    assert archive.count_records(section.tipo) == 2 and "2 records (2 new" in text
    assert not choice.mapping_file.exists()  # the temporary mapping is removed
    dialog.deleteLater()
    assert window.import_report is not None
    window.import_report.close()


def test_the_summary_shows_the_real_counts_and_the_new_section(
    make_window: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "ead"
    folder.mkdir()
    shutil.copy(shared_data(*VITET), folder / "FRAN_IR_003500.xml")
    (folder / "broken.xml").write_text("<ead><archdesc>", encoding="utf-8")
    units = _units(folder / "FRAN_IR_003500.xml")
    window = make_window()

    text = run(make_window.loop, window.import_dataset("ead", folder), 120)

    summary = window.last_import
    assert summary is not None
    assert f"{summary.records} records ({summary.created} new" in text
    assert summary.sections["ead1"] == units == window.services.archive.count_records("ead1")
    assert f"{summary.links} links" in text and "0 media files" in text
    assert summary.media_linked == 0 and "digital object" not in text  # no dao in this one
    assert any(line.strip().startswith("broken.xml:") for line in text.splitlines())
    assert "import.xml_malformed" in text
    tipos = [window.sections.item(r).data(TIPO_ROLE) for r in range(window.sections.count())]
    assert "ead1" in tipos
    names = [window.sections.item(r).text() for r in range(window.sections.count())]
    label = window.services.archive.section("ead1").label("lg-eng")
    assert label in names
    [sections] = [line for line in text.splitlines() if line.startswith("Sections: ")]
    assert f"{label}: {units}" in sections.split(", ")  # named as the section list names it
    agents = window.services.archive.section("agent1").label("lg-eng")
    stubs = summary.sections["agent1"]  # the finding aid's names, created with it
    assert stubs == window.services.archive.count_records("agent1") > 0
    assert f"{agents}: {stubs}" in sections
    assert window.import_report is not None and window.import_report.text() == text
    window.import_report.close()


@pytest.mark.parametrize(
    ("lang", "title"),
    [
        ("en", "Import: EAD finding aids (EAD 2002 / EAD3)"),
        ("es", "Importación: Instrumentos de descripción EAD (EAD 2002 / EAD3)"),
        ("ca", "Importació: Instruments de descripció EAD (EAD 2002 / EAD3)"),
    ],
)
def test_the_progress_names_the_format_and_the_status_bar_says_it_briefly(
    make_window: Any, qapp: Any, lang: str, title: str
) -> None:
    """The progress dialog's title names the format as the dialog lists it (not the KIND
    ``ead``); the status bar says how many records came in, beside the index's progress."""
    translator = i18n.install_translator(qapp, lang)
    try:
        window = make_window()
        names = {f.kind: f.name for f in formats.import_formats()}
        assert title.endswith(names["ead"])
        probe = progress_dialog(window, "ead", shared_data(*VITET))
        shown_title = probe.windowTitle()
        probe.setParent(None)  # its show timer is not the window's to stop
        probe.deleteLater()
        assert shown_title == title

        text = run(make_window.loop, window.import_dataset("ead", shared_data(*VITET)), 120)
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    summary = window.last_import
    assert summary is not None and summary.sections["ead1"] == _units(shared_data(*VITET))
    notice = window.statusBar().currentMessage()
    assert (
        notice
        == {
            "en": f"{summary.records} records imported.",
            "es": f"{summary.records} registros importados.",
            "ca": f"{summary.records} registres importats.",
        }[lang]
    )
    assert len(notice) < len(text.splitlines()[0]) / 2  # not the summary's whole first line
    assert window.import_report is not None
    window.import_report.close()
