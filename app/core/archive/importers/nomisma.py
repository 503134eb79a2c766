"""Importer of nomisma.org concepts (``nomisma/concepts.jsonl.gz``) into section ``nomisma1``.

Every concept (person, mint, region, denomination, dynasty, ...) becomes one record of the open,
read-only section ``nomisma1`` "Nomisma concepts"; its ``type`` says which kind it is. Source
``nomisma``, external id = the nomisma slug (``augustus``), so :func:`concept_key` finds a
concept by slug and other importers (IGCH) link to it.

Fields (all languages are kept: ``en`` → ``lg-eng``, ``ca`` → ``lg-cat``, ...):

============  ==================  ========  ===================================================
tipo          label               kind      value
============  ==================  ========  ===================================================
nomisma2      label               text      ``skos:prefLabel``, one item per language
nomisma3      alternative labels  text      ``skos:altLabel``, items per language
nomisma4      definition          text      ``skos:definition``, one item per language
nomisma5      type                text      ``mint``, ``person``, ``region``, ...
nomisma6      class               text      the RDF class (``nmo:Mint``)
nomisma7      URI                 iri       ``http://nomisma.org/id/<slug>``
nomisma8      location            geo       ``{"lat", "lon"}``
nomisma9/10   start / end year    number    negative = BC
nomisma11/12  birth / death       date      as given (``-0063-09-23``)
nomisma13     part of             relation  ``dcterms:isPartOf`` (field of numismatics)
nomisma14     broader             relation  ``skos:broader`` (mint → region, ...)
nomisma15     member of           relation  memberships' organizations
nomisma16     role                relation  memberships' roles
nomisma17     memberships         text      each membership as text (role, organization, years)
nomisma18/19  exact / close match iri       matches outside nomisma (Wikidata, Pleiades, ...)
nomisma20     matching concepts   relation  exact/close matches to other nomisma concepts
============  ==================  ========  ===================================================

Relations are resolved inside the file in one pass: the records' keys are reserved first. A link
to a slug that is not in the file (16 in the 2026 snapshot) is counted as unresolved.
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
    geo,
    import_file,
    put,
    put_many,
    reserve_keys,
    schema_field,
    section_schema,
)
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.reading import (
    BadRow,
    JsonlReader,
    dataset_file,
    opt_dict,
    opt_int,
    opt_list,
    opt_num,
    opt_str,
    require_id,
)
from app.core.archive.model import RecordKey
from app.core.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SOURCE = "nomisma"
SECTION = "nomisma1"
FILE_NAME = "concepts.jsonl.gz"
URI_PREFIX = "http://nomisma.org/id/"
RELATION_FIELDS = {"part_of": "nomisma13", "broader": "nomisma14"}
MATCH_FIELDS = {"exact_match": "nomisma18", "close_match": "nomisma19"}


_f = functools.partial(schema_field, SECTION)


SCHEMA = section_schema(
    SECTION,
    ("Nomisma concepts", "Conceptes de Nomisma", "Conceptos de Nomisma"),
    "Numismatic concepts from nomisma.org (people, mints, regions, denominations, ...). "
    "Contains data from nomisma.org, CC BY.",
    label_field="nomisma2",
    fields=(
        _f("nomisma2", ("Label", "Etiqueta", "Etiqueta"), multilingual=True),
        _f("nomisma3", ("Alternative labels", "Altres noms", "Otros nombres"), multilingual=True),
        _f("nomisma4", ("Definition", "Definició", "Definición"), multilingual=True),
        _f("nomisma5", ("Type", "Tipus", "Tipo")),
        _f("nomisma6", ("RDF class", "Classe RDF", "Clase RDF")),
        _f("nomisma7", ("URI", "URI", "URI"), "iri"),
        _f("nomisma8", ("Location", "Localització", "Localización"), "geo"),
        _f("nomisma9", ("Start year", "Any d'inici", "Año de inicio"), "number"),
        _f("nomisma10", ("End year", "Any de fi", "Año de fin"), "number"),
        _f("nomisma11", ("Birth", "Naixement", "Nacimiento"), "date"),
        _f("nomisma12", ("Death", "Mort", "Muerte"), "date"),
        _f("nomisma13", ("Part of", "Part de", "Parte de"), "relation", target_section=SECTION),
        _f(
            "nomisma14",
            ("Broader", "Més general", "Más general"),
            "relation",
            target_section=SECTION,
        ),
        _f(
            "nomisma15",
            ("Member of", "Membre de", "Miembro de"),
            "relation",
            target_section=SECTION,
        ),
        _f("nomisma16", ("Role", "Rol", "Rol"), "relation", target_section=SECTION),
        _f("nomisma17", ("Memberships", "Pertinences", "Pertenencias")),
        _f("nomisma18", ("Exact match", "Equivalent exacte", "Equivalente exacto"), "iri"),
        _f("nomisma19", ("Close match", "Equivalent proper", "Equivalente cercano"), "iri"),
        _f(
            "nomisma20",
            ("Matching concepts", "Conceptes equivalents", "Conceptos equivalentes"),
            "relation",
            target_section=SECTION,
        ),
    ),
)


def import_nomisma(
    archive: Archive, path: Path, progress: ProgressFn | None = None
) -> ImportSummary:
    """Import nomisma concepts from ``path`` (the file or the ``nomisma`` folder)."""
    path = dataset_file(path, FILE_NAME)
    ensure_schema(archive, SCHEMA)
    keys = reserve_keys(archive, SOURCE, SECTION, _scan_ids(path))
    summary = ImportSummary(kind="nomisma", path=str(path))
    build = functools.partial(build_concept, keys=keys)
    return import_file(archive, summary, path, SOURCE, build, progress=progress)


def concept_key(archive: Archive, slug: str) -> RecordKey | None:
    """The record of the nomisma concept ``slug`` (``athens``), if it was imported."""
    return archive.external_key(SOURCE, slug)


def _scan_ids(path: Path) -> list[str]:
    """The slugs of the usable rows, in file order (a first, light pass)."""
    ids: list[str] = []
    reader = JsonlReader(path)
    for _, row in reader:
        slug = row.get("id") if isinstance(row, dict) else None
        if isinstance(slug, str) and slug.strip():
            ids.append(slug.strip())
    return ids


def build_concept(row: JsonObject, keys: dict[str, RecordKey]) -> Built:
    """One concept row as a record (raises :class:`BadRow` on a malformed row)."""
    slug = require_id(row)
    values: Values = {}
    _put_languages(values, "nomisma2", opt_dict(row, "labels"))
    _put_languages(values, "nomisma4", opt_dict(row, "definitions"))
    for code, names in opt_dict(row, "alt_labels").items():
        if not isinstance(names, list):
            raise BadRow.said("'alt_labels' must map languages to lists of strings")
        put_many(
            values, "nomisma3", [n for n in names if isinstance(n, str) and n], archive_lang(code)
        )
    if "nomisma2" not in values:
        raise BadRow.said("no label in any language")
    put(values, "nomisma5", opt_str(row, "type"))
    put(values, "nomisma6", opt_str(row, "class"))
    put(values, "nomisma7", opt_str(row, "uri") or URI_PREFIX + slug)
    put(values, "nomisma8", geo(opt_num(row, "lat"), opt_num(row, "long")))
    put(values, "nomisma9", opt_int(row, "start"))
    put(values, "nomisma10", opt_int(row, "end"))
    put(values, "nomisma11", opt_str(row, "birth"))
    put(values, "nomisma12", opt_str(row, "death"))
    links = _Links(keys)
    for link in opt_list(row, "links"):
        links.add(values, link)
    record = NewRecord(SECTION, values, external_id=slug, section_id=keys[slug].section_id)
    return Built(record, links.resolved, tuple(links.unresolved))


def _put_languages(values: Values, field_tipo: str, texts: JsonObject) -> None:
    for code, text in texts.items():
        if not isinstance(text, str):
            reason = "language '{code}' of field {field} must be a string"
            raise BadRow.said(reason, code=str(code), field=field_tipo)
        if text.strip():
            put(values, field_tipo, text, archive_lang(code))


class _Links:
    """Turns a concept's ``links`` into relation and IRI values, counting what resolved."""

    def __init__(self, keys: dict[str, RecordKey]) -> None:
        self.keys = keys
        self.resolved = 0
        self.unresolved: list[str] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, values: Values, link: JsonValue) -> None:
        rel = link.get("rel") if isinstance(link, dict) else None
        if not isinstance(link, dict) or not isinstance(rel, str):
            raise BadRow.said("each of 'links' must be an object with a 'rel'")
        if rel == "membership":
            self._membership(values, link)
            return
        target = link.get("target")
        if not isinstance(target, str) or not target:
            raise BadRow.said("link '{rel}' has no target", rel=rel)
        if rel in RELATION_FIELDS:
            self.relate(values, RELATION_FIELDS[rel], target)
        elif rel in MATCH_FIELDS:
            if is_slug(target):
                self.relate(values, "nomisma20", target)
            else:
                put(values, MATCH_FIELDS[rel], target)

    def relate(self, values: Values, field_tipo: str, slug: str) -> None:
        """Add a relation to concept ``slug`` (once per field), or count it unresolved."""
        if (field_tipo, slug) in self._seen:
            return
        self._seen.add((field_tipo, slug))
        key = self.keys.get(slug)
        if key is None:
            self.unresolved.append(slug)
        else:
            put(values, field_tipo, key.to_locator())
            self.resolved += 1

    def _membership(self, values: Values, link: JsonObject) -> None:
        role, organization = opt_str(link, "role"), opt_str(link, "organization")
        start, end = opt_int(link, "start"), opt_int(link, "end")
        if organization and is_slug(organization):  # a few organizations are plain URLs
            self.relate(values, "nomisma15", organization)
        if role:
            self.relate(values, "nomisma16", role)
        parts = [p for p in (role, organization) if p]
        if start is not None or end is not None:
            parts.append(f"{_year(start)} to {_year(end)}")
        if parts:
            put(values, "nomisma17", ", ".join(parts), "lg-eng")


def is_slug(target: str) -> bool:
    """Whether a link target names a nomisma concept (``athens``) rather than a URI."""
    return "/" not in target and ":" not in target


def _year(year: int | None) -> str:
    if year is None:
        return "?"
    return f"{-year} BC" if year < 0 else f"AD {year}"
