"""Stored values in words, the same in the record view and in ``arxiu records show``.

A value is stored as its source gave it (a level ``fonds``, a language code ``lg-fra``, a point
``{"lat": …, "lon": …}``); a person reads it as a term in their language (``fons``), a
language's name (``francès``), ``41.966° N, 2.415° E``. The language of a value is shown as a
short tag (``FR``) where the field holds one value per language, and not at all where the value
is language-neutral (``lg-nolan``: a date, a code, a number).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from app.core.archive.model import NEUTRAL_LANG
from app.core.archive.vocabulary import Terms, is_term, said

LANGUAGE_NAMES = {
    "lg-cat": "Catalan",
    "lg-spa": "Spanish",
    "lg-eng": "English",
    "lg-fra": "French",
    "lg-deu": "German",
    "lg-ita": "Italian",
    "lg-por": "Portuguese",
    "lg-oci": "Occitan",
    "lg-eus": "Basque",
    "lg-glg": "Galician",
    "lg-lat": "Latin",
}
"""The archive languages named by their English names (the translation tables' keys)."""

LANG_TAGS = {"lg-cat": "CA", "lg-spa": "ES", "lg-eng": "EN", "lg-fra": "FR", "lg-deu": "DE"}
LANG_ORDER = ("lg-cat", "lg-spa", "lg-eng")
"""The languages a field's values are listed in first (the rest after, as stored)."""
LANG_CODE = re.compile(r"lg-[a-z]{3}")
"""An archive language code stored as a value (the demo's interview language)."""

NameOf = Callable[[str], str]
"""A language code's name in the reader's language (``lg-fra`` → ``francès``)."""


def language_tag(code: str) -> str:
    """The short tag of a language code: ``CA``, ``FR``; ``LAT`` for one with no tag."""
    return LANG_TAGS.get(code, code.removeprefix("lg-").upper())


Item = TypeVar("Item", bound=Mapping[str, object])


def by_language(items: Sequence[Item]) -> list[Item]:
    """A field's items, Catalan, Spanish and English first, the others in their stored order."""

    def rank(item: Item) -> int:
        code = str(item.get("lang"))
        return LANG_ORDER.index(code) if code in LANG_ORDER else len(LANG_ORDER)

    return sorted(items, key=rank)


def shows_language(multilingual: bool, code: str, value: object, terms: Terms | None) -> bool:
    """Whether a value is shown with its language's tag: in a field that holds one value per
    language, a value in a language (not ``lg-nolan``), unless it is a code of ``terms`` (a
    level ``Series`` from a Catalan row is read as the reader's ``serie``: a ``CA`` beside it
    would call the reader's own word Catalan)."""
    if not multilingual or code == NEUTRAL_LANG:
        return False
    return not (terms is not None and isinstance(value, str) and is_term(value, terms))


def shown_value(kind: str, value: object, terms: Terms | None, lang: str, name_of: NameOf) -> str:
    """A stored value of a field of ``kind`` in words: a code of ``terms`` (a level of
    description, an entity type) as its term in ``lang``, a point as ``41.966° N, 2.415° E``,
    an archive language code (``lg-cat``) as ``name_of`` names it, anything else as its text."""
    if terms is not None and isinstance(value, str):
        return said(value, terms, lang)
    if kind == "geo" and isinstance(value, dict):
        shown = point(value.get("lat"), value.get("lon"))
        if shown is not None:
            return shown
    if isinstance(value, str) and LANG_CODE.fullmatch(value):
        return name_of(value)
    return str(value)


def point(lat: object, lon: object) -> str | None:
    """``41.966° N, 2.415° E``; None unless both are numbers."""
    if not isinstance(lat, int | float) or not isinstance(lon, int | float):
        return None
    north, east = ("N" if lat >= 0 else "S"), ("E" if lon >= 0 else "W")
    return f"{abs(lat):g}° {north}, {abs(lon):g}° {east}"


def table_name_of(table: dict[str, str]) -> NameOf:
    """:data:`NameOf` from a translation table (``{english: translation}``, empty for English):
    a known language's name translated, any other code as it is."""

    def name_of(code: str) -> str:
        english = LANGUAGE_NAMES.get(code)
        return code if english is None else table.get(english) or english

    return name_of
