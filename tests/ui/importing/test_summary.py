"""The import summary the app shows says each skip's reason in the UI's language."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import open_archive
from app.core.archive.importers import ImportSummary
from app.core.archive.importers.base import ImportOptions
from app.core.errors import ImportFailed
from app.core.importing import import_dataset
from app.ui import i18n
from app.ui.importing.summary import summary_text

ROWS = (
    "Identifier,Title,Date\nr1,Carta del batlle,1912\nr2,Plànol del pantà,1950,extra,cells\n"
    "r1,Carta repetida,1913\n"
)
SKIPS = {
    "en": (
        "  fons.csv:3 [import.bad_row] the row has 5 cells, the header 3",
        "  fons.csv:4 [import.duplicate_id] duplicate id 'r1' (first on line 2)",
    ),
    "ca": (
        "  fons.csv:3 [import.bad_row] la fila té 5 cel·les i la capçalera, 3",
        "  fons.csv:4 [import.duplicate_id] identificador duplicat «r1» (apareix primer a la "
        "línia 2)",
    ),
    "es": (
        "  fons.csv:3 [import.bad_row] la fila tiene 5 celdas y la cabecera, 3",
        "  fons.csv:4 [import.duplicate_id] identificador duplicado «r1» (aparece primero en la "
        "línea 2)",
    ),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> ImportSummary:
    """A real CSV import with a ragged row and a duplicate id."""
    folder = tmp_path_factory.mktemp("summary")
    path = folder / "fons.csv"
    path.write_text(ROWS, encoding="utf-8")
    with open_archive(folder / "archive", create=True) as archive:
        return import_dataset(archive, "csv", path, options=ImportOptions())


@pytest.fixture
def ui_lang(request: pytest.FixtureRequest, qapp: Any) -> Iterator[str]:
    lang = str(request.param)
    translator = i18n.install_translator(qapp, lang)
    yield lang
    if translator is not None:
        qapp.removeTranslator(translator)


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_skips_are_said_in_the_ui_language(imported: ImportSummary, ui_lang: str) -> None:
    lines = summary_text(imported).splitlines()
    assert [line for line in lines if line.startswith("  fons.csv")] == list(SKIPS[ui_lang])


@pytest.mark.parametrize("ui_lang", ["ca", "es"], indirect=True)
def test_an_import_that_stopped_names_its_error_in_the_ui_language(
    imported: ImportSummary, ui_lang: str, tmp_path: Path
) -> None:
    message = "fons.csv ends early: the file ends inside a quoted cell of the row on line 9."
    stopped = ImportSummary(kind="csv", path=str(tmp_path))
    stopped.error = ImportFailed("import.truncated", message)
    label = {"ca": "El fitxer s'acaba abans d'hora", "es": "El archivo termina antes de tiempo"}
    assert summary_text(stopped).splitlines()[-1] == f"{label[ui_lang]}: {message}"


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_seconds_are_written_as_the_ui_language_writes_numbers(
    imported: ImportSummary, ui_lang: str
) -> None:
    timed = ImportSummary(kind="csv", path="fons.csv", seconds=2.34)
    first = summary_text(timed).splitlines()[0]
    assert first.endswith({"en": "in 2.3 s.", "ca": "en 2,3 s.", "es": "en 2,3 s."}[ui_lang])
