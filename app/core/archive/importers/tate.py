"""Importer of the Tate collection (``tate/artists.jsonl.gz``, ``tate/artworks.jsonl.gz``).

PATH is the ``tate`` folder (artists first, then artworks, one summary for both) or one of the
two files (told apart by name: ``artists*`` or ``artworks*``). Artworks link to the artists
already in the archive, so import the folder, or the artists file before the artworks file.
Sources ``tate-artists`` and ``tate-artworks``, external id = Tate's numeric id.

Section ``tate1`` "Tate artists" (label ``tate2``): ``tate2`` name, ``tate3`` sort name,
``tate4`` gender, ``tate5`` dates (display text), ``tate6`` birth year, ``tate7`` death year,
``tate8`` birth place, ``tate9`` death place, ``tate10`` URL (iri).

Section ``tate20`` "Tate artworks" (label ``tate21``): ``tate21`` title, ``tate22`` accession
number, ``tate23`` date (display text), ``tate24`` year, ``tate25`` medium, ``tate26``
dimensions, ``tate27`` credit line, ``tate28`` acquisition year, ``tate29`` contributors
(relation to ``tate1``; each locator also carries the contributor's ``role``: ``artist``,
``after``, ``attributed to``, ...), ``tate30`` contributors missing from the archive (text, e.g.
``artist 19232 (artist)``), ``tate31`` subjects (one item per ``a > b > c`` path), ``tate32``
places (the last term of each ``places > ...`` subject path), ``tate33`` foreign title,
``tate34`` inscription.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.base import (
    Built,
    ImportSummary,
    ProgressFn,
    Schema,
    Values,
    ensure_schema,
    external_keys,
    import_file,
    labels,
    schema_field,
)
from app.core.archive.importers.items import put, put_many
from app.core.archive.importers.reading import (
    BadRow,
    count_lines,
    dataset_file,
    missing,
    opt_int,
    opt_list,
    opt_str,
    require_id,
    str_list,
)
from app.core.archive.model import RecordKey, Section
from app.core.errors import ImportFailed
from app.core.json_types import JsonList, JsonObject
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

ARTISTS, ARTWORKS = "tate1", "tate20"
ARTISTS_SOURCE, ARTWORKS_SOURCE = "tate-artists", "tate-artworks"
ARTISTS_FILE, ARTWORKS_FILE = "artists.jsonl.gz", "artworks.jsonl.gz"
CREDIT = "Metadata: Tate, CC0 (https://www.tate.org.uk/)."


_artist = functools.partial(schema_field, ARTISTS)
_artwork = functools.partial(schema_field, ARTWORKS)


SCHEMA = Schema(
    sections=(
        Section(
            ARTISTS,
            labels("Tate artists", "Artistes de la Tate", "Artistas de la Tate"),
            "Artists of the Tate collection. " + CREDIT,
            label_field="tate2",
        ),
        Section(
            ARTWORKS,
            labels("Tate artworks", "Obres de la Tate", "Obras de la Tate"),
            "Artworks of the Tate collection. " + CREDIT,
            label_field="tate21",
        ),
    ),
    fields=(
        _artist("tate2", ("Name", "Nom", "Nombre")),
        _artist("tate3", ("Sort name", "Nom per ordenar", "Nombre para ordenar")),
        _artist("tate4", ("Gender", "Gènere", "Género")),
        _artist("tate5", ("Dates", "Dates", "Fechas")),
        _artist("tate6", ("Birth year", "Any de naixement", "Año de nacimiento"), "number"),
        _artist("tate7", ("Death year", "Any de mort", "Año de muerte"), "number"),
        _artist("tate8", ("Birth place", "Lloc de naixement", "Lugar de nacimiento")),
        _artist("tate9", ("Death place", "Lloc de mort", "Lugar de muerte")),
        _artist("tate10", ("URL", "URL", "URL"), "iri"),
        _artwork("tate21", ("Title", "Títol", "Título"), multilingual=True),
        _artwork("tate22", ("Accession number", "Número de registre", "Número de registro")),
        _artwork("tate23", ("Date", "Data", "Fecha")),
        _artwork("tate24", ("Year", "Any", "Año"), "number"),
        _artwork("tate25", ("Medium", "Tècnica", "Técnica"), multilingual=True),
        _artwork("tate26", ("Dimensions", "Mides", "Medidas")),
        _artwork("tate27", ("Credit line", "Procedència", "Procedencia"), multilingual=True),
        _artwork(
            "tate28",
            ("Acquisition year", "Any d'adquisició", "Año de adquisición"),
            "number",
        ),
        _artwork(
            "tate29",
            ("Contributors", "Autors", "Autores"),
            "relation",
            target_section=ARTISTS,
        ),
        _artwork(
            "tate30",
            ("Contributors not in the archive", "Autors absents", "Autores ausentes"),
        ),
        _artwork("tate31", ("Subjects", "Temes", "Temas"), multilingual=True),
        _artwork("tate32", ("Places", "Llocs", "Lugares"), multilingual=True),
        _artwork("tate33", ("Foreign title", "Títol original", "Título original")),
        _artwork("tate34", ("Inscription", "Inscripció", "Inscripción"), multilingual=True),
    ),
)


def import_tate(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import Tate artists and/or artworks from ``path`` (the folder or one file)."""
    files = _files(Path(path).expanduser())
    ensure_schema(archive, SCHEMA)
    summary = ImportSummary(kind="tate", path=str(path))
    totals = [count_lines(f) for f in files]
    offset, grand = 0, sum(totals)
    for file, total in zip(files, totals, strict=True):
        if file.name.startswith("artists"):
            source, build = ARTISTS_SOURCE, build_artist
        else:
            artists = external_keys(archive, ARTISTS_SOURCE)
            source, build = ARTWORKS_SOURCE, functools.partial(build_artwork, artists=artists)
        import_file(
            archive, summary, file, source, build, progress=progress, offset=offset, total=grand
        )
        offset += total
    return summary


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = [path / ARTISTS_FILE, path / ARTWORKS_FILE]
        for file in files:
            if not file.exists():
                raise missing(
                    file,
                    Phrase.of(
                        "{artists} and {artworks}", artists=ARTISTS_FILE, artworks=ARTWORKS_FILE
                    ),
                )
        return files
    file = dataset_file(path, ARTISTS_FILE)
    if not file.name.startswith(("artists", "artworks")):
        raise ImportFailed(
            "import.unreadable",
            Phrase.of("Cannot tell whether {name} holds Tate artists or artworks.", name=file.name),
            hint="Name the file artists*.jsonl.gz or artworks*.jsonl.gz, or give the tate folder.",
            details={"path": str(file)},
        )
    return [file]


def build_artist(row: JsonObject) -> Built:
    """One artist row as a record."""
    artist_id = require_id(row)
    values: Values = {}
    name = opt_str(row, "name") or opt_str(row, "sort_name")
    if name is None:
        raise BadRow.said("missing required key '{key}'", key="name")
    put(values, "tate2", name)
    put(values, "tate3", opt_str(row, "sort_name"))
    put(values, "tate4", opt_str(row, "gender"), "lg-eng")
    put(values, "tate5", opt_str(row, "dates"))
    put(values, "tate6", opt_int(row, "birth_year"))
    put(values, "tate7", opt_int(row, "death_year"))
    put(values, "tate8", opt_str(row, "birth_place"), "lg-eng")
    put(values, "tate9", opt_str(row, "death_place"), "lg-eng")
    put(values, "tate10", opt_str(row, "url"))
    return Built(NewRecord(ARTISTS, values, external_id=artist_id))


def build_artwork(row: JsonObject, artists: dict[str, RecordKey]) -> Built:
    """One artwork row as a record, linked to its contributors."""
    artwork_id = require_id(row)
    title = opt_str(row, "title")
    if title is None:
        raise BadRow.said("missing required key '{key}'", key="title")
    values: Values = {}
    put(values, "tate21", title, "lg-eng")
    put(values, "tate22", opt_str(row, "acno"))
    put(values, "tate23", opt_str(row, "date_text"))
    put(values, "tate24", opt_int(row, "year"))
    put(values, "tate25", opt_str(row, "medium"), "lg-eng")
    put(values, "tate26", opt_str(row, "dimensions"))
    put(values, "tate27", opt_str(row, "credit_line"), "lg-eng")
    put(values, "tate28", opt_int(row, "acquisition_year"))
    links, unresolved = _contributors(values, opt_list(row, "contributors"), artists)
    subjects = str_list(row, "subjects")
    put_many(values, "tate31", subjects, "lg-eng")
    put_many(values, "tate32", dict.fromkeys(_places(subjects)), "lg-eng")
    put(values, "tate33", opt_str(row, "foreign_title"))
    put(values, "tate34", opt_str(row, "inscription"), "lg-eng")
    record = NewRecord(ARTWORKS, values, external_id=artwork_id)
    return Built(record, links, unresolved)


def _contributors(
    values: Values, contributors: JsonList, artists: dict[str, RecordKey]
) -> tuple[int, tuple[str, ...]]:
    linked: set[RecordKey] = set()
    unresolved: list[str] = []
    for item in contributors:
        if not isinstance(item, dict):
            raise BadRow.said("each of 'contributors' must be an object")
        artist_id = require_id(item, "artist_id")
        role = opt_str(item, "role") or "artist"
        key = artists.get(artist_id)
        if key is None:
            unresolved.append(f"artist {artist_id}")
            put(values, "tate30", f"artist {artist_id} ({role})")
        else:
            put(values, "tate29", {**key.to_locator(), "role": role})
            linked.add(key)
    return len(linked), tuple(unresolved)


def _places(subjects: list[str]) -> list[str]:
    """The last term of each ``places > ...`` subject path."""
    return [
        leaf
        for path in subjects
        if path.startswith("places >") and (leaf := path.rsplit(">", 1)[-1].strip())
    ]
