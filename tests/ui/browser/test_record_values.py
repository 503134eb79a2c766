"""Values in words in the record view: a place's coordinates as a point, an interview's
language code as the language's name in the UI language (the demo archive, as the window shows
it); a level of description and an entity type as terms of the UI language."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from app.core.archive import RecordKey, open_archive
from app.core.archive.hierarchy import hierarchy_of
from app.core.archive.importers import run_import
from app.core.archive.importers.authorities import AGENTS
from app.core.archive.importers.base import external_keys
from app.core.archive.vocabulary import LANGS
from app.ui import i18n
from app.ui.browser.record_html import record_html
from app.ui.browser.records_model import RecordsTableModel
from tests.conftest import shared_data


def _shown(demo_archive_dir: Path, key: RecordKey, lang: str) -> str:
    archive = open_archive(demo_archive_dir, read_only=True)
    try:
        document = QTextDocument()
        document.setHtml(record_html(archive, archive.get_record(key), [], lang=lang))
        return document.toPlainText()
    finally:
        archive.close()


def test_coordinates_are_a_point_not_a_mapping(qapp: Any, demo_archive_dir: Path) -> None:
    text = _shown(demo_archive_dir, RecordKey("tp1", 4), "lg-eng")
    assert "41.966° N, 2.415° E" in text
    assert "lat" not in text and "{" not in text


@pytest.mark.parametrize(("ui", "name"), [("en", "Catalan"), ("ca", "Català"), ("es", "Catalán")])
def test_an_interview_language_is_named_in_the_ui_language(
    qapp: Any, demo_archive_dir: Path, ui: str, name: str
) -> None:
    translator = i18n.install_translator(qapp, ui)
    try:
        lines = _shown(demo_archive_dir, RecordKey("oh1", 1), i18n.ARCHIVE_LANGS[ui]).splitlines()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    assert "lg-cat" not in lines
    assert name in lines


RANDOLPH = ("ead", "uw-labor-archives", "APhilipRandolphInstitute5903.xml_LinkedDataProject.xml")
"""A UW finding aid: a ``collection``, one accession (``otherlevel``) and five ``file``s in it."""


@pytest.mark.parametrize(
    ("lang", "collection", "file"),
    [
        ("lg-eng", "collection", "file"),
        ("lg-cat", "col·lecció", "expedient"),
        ("lg-spa", "colección", "expediente"),
    ],
)
def test_a_level_of_description_is_said_in_the_ui_language(
    qapp: Any, tmp_path: Path, lang: str, collection: str, file: str
) -> None:
    """EAD's ``@level`` codes stay as written in the archive (an export writes them back) and
    the record view says them as archivists do in Catalan, Spanish and English: beside the
    reference code, in the level field and after each child."""
    archive = open_archive(tmp_path / "archive", create=True)
    try:
        run_import(archive, "ead", shared_data(*RANDOLPH))
        keys = external_keys(archive, "ead")
        top = archive.get_record(keys["APhilipRandolphInstitute5903.xml"])
        shape = hierarchy_of(archive, top.section_tipo)
        assert shape is not None and shape.level_field is not None
        assert top.text(shape.level_field) == "collection"  # stored as the code
        shown = []
        for record in (top, archive.get_record(keys["APhilipRandolphInstitute5903.xml#c1"])):
            document = QTextDocument()
            document.setHtml(record_html(archive, record, [], lang=lang))
            shown.append(document.toPlainText().splitlines())
    finally:
        archive.close()
    assert collection in shown[0][1]  # the reference line: code and level
    level_row = shown[0].index(("Level", "Nivell", "Nivel")[LANGS.index(lang)])
    assert shown[0][level_row + 1] == collection
    children = shown[1][shown[1].index("Contents (5)") + 1 :]
    assert children[0] == f"Drawer 1a-1b {file} · Box 1"  # its box, as written, after the level
    assert children[5:] == ["Search within this description"]  # the link under the contents
    assert all(f" {file} · Box " in line for line in children[:3])
    assert all(line.endswith(f" {file}") for line in children[3:5])  # web captures: no box


@pytest.mark.parametrize(
    ("lang", "family"), [("lg-eng", "family"), ("lg-cat", "família"), ("lg-spa", "familia")]
)
def test_an_entity_type_is_said_in_the_ui_language_in_the_table(
    qapp: Any, tmp_path: Path, lang: str, family: str
) -> None:
    archive = open_archive(tmp_path / "archive", create=True)
    try:
        run_import(archive, "eac-cpf", shared_data("eac-cpf", "anf", "FRAN_NP_050218.xml"))
        model = RecordsTableModel(archive, lang)
        model.set_section(AGENTS)
        heading = ("Entity type", "Tipus d'entitat", "Tipo de entidad")[LANGS.index(lang)]
        across = Qt.Orientation.Horizontal
        headings = [model.headerData(c, across) for c in range(model.columnCount())]
        column = headings.index(heading)
        cells = [model.data(model.index(row, column)) for row in range(model.rowCount())]
    finally:
        archive.close()
    assert family in cells
    assert lang == "lg-eng" or "family" not in cells


@pytest.mark.parametrize(("lang", "series"), [("lg-cat", "sèrie"), ("lg-spa", "serie")])
def test_a_tables_level_is_the_readers_term_without_the_rows_language_tag(
    qapp: Any, tmp_path: Path, lang: str, series: str
) -> None:
    """An AtoM row in Catalan (``culture`` ca) with level ``Series``: its title keeps its
    ``CA`` tag; the level reads as the reader's term, with no ``CA`` that would call it
    Catalan."""
    table = tmp_path / "atom.csv"
    table.write_text(
        "legacyId,parentId,identifier,title,levelOfDescription,culture\n"
        "F1,,ES-1,Fons Puig,Fonds,ca\nS1,F1,ES-1.1,Cartes,Series,ca\n",
        encoding="utf-8",
    )
    archive = open_archive(tmp_path / "archive", create=True)
    try:
        [section] = [s for s in run_import(archive, "csv", table).sections if s.startswith("csv")]
        [series_key] = [r.key for r in archive.iter_records(section) if r.section_id == 2]
        document = QTextDocument()
        document.setHtml(record_html(archive, archive.get_record(series_key), [], lang=lang))
        lines = document.toPlainText().splitlines()
    finally:
        archive.close()
    level = lines.index({"lg-cat": "Nivell", "lg-spa": "Nivel"}[lang])
    assert lines[level + 1] == series
    title = lines.index({"lg-cat": "Títol", "lg-spa": "Título"}[lang])
    assert lines[title + 1].endswith("Cartes") and "CA" in lines[title + 1]
