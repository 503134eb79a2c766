"""The import summary the app shows says each skip's reason in the UI's language, and each
count in words that agree with it (1 registre, 1 nou; 0 and 2 registres, nous)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.importers import ImportSummary
from app.core.archive.importers.base import BAD_ROW, ImportOptions, Skip
from app.core.errors import ImportFailed
from app.core.importing import import_dataset
from app.ui.importing.summary import SKIPS_LISTED, summary_notice, summary_text

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


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_skips_are_said_in_the_ui_language(imported: ImportSummary, ui_lang: str) -> None:
    lines = summary_text(imported).splitlines()
    assert [line for line in lines if line.startswith("  fons.csv")] == list(SKIPS[ui_lang])


ENDED_EARLY = {
    "en": "fons.csv ends early: the file ends inside a quoted cell of the row on line 3; the rows "
    "before it were read. The file may have been cut short; export or copy it again.",
    "ca": "fons.csv s'acaba abans d'hora: el fitxer s'acaba dins "
    "d'una cel·la entre cometes de la fila de la línia 3; s'han llegit les files anteriors. "
    "Potser el fitxer ha quedat tallat; torna'l a exportar o a copiar.",
    "es": "fons.csv termina antes de tiempo: el archivo "
    "termina dentro de una celda entre comillas de la fila de la línea 3; se han leído las filas "
    "anteriores. Puede que el archivo haya quedado cortado; vuelve a exportarlo o a copiarlo.",
}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_an_import_that_stopped_names_its_error_in_the_ui_language(
    ui_lang: str, tmp_path: Path
) -> None:
    """A real CSV that ends inside a quoted cell: the error's message and hint are in the UI's
    language (a message in the language needs no label before it)."""
    path = tmp_path / "fons.csv"
    path.write_text('Identifier,Title\nr1,Carta\nr2,"Plànol del pantà\n', encoding="utf-8")
    with open_archive(tmp_path / "archive", create=True) as archive:
        stopped = import_dataset(archive, "csv", path, options=ImportOptions())
    assert stopped.error is not None and stopped.error.code == "import.truncated"
    assert summary_text(stopped).splitlines()[-1] == ENDED_EARLY[ui_lang]


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_seconds_are_written_as_the_ui_language_writes_numbers(
    imported: ImportSummary, ui_lang: str
) -> None:
    timed = ImportSummary(kind="csv", path="fons.csv", seconds=2.34)
    first = summary_text(timed).splitlines()[0]
    assert first.endswith({"en": "in 2.3 s.", "ca": "en 2,3 s.", "es": "en 2,3 s."}[ui_lang])


def _summary(count: int, *, skipped: int | None = None) -> ImportSummary:
    """A summary whose every count is ``count`` (records: new ``count``, updated and unchanged
    0), with ``skipped`` skips (``count`` when not given)."""
    summary = ImportSummary(kind="csv", path="fons.csv", created=count, links=count, media=count)
    summary.deleted = count
    many = count if skipped is None else skipped
    summary.skipped = [Skip(n, "bad", "fons.csv", BAD_ROW) for n in range(1, many + 1)]
    return summary


COUNTS = {
    "en": {
        0: ("0 records (0 new, 0 updated, 0 unchanged), 0 links, 0 media files, 0 skipped",),
        1: (
            "1 record (1 new, 0 updated, 0 unchanged), 1 link, 1 media file, 1 skipped",
            "1 record withdrawn by the source was removed.",
        ),
        2: (
            "2 records (2 new, 0 updated, 0 unchanged), 2 links, 2 media files, 2 skipped",
            "2 records withdrawn by the source were removed.",
        ),
    },
    "ca": {
        0: (
            "0 registres (0 nous, 0 actualitzats, 0 sense canvis), 0 enllaços, "
            "0 fitxers multimèdia, 0 omesos",
        ),
        1: (
            "1 registre (1 nou, 0 actualitzats, 0 sense canvis), 1 enllaç, 1 fitxer multimèdia, "
            "1 omès",
            "S'ha eliminat 1 registre que la font ha retirat.",
        ),
        2: (
            "2 registres (2 nous, 0 actualitzats, 0 sense canvis), 2 enllaços, "
            "2 fitxers multimèdia, 2 omesos",
            "S'han eliminat 2 registres que la font ha retirat.",
        ),
    },
    "es": {
        0: (
            "0 registros (0 nuevos, 0 actualizados, 0 sin cambios), 0 enlaces, "
            "0 archivos multimedia, 0 omitidos",
        ),
        1: (
            "1 registro (1 nuevo, 0 actualizados, 0 sin cambios), 1 enlace, "
            "1 archivo multimedia, 1 omitido",
            "Se ha eliminado 1 registro que la fuente ha retirado.",
        ),
        2: (
            "2 registros (2 nuevos, 0 actualizados, 0 sin cambios), 2 enlaces, "
            "2 archivos multimedia, 2 omitidos",
            "Se han eliminado 2 registros que la fuente ha retirado.",
        ),
    },
}


@pytest.mark.parametrize("count", [0, 1, 2])
@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_each_count_agrees_with_its_number(ui_lang: str, count: int) -> None:
    first, *withdrawn = COUNTS[ui_lang][count]
    lines = summary_text(_summary(count)).splitlines()
    assert lines[0].startswith(first + ","), lines[0]
    assert lines[1:2] == withdrawn  # none for 0: nothing was withdrawn


LINKED = {
    "en": (
        "1 digital object linked by its address (nothing downloaded).",
        "33 digital objects linked by their addresses (nothing downloaded).",
    ),
    "ca": (
        "1 objecte digital enllaçat per la seva adreça (no se n'ha baixat res).",
        "33 objectes digitals enllaçats per la seva adreça (no se n'ha baixat res).",
    ),
    "es": (
        "1 objeto digital enlazado por su dirección (no se ha descargado nada).",
        "33 objetos digitales enlazados por su dirección (no se ha descargado nada).",
    ),
}


NAMED = {
    "en": "68 of them for the persons, places and subjects the records name.",
    "ca": "68 d'ells, de les persones, llocs i matèries que els registres esmenten.",
    "es": "68 de ellos, de las personas, lugares y materias que los registros mencionan.",
}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_records_made_for_names_are_said_apart(ui_lang: str) -> None:
    summary = ImportSummary(kind="ead", path="fons.xml", created=3096, read=3028, named=68)
    assert summary_text(summary).splitlines()[1] == NAMED[ui_lang]


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_digital_objects_linked_are_not_said_to_be_media_files(ui_lang: str) -> None:
    """An EAD ``dao`` is an address, not a file copied in: the summary says so on its own line
    (and none at all when there is none)."""
    for count, said in zip((1, 33), LINKED[ui_lang], strict=True):
        summary = ImportSummary(kind="ead", path="fons.xml", created=3, media_linked=count)
        lines = summary_text(summary).splitlines()
        assert lines[1] == said
        assert ("0 media files" in lines[0]) == (ui_lang == "en")
    assert len(summary_text(ImportSummary(kind="ead", path="fons.xml")).splitlines()) == 1


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_an_updated_and_an_unchanged_record_are_said_in_the_singular(ui_lang: str) -> None:
    summary = ImportSummary(kind="csv", path="fons.csv", updated=1, unchanged=1)
    said = {
        "en": "2 records (0 new, 1 updated, 1 unchanged), ",
        "ca": "2 registres (0 nous, 1 actualitzat, 1 sense canvis), ",
        "es": "2 registros (0 nuevos, 1 actualizado, 1 sin cambios), ",
    }[ui_lang]
    assert summary_text(summary).startswith(said)


MORE = {
    "en": ("  … and 1 more skipped.", "  … and 2 more skipped."),
    "ca": ("  … i 1 omès més.", "  … i 2 omesos més."),
    "es": ("  … y 1 omitido más.", "  … y 2 omitidos más."),
}
STOPPED = {
    "en": ("The import stopped: 1 record written.", "The import stopped: 2 records written."),
    "ca": (
        "La importació s'ha aturat: 1 registre escrit.",
        "La importació s'ha aturat: 2 registres escrits.",
    ),
    "es": (
        "La importación se ha detenido: 1 registro escrito.",
        "La importación se ha detenido: 2 registros escritos.",
    ),
}
IMPORTED = {
    "en": ("0 records imported.", "1 record imported.", "2 records imported."),
    "ca": ("0 registres importats.", "1 registre importat.", "2 registres importats."),
    "es": ("0 registros importados.", "1 registro importado.", "2 registros importados."),
}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_skips_left_unlisted_and_the_notice_agree_with_their_number(ui_lang: str) -> None:
    for more, said in zip((1, 2), MORE[ui_lang], strict=True):
        lines = summary_text(_summary(0, skipped=SKIPS_LISTED + more)).splitlines()
        assert lines[-1] == said
    for count, said in enumerate(IMPORTED[ui_lang]):
        assert summary_notice(_summary(count)) == said
    for count, said in zip((1, 2), STOPPED[ui_lang], strict=True):
        stopped = _summary(count)
        stopped.error = ImportFailed("import.truncated", "fons.csv ends early.")
        assert summary_notice(stopped) == said


THOUSANDS = {
    "en": ("12,345 records (12,345 new, 0 updated, 0 unchanged), 12,345 links, "
           "12,345 media files, 0 skipped, in 2.3 s.", "12,345 records imported."),
    "ca": ("12.345 registres (12.345 nous, 0 actualitzats, 0 sense canvis), 12.345 enllaços, "
           "12.345 fitxers multimèdia, 0 omesos, en 2,3 s.", "12.345 registres importats."),
    "es": ("12.345 registros (12.345 nuevos, 0 actualizados, 0 sin cambios), 12.345 enlaces, "
           "12.345 archivos multimedia, 0 omitidos, en 2,3 s.", "12.345 registros importados."),
}  # fmt: skip


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_counts_are_written_with_the_ui_locale_s_thousands_separator(ui_lang: str) -> None:
    """A large import's counts grouped as the UI's locale groups them (``12.345`` in Catalan
    and Spanish), as its seconds are written with the locale's decimal mark."""
    summary = ImportSummary(
        kind="csv", path="fons.csv", created=12345, links=12345, media=12345, seconds=2.34
    )
    summary.sections = Counter({"c1": 12345})
    first, notice = THOUSANDS[ui_lang]
    lines = summary_text(summary, {"c1": "Cartes"}).splitlines()
    assert lines[0] == first
    assert lines[1].endswith(" Cartes: " + ("12,345" if ui_lang == "en" else "12.345"))
    assert summary_notice(summary) == notice
