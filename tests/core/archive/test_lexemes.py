"""The lexemes both engines search: folded, cut, stemmed in the chunk's language, stop words
kept as a place that matches nothing."""

from __future__ import annotations

import pytest

from app.core.archive import lexemes
from app.core.archive.lexemes import (
    GATHERED,
    STOP_MARK,
    chunk_lexemes,
    query_lexemes,
    query_terms,
    stop_words,
    words,
)


def test_a_catalan_chunk_is_folded_and_stemmed_in_catalan() -> None:
    assert chunk_lexemes("Famílies desallotjades pel pantà", "lg-cat") == (
        "famil desallotj pel pant"
    )


def test_english_stop_words_keep_their_place_and_match_nothing() -> None:
    assert chunk_lexemes("The history of the town", "lg-eng") == (
        f"{STOP_MARK} histori {STOP_MARK} {STOP_MARK} town"
    )
    assert "the" in stop_words("english") and not stop_words("catalan")


def test_words_with_digits_separators_and_other_languages_are_kept_as_they_are() -> None:
    assert chunk_lexemes("Caixa 572AP/14, nomisma.org/id/barcino", "lg-cat") == (
        "caix 572ap 14 nomism org id barcin"
    )
    assert chunk_lexemes("Les Misérables, tome 2", "lg-fra") == "les miserables tome 2"
    assert chunk_lexemes("", "lg-eng") == "" and chunk_lexemes(None, None) == ""


def test_ascii_and_other_text_are_cut_the_same() -> None:
    text = "Ràdio-taxi: l'aigua (1936) — «Vila-real» O'Brien_x"
    assert words(text) == ["radio", "taxi", "l", "aigua", "1936", "vila", "real", "o", "brien", "x"]
    assert words("Radio-taxi: l'aigua (1936) -- Vila-real O'Brien_x") == words(text)  # ASCII
    assert words("col·lecció «Sant Martí» 12€") == ["col", "leccio", "sant", "marti", "12"]


def test_a_query_word_asks_for_its_stem_in_every_language_and_itself() -> None:
    assert query_lexemes("families") == ["famil", "famili", "families"]  # language unknown
    assert query_lexemes("families", "lg-eng") == ["famili", "families"]
    assert query_lexemes("the") == ["the"]  # an English and Spanish stop word: only itself
    assert list(query_terms(["families", "family"])) == ["famil", "famili", "families", "family"]


def test_a_metadata_chunk_is_cut_at_its_separator_like_any_text() -> None:
    gathered = f"Turner, J.M.W. {GATHERED} Oil paint on canvas {GATHERED} 1840"
    assert words(gathered) == ["turner", "j", "m", "w", "oil", "paint", "on", "canvas", "1840"]
    assert words(f"Miró {GATHERED} Barcelona") == ["miro", "barcelona"]
    assert chunk_lexemes(gathered, "lg-eng") == f"turner j m w oil paint {STOP_MARK} canva 1840"


def test_past_the_words_remembered_a_word_is_made_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lexemes, "_KEEP_UP_TO", 0)
    monkeypatch.setattr(lexemes, "_FOLDED", lexemes._Folder())
    lexemes._lexer.cache_clear()
    try:
        assert chunk_lexemes("Famílies desallotjades", "lg-cat") == "famil desallotj"
        assert chunk_lexemes("Famílies", "lg-cat") == "famil"
        assert len(lexemes._lexer("catalan")) == 0 and len(lexemes._FOLDED) == 0
    finally:
        lexemes._lexer.cache_clear()


@pytest.mark.parametrize("lang", ["lg-cat", "lg-spa", "lg-eng", "lg-fra", None])
def test_lexemes_are_made_the_same_way_every_time(lang: str | None) -> None:
    text = "Quan l'aigua va cobrir el poble, les famílies van marxar"
    assert chunk_lexemes(text, lang) == chunk_lexemes(text, lang)
    assert len(chunk_lexemes(text, lang).split()) == len(words(text))
