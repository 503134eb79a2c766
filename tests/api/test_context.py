"""The server's base settings: privacy from ``settings.json``, language as the CLI chooses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.api.context import base_settings


@pytest.mark.parametrize(("lang", "code"), [("ca", "lg-cat"), ("es", "lg-spa"), ("en", "lg-eng")])
def test_the_server_labels_its_tools_in_the_chosen_language(
    arxiu_home: Path, monkeypatch: pytest.MonkeyPatch, lang: str, code: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    assert base_settings().lang == code  # no settings file
    (arxiu_home / "settings.json").write_text(json.dumps({"external_content": True}), "utf-8")
    settings = base_settings()
    assert settings.lang == code and settings.external_content


def test_without_arxiu_lang_the_settings_language_is_the_servers(
    arxiu_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARXIU_LANG")
    (arxiu_home / "settings.json").write_text(json.dumps({"language": "es"}), "utf-8")
    settings = base_settings()
    assert settings.lang == "lg-spa" and not settings.external_content
