"""Values in words in the record view: a place's coordinates as a point, an interview's
language code as the language's name in the UI language (the demo archive, as the window shows
it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from app.core.archive import RecordKey, open_archive
from app.ui import i18n
from app.ui.browser.record_html import record_html


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
