"""The language chosen outside the window: ``ARXIU_LANG``, the settings, the system, English."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.commands.cli_words import cli_language
from app.core.chosen_language import chosen_archive_language, chosen_language


def test_the_language_comes_from_arxiu_lang_then_the_settings_then_the_system(
    arxiu_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARXIU_LANG", raising=False)
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert chosen_language() == "es" and chosen_archive_language() == "lg-spa"
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert chosen_language() == "en" and chosen_archive_language() == "lg-eng"
    settings = arxiu_home / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"language": "ca"}), encoding="utf-8")
    assert chosen_language() == "ca" and chosen_archive_language() == "lg-cat"
    settings.write_text("{not json", encoding="utf-8")  # unreadable: the system's
    assert chosen_language() == "en"
    monkeypatch.setenv("ARXIU_LANG", "es")
    assert chosen_language() == cli_language() == "es"
    monkeypatch.setenv("ARXIU_LANG", "fr")  # not one Arxiu speaks: the next in line
    assert chosen_language() == "en"
