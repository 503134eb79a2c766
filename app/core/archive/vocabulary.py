"""Controlled terms an archive stores as codes, said in the reader's language.

EAD's ``@level`` (``fonds``, ``series``, ``file``, ``item``…, as AtoM and ArchivesSpace export
it), EAC-CPF's ``entityType`` (``person``, ``family``, ``corporateBody``) and the kind of a
subject access point (EAD's ``subject``, ``genreform``, ``function``, ``occupation``) are kept
as written,
so that an export writes them back unchanged; a view shows them as the terms archivists use in
Catalan (NODAC), Spanish (NEDA) and English (ISAD(G), ISAAR(CPF)). A value that is not one of
the codes (a level a table import wrote in a person's own words, ``sèrie``) is shown as written.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.archive.hierarchy_shape import Hierarchy
from app.core.archive.importers.authorities import AGENTS, ENTITY_TYPE, SUBJECT_KIND, SUBJECTS

Terms = Mapping[str, tuple[str, str, str]]
"""A code (folded: lower case, no spaces) → its term in English, Catalan and Spanish."""

LANGS = ("lg-eng", "lg-cat", "lg-spa")
"""The languages of a term's three forms."""

LEVELS: Terms = {
    "fonds": ("fonds", "fons", "fondo"),
    "subfonds": ("subfonds", "subfons", "subfondo"),
    "collection": ("collection", "col·lecció", "colección"),
    "recordgrp": ("record group", "grup de fons", "grupo de fondos"),
    "subgrp": ("subgroup", "subgrup", "subgrupo"),
    "series": ("series", "sèrie", "serie"),
    "subseries": ("subseries", "subsèrie", "subserie"),
    "file": ("file", "expedient", "expediente"),
    "item": ("item", "unitat documental", "unidad documental"),
    "class": ("class", "classe", "clase"),
    "otherlevel": ("other level", "altre nivell", "otro nivel"),
    "unspecified": ("unspecified", "sense especificar", "sin especificar"),
}
"""EAD's levels of description (``@level``), and the importer's ``unspecified``."""

ENTITY_TYPES: Terms = {
    "person": ("person", "persona", "persona"),
    "family": ("family", "família", "familia"),
    "corporatebody": ("corporate body", "institució", "institución"),
}
"""EAC-CPF's entity types."""

SUBJECT_KINDS: Terms = {
    "subject": ("subject", "matèria", "materia"),
    "genreform": ("genre or form", "gènere o forma", "género o forma"),
    "function": ("function", "funció", "función"),
    "occupation": ("occupation", "ocupació", "ocupación"),
}
"""The kinds of subject access point (EAD's ``controlaccess`` elements; Dublin Core's and
OHMS's keywords are ``subject``)."""


def said(value: str, terms: Terms, lang: str) -> str:
    """``value`` in ``lang`` when it is one of ``terms``' codes (English for a language with no
    form of its own), else as written."""
    forms = terms.get(_code(value))
    if forms is None:
        return value
    return forms[LANGS.index(lang)] if lang in LANGS else forms[0]


def is_term(value: str, terms: Terms) -> bool:
    """Whether ``value`` is one of ``terms``' codes (shown as its term in the reader's
    language by :func:`said`)."""
    return _code(value) in terms


def _code(value: str) -> str:
    """``value`` as codes are looked up: lower case, no spaces (``Sub Series`` → ``subseries``)."""
    return "".join(value.split()).casefold()


def level_code(value: str) -> str | None:
    """EAD's ``@level`` code of a level written as a code or as its term in English, Catalan or
    Spanish, in any case (``Fonds``, ``Sèrie``, ``Unitat documental``, ``Record group`` →
    ``fonds``, ``series``, ``item``, ``recordgrp``); ``None`` for any other text."""
    code = _code(value)
    if code in LEVELS:
        return code
    return _LEVEL_TERMS.get(" ".join(value.casefold().split()))


_LEVEL_TERMS = {form.casefold(): code for code, forms in LEVELS.items() for form in forms}


def field_terms(section_tipo: str, shape: Hierarchy | None) -> dict[str, Terms]:
    """``field tipo → terms`` for the fields of ``section_tipo`` that hold codes: the level of
    an archival hierarchy (EAD's, or a table's ``level`` column; ``shape`` is the section's
    :func:`~app.core.archive.hierarchy.hierarchy_of`), the authorities' entity type, a
    subject's kind."""
    found: dict[str, Terms] = {}
    if shape is not None and shape.level_field:
        found[shape.level_field] = LEVELS
    if section_tipo == AGENTS:
        found[ENTITY_TYPE] = ENTITY_TYPES
    if section_tipo == SUBJECTS:
        found[SUBJECT_KIND] = SUBJECT_KINDS
    return found
