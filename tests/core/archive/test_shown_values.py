"""Stored values in words: the record view's and ``arxiu records show``'s."""

from __future__ import annotations

from app.core.archive.shown_values import (
    by_language,
    language_tag,
    shown_value,
    shows_language,
    table_name_of,
)
from app.core.archive.vocabulary import ENTITY_TYPES, LEVELS
from app.core.i18n_tables import load_table


def test_a_language_code_is_named_in_the_readers_language() -> None:
    catalan, spanish, english = (table_name_of(load_table(lang)) for lang in ("ca", "es", "en"))
    assert (catalan("lg-fra"), spanish("lg-fra"), english("lg-fra")) == (
        "Francès",
        "Francés",
        "French",
    )
    assert catalan("lg-xyz") == "lg-xyz"  # a code no table names stays as it is
    assert shown_value("text", "lg-lat", None, "lg-spa", spanish) == "Latín"
    assert shown_value("text", "lg-latin", None, "lg-spa", spanish) == "lg-latin"


def test_codes_of_a_vocabulary_are_said_as_terms() -> None:
    name_of = table_name_of({})
    assert shown_value("text", "Fonds", LEVELS, "lg-cat", name_of) == "fons"
    assert shown_value("text", "file", LEVELS, "lg-spa", name_of) == "expediente"
    assert shown_value("text", "corporateBody", ENTITY_TYPES, "lg-cat", name_of) == "institució"
    assert shown_value("text", "sèrie", LEVELS, "lg-eng", name_of) == "sèrie"  # not a code


def test_points_tags_and_order() -> None:
    name_of = table_name_of({})
    point = {"lat": 41.966, "lon": -2.415}
    assert shown_value("geo", point, None, "lg-eng", name_of) == "41.966° N, 2.415° W"
    assert shown_value("geo", {"lat": "x"}, None, "lg-eng", name_of) == "{'lat': 'x'}"
    assert [language_tag(c) for c in ("lg-cat", "lg-fra", "lg-lat")] == ["CA", "FR", "LAT"]
    items = [{"lang": code, "value": code} for code in ("lg-fra", "lg-eng", "lg-cat", "lg-deu")]
    assert [i["lang"] for i in by_language(items)] == ["lg-cat", "lg-eng", "lg-fra", "lg-deu"]


def test_a_term_said_in_the_readers_language_has_no_language_tag() -> None:
    """A table's level ``Series`` from a Catalan row is shown as the reader's term (``serie``):
    no ``CA`` beside it. A title in Catalan keeps its tag; a neutral value or a field of one
    value has none."""
    assert not shows_language(True, "lg-cat", "Series", LEVELS)
    assert not shows_language(True, "lg-cat", " SubSeries ", LEVELS)
    assert shows_language(True, "lg-cat", "Record group", LEVELS)  # a term, not a code: as written
    assert shows_language(True, "lg-cat", "Sèrie de cartes", LEVELS)  # not a code: as written
    assert shows_language(True, "lg-cat", "Correspondència", None)
    assert not shows_language(True, "lg-nolan", "1936", None)
    assert not shows_language(False, "lg-cat", "ES-AMV-1", None)
