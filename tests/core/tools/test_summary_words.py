"""The tool lines a person reads are in the UI language, with the same slots as in English."""

from __future__ import annotations

import re

import pytest

from app.core.tools.registry import ToolRegistry
from app.core.tools.summary_words import SUMMARY_WORDS

SLOT = re.compile(r"\{(\w+)\}")


@pytest.mark.parametrize("lang", sorted(SUMMARY_WORDS))
def test_every_translated_template_keeps_the_english_slots(lang: str) -> None:
    for english, translated in SUMMARY_WORDS[lang].items():
        assert sorted(SLOT.findall(translated)) == sorted(SLOT.findall(english)), english


@pytest.mark.parametrize(
    ("lang", "search", "filtered"),
    [
        ("lg-eng", "Search by meaning: “reservoir”", "Search records in oh1 with 2 filters"),
        ("lg-cat", "Cerca pel significat: «reservoir»", "Cerca registres a oh1 amb 2 filtres"),
        ("lg-spa", "Búsqueda por significado: «reservoir»", "Busca registros en oh1 con 2 filtros"),
    ],
)
def test_the_registry_summarises_in_the_language_asked(
    registry: ToolRegistry, lang: str, search: str, filtered: str
) -> None:
    assert registry.summary("dedalo_semantic_search", {"query": "reservoir"}, lang) == search
    filters = {"section_tipo": "oh1", "filters": [{"a": 1}, {"b": 2}]}
    assert registry.summary("dedalo_search_records", filters, lang) == filtered


def test_every_tool_s_template_has_a_catalan_and_a_spanish_form(registry: ToolRegistry) -> None:
    """A new tool whose English summary is missing from the table shows up here."""
    english = {name: registry.summary(name, {}, "lg-eng") for name in registry.names()}
    alike = {("lg-spa", "dedalo_describe_node")}  # "Describe {tipo}" is Spanish too
    for lang in ("lg-cat", "lg-spa"):
        same = [
            n
            for n in english
            if registry.summary(n, {}, lang) == english[n] and (lang, n) not in alike
        ]
        assert same == [], f"{lang}: untranslated summaries of {same}"


@pytest.mark.parametrize(
    ("lang", "one", "two"),
    [
        ("lg-eng", "Search by meaning in 1 section: “x”", "Search by meaning in 2 sections: “x”"),
        (
            "lg-cat",
            "Cerca pel significat en 1 secció: «x»",
            "Cerca pel significat en 2 seccions: «x»",
        ),
        (
            "lg-spa",
            "Búsqueda por significado en 1 sección: «x»",
            "Búsqueda por significado en 2 secciones: «x»",
        ),
    ],
)
def test_a_search_kept_to_sections_says_so(
    registry: ToolRegistry, lang: str, one: str, two: str
) -> None:
    """A composed answer's list search (kept to the sections the first search found) does not
    read as the first search again."""
    search = "dedalo_semantic_search"
    assert registry.summary(search, {"query": "x", "sections": ["oh1"]}, lang) == one
    assert registry.summary(search, {"query": "x", "sections": ["oh1", "rsc197"]}, lang) == two
    unkept = registry.summary(search, {"query": "x", "sections": []}, lang)
    assert unkept == registry.summary(search, {"query": "x"}, lang)


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("lg-eng", "Search by meaning within ead1/12: “x”"),
        ("lg-cat", "Cerca pel significat dins de ead1/12: «x»"),
        ("lg-spa", "Búsqueda por significado dentro de ead1/12: «x»"),
    ],
)
def test_a_search_within_a_record_names_it(registry: ToolRegistry, lang: str, said: str) -> None:
    search = "dedalo_semantic_search"
    assert registry.summary(search, {"query": "x", "within": "ead1/12"}, lang) == said
