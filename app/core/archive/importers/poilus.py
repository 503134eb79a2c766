"""Importer of the *Testaments de Poilus* wills (``poilus/wills.jsonl.gz`` + ``poilus/pages/``).

PATH is the ``poilus`` folder or the wills file; page images are looked up in ``pages/`` beside
the file and attached as media (``poilus13``) when present (the snapshot holds 3 of the 226
listed pages; the others are counted as ``media_missing``). Source ``poilus``, external id = the
document id (``TestamentsDePoilus_will_AD78_0005``).

Section ``poilus1`` "Wills of French WWI soldiers (Testaments de Poilus)", label ``poilus2``:

========  ===================  =============  ====================================================
tipo      label                kind           value
========  ===================  =============  ====================================================
poilus2   title                text           ``Testament — <testator>``
poilus3   document id          text           ``TestamentsDePoilus_will_AD78_0005``
poilus4   testator             text           name
poilus5   life dates           text           ``1885-1916``
poilus6   birth year           number
poilus7   death year           number
poilus8   birth place          text           département (French)
poilus9   date written         text           as written (French)
poilus10  date written (ISO)   date           ``YYYY-MM-DD`` where it could be read
poilus11  place written        text           as written (French)
poilus12  transcription        transcription  the pages, each after a ``[page-n-N]`` marker
poilus13  page images          media          the JPEG pages (media table)
poilus14  batch                number         1 or 2
========  ===================  =============  ====================================================

The transcription is ``[page-n-1]\\n<page 1>\\n\\n[page-n-2]\\n<page 2>...`` so the index can
split it at the page markers and cite the page.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.base import (
    BATCH_SIZE,
    Built,
    ImportSummary,
    ProgressFn,
    Values,
    ensure_schema,
    import_file,
    put,
    schema_field,
    section_schema,
)
from app.core.archive.importers.reading import (
    BadRow,
    dataset_file,
    opt_int,
    opt_str,
    require_id,
    str_list,
)
from app.core.archive.media import add_media
from app.core.archive.model import RecordKey
from app.core.json_types import JsonObject

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SOURCE = "poilus"
SECTION = "poilus1"
FILE_NAME = "wills.jsonl.gz"
PAGES_DIR = "pages"
MEDIA_FIELD = "poilus13"
LANG = "lg-fra"


_f = functools.partial(schema_field, SECTION)


SCHEMA = section_schema(
    SECTION,
    (
        "Wills of French WWI soldiers (Testaments de Poilus)",
        "Testaments de soldats francesos (Testaments de Poilus)",
        "Testamentos de soldados franceses (Testaments de Poilus)",
    ),
    "Handwritten wills of French soldiers of the First World War, transcribed by the "
    "Testaments de Poilus project. CREMMA-AN-TestamentsDePoilus (HTR-United, 2023), "
    "doi:10.5281/zenodo.10177106, CC BY 4.0.",
    label_field="poilus2",
    fields=(
        _f("poilus2", ("Title", "Títol", "Título")),
        _f("poilus3", ("Document id", "Identificador", "Identificador")),
        _f("poilus4", ("Testator", "Testador", "Testador")),
        _f("poilus5", ("Life dates", "Dates de vida", "Fechas de vida")),
        _f("poilus6", ("Birth year", "Any de naixement", "Año de nacimiento"), "number"),
        _f("poilus7", ("Death year", "Any de mort", "Año de muerte"), "number"),
        _f(
            "poilus8",
            ("Birth place", "Lloc de naixement", "Lugar de nacimiento"),
            multilingual=True,
        ),
        _f(
            "poilus9",
            ("Date written", "Data d'escriptura", "Fecha de escritura"),
            multilingual=True,
        ),
        _f("poilus10", ("Date written (ISO)", "Data (ISO)", "Fecha (ISO)"), "date"),
        _f(
            "poilus11",
            ("Place written", "Lloc d'escriptura", "Lugar de escritura"),
            multilingual=True,
        ),
        _f(
            "poilus12",
            ("Transcription", "Transcripció", "Transcripción"),
            "transcription",
            multilingual=True,
        ),
        _f(
            MEDIA_FIELD,
            ("Page images", "Imatges de les pàgines", "Imágenes de las páginas"),
            "media",
        ),
        _f("poilus14", ("Batch", "Lot", "Lote"), "number"),
    ),
)


def import_poilus(
    archive: Archive, path: Path, progress: ProgressFn | None = None
) -> ImportSummary:
    """Import the wills from ``path`` (the file or the ``poilus`` folder), with page images."""
    path = dataset_file(path, FILE_NAME)
    ensure_schema(archive, SCHEMA)
    summary = ImportSummary(kind="poilus", path=str(path))
    pages: dict[str, list[str]] = {}
    attach = _PageAttacher(archive, summary, path.parent / PAGES_DIR, pages)
    build = functools.partial(build_will, pages=pages)
    return import_file(
        archive,
        summary,
        path,
        SOURCE,
        build,
        progress=progress,
        after_flush=attach,
        batch_size=BATCH_SIZE,  # media written after each batch, where they were before
    )


def page_marker(number: int) -> str:
    """The marker that opens page ``number`` (1-based) of a transcription."""
    return f"[page-n-{number}]"


def build_will(row: JsonObject, pages: dict[str, list[str]]) -> Built:
    """One will as a record; its page image names are noted in ``pages`` for the attacher."""
    doc_id = require_id(row)
    testator = opt_str(row, "testator")
    page_texts = str_list(row, "page_texts")
    text = opt_str(row, "text")
    if not page_texts and text is None:
        raise BadRow.said("no 'page_texts' and no 'text'")
    values: Values = {}
    put(values, "poilus2", f"Testament — {testator or doc_id}")
    put(values, "poilus3", doc_id)
    put(values, "poilus4", testator)
    put(values, "poilus5", opt_str(row, "life_dates"))
    put(values, "poilus6", opt_int(row, "birth_year"))
    put(values, "poilus7", opt_int(row, "death_year"))
    put(values, "poilus8", opt_str(row, "birth_place"), LANG)
    put(values, "poilus9", opt_str(row, "date_written"), LANG)
    put(values, "poilus10", opt_str(row, "date_written_iso"))
    put(values, "poilus11", opt_str(row, "place_written"), LANG)
    put(values, "poilus12", transcription(page_texts) if page_texts else text, LANG)
    put(values, "poilus14", opt_int(row, "batch"))
    pages[doc_id] = str_list(row, "pages")
    return Built(NewRecord(SECTION, values, external_id=doc_id))


def transcription(page_texts: list[str]) -> str:
    """The pages joined, each after its ``[page-n-N]`` marker."""
    return "\n\n".join(
        f"{page_marker(n)}\n{text.strip()}" for n, text in enumerate(page_texts, start=1)
    )


class _PageAttacher:
    """After each batch is written, attaches the page images found on disk as media."""

    def __init__(
        self, archive: Archive, summary: ImportSummary, folder: Path, pages: dict[str, list[str]]
    ) -> None:
        self.archive = archive
        self.summary = summary
        self.folder = folder
        self.pages = pages

    def __call__(self, written: list[tuple[NewRecord, RecordKey]]) -> None:
        for record, key in written:
            for name in self.pages.pop(record.external_id or "", []):
                file = self.folder / name
                if Path(name).name != name or not file.is_file():
                    self.summary.media_missing += 1
                    continue
                add_media(self.archive, key, MEDIA_FIELD, file)
                self.summary.media += 1
