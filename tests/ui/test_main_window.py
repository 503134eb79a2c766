"""The main window's status bar counts the records of the section shown in words that agree
with the count (1 registre, 2 registres) in Catalan, Spanish and English."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.archive import Archive, Section
from app.ui import i18n

SAID = {
    "ca": ["0 registres", "1 registre", "2 registres"],
    "es": ["0 registros", "1 registro", "2 registros"],
    "en": ["0 records", "1 record", "2 records"],
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_a_section_s_count_agrees_with_its_number(
    make_window: Any, ui_archive: Archive, qapp: Any, lang: str
) -> None:
    for count in (0, 1, 2):
        ui_archive.put_section(Section(f"c{count}", {"lg-eng": f"Letters {count}"}))
        for _ in range(count):
            ui_archive.create_record(f"c{count}", {})
    window = make_window()
    translator = i18n.install_translator(qapp, lang)
    try:
        said = []
        for count in (0, 1, 2):
            window.show_section(f"c{count}")
            said.append(window.statusBar().currentMessage())
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    assert said == SAID[lang]
