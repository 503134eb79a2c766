"""The CSV mapping page says the table's size in words that agree with its rows and columns
(1 fila, 2 files) in Catalan, Spanish and English."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.ui import i18n
from app.ui.importing.mapping_page import MappingPage

SIZES = {
    "ca": ("fons.csv: 1 fila, 1 columna. Revisa", "fons.csv: 2 files, 2 columnes. Revisa"),
    "es": ("fons.csv: 1 fila, 1 columna. Revisa", "fons.csv: 2 filas, 2 columnas. Revisa"),
    "en": ("fons.csv: 1 row, 1 column. Check", "fons.csv: 2 rows, 2 columns. Check"),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_table_s_rows_and_columns_agree_with_their_number(
    qapp: Any, tmp_path: Path, lang: str
) -> None:
    path = tmp_path / "fons.csv"
    tables = ("Title\nCarta del batlle\n", "Title,Date\nCarta del batlle,1912\nPlànol,1950\n")
    translator = i18n.install_translator(qapp, lang)
    try:
        said = []
        for text in tables:
            path.write_text(text, encoding="utf-8")
            page = MappingPage()
            page.load(None, path)
            said.append(page.about.text())
            page.deleteLater()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    for text, start in zip(said, SIZES[lang], strict=True):
        assert text.startswith(start), text
