"""Importer of BEIR-style corpora (``corpus.jsonl[.gz]`` rows ``{_id, title, text}``).

PATH is the corpus file or its folder (``corpus.jsonl.gz``, else ``corpus.jsonl``). Each
document becomes a record of the open section ``beir1`` "Retrieval benchmark documents".
The corpus is named after the folder that holds the file (``beir-dbpedia-5k``); the source
is ``beir:<corpus>`` and the external id is the BEIR ``_id``, so documents of different corpora
never collide and the retrieval evaluator maps hits back with :func:`beir_ids` (or one key with
:func:`beir_key`).

Fields: ``beir2`` title, ``beir3`` text (both ``lg-eng`` unless another language is given),
``beir4`` document id (the BEIR ``_id``), ``beir5`` corpus name.
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
    Values,
    ensure_schema,
    external_keys,
    import_file,
    put,
    schema_field,
    section_schema,
)
from app.core.archive.importers.reading import BadRow, dataset_file, opt_str, require_id
from app.core.archive.model import RecordKey
from app.core.json_types import JsonObject

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SECTION = "beir1"
SOURCE_PREFIX = "beir:"
FILE_NAMES = ("corpus.jsonl.gz", "corpus.jsonl")
TEXT_FIELDS = ("beir2", "beir3")


_f = functools.partial(schema_field, SECTION)


SCHEMA = section_schema(
    SECTION,
    (
        "Retrieval benchmark documents",
        "Documents de proves de cerca",
        "Documentos de pruebas de búsqueda",
    ),
    "Documents of BEIR-format retrieval corpora, for evaluating search (not content).",
    label_field="beir2",
    fields=(
        _f("beir2", ("Title", "Títol", "Título"), multilingual=True),
        _f("beir3", ("Text", "Text", "Texto"), multilingual=True),
        _f("beir4", ("Document id", "Identificador", "Identificador")),
        _f("beir5", ("Corpus", "Corpus", "Corpus")),
    ),
)


def corpus_file(path: Path) -> Path:
    """The corpus file named by ``path`` (a file, or a folder holding ``corpus.jsonl[.gz]``)."""
    path = Path(path).expanduser()
    if path.is_dir() and not (path / FILE_NAMES[0]).exists() and (path / FILE_NAMES[1]).exists():
        return path / FILE_NAMES[1]
    return dataset_file(path, FILE_NAMES[0])


def corpus_name(path: Path) -> str:
    """The corpus's name: its folder's name for ``corpus.jsonl[.gz]``, else the file's stem."""
    file = corpus_file(path)
    if file.name in FILE_NAMES:
        return file.resolve().parent.name
    return file.name.split(".")[0]


def source_of(corpus: str) -> str:
    """The import source under which ``corpus``'s documents are recorded."""
    return SOURCE_PREFIX + corpus


def import_beir(
    archive: Archive, path: Path, progress: ProgressFn | None = None, *, lang: str = "lg-eng"
) -> ImportSummary:
    """Import a BEIR corpus from ``path``; texts are recorded in ``lang``."""
    file = corpus_file(path)
    corpus = corpus_name(file)
    ensure_schema(archive, SCHEMA)
    summary = ImportSummary(kind="beir", path=str(file))
    build = functools.partial(build_document, corpus=corpus, lang=lang)
    return import_file(archive, summary, file, source_of(corpus), build, progress=progress)


def build_document(row: JsonObject, corpus: str, lang: str = "lg-eng") -> Built:
    """One BEIR document as a record."""
    doc_id = require_id(row, "_id")
    title, text = opt_str(row, "title"), opt_str(row, "text")
    if title is None and text is None:
        raise BadRow.said("document has neither 'title' nor 'text'")
    values: Values = {}
    put(values, "beir2", title or doc_id, lang)
    put(values, "beir3", text, lang)
    put(values, "beir4", doc_id)
    put(values, "beir5", corpus)
    return Built(NewRecord(SECTION, values, external_id=doc_id))


def beir_key(archive: Archive, corpus: str, doc_id: str) -> RecordKey | None:
    """The record of BEIR document ``doc_id`` of ``corpus``, if it was imported."""
    return archive.external_key(source_of(corpus), doc_id)


def beir_ids(archive: Archive, corpus: str) -> dict[RecordKey, str]:
    """Every imported document of ``corpus``: record key → BEIR ``_id`` (reverse lookup)."""
    return {key: doc_id for doc_id, key in external_keys(archive, source_of(corpus)).items()}
