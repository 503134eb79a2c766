"""Guessing the language of imported text (the query detector's tests are with the index's)."""

from __future__ import annotations

import pytest

from app.core.archive.language import guess_import_lang


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Copie de 157 lettres de Ludovic Vitet à sa mère et à ses amis", "lg-fra"),
        ("The papers of Carlos Bulosan and his family", "lg-eng"),
        ("Entrevista amb la mestra del poble sobre la presa", "lg-cat"),
        ("Cartas de los vecinos sobre el pantano y la expropiación", "lg-spa"),
    ],
)
def test_imported_text_is_guessed_among_the_four_source_languages(text: str, lang: str) -> None:
    assert guess_import_lang(text) == lang


@pytest.mark.parametrize("text", ["Minutes. 1887, août", "572AP/1-572AP/122", ""])
def test_thin_evidence_gives_no_guess(text: str) -> None:
    assert guess_import_lang(text) is None


def test_only_the_four_import_languages_are_guessed() -> None:
    assert guess_import_lang("der Brief und die Akten des Vaters sind nicht im Archiv") is None
