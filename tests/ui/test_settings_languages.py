"""Settings → Models: the languages the selected model writes, shown and set in models.json."""

from __future__ import annotations

from typing import Any

from app.core.models.catalog import BUILTIN_ID, load_catalog
from app.ui.settings_dialog import MODEL_ROLE, SettingsDialog


def test_the_bundled_models_languages_are_shown_and_set(make_window: Any) -> None:
    window = make_window()
    window.open_settings()
    dialog = window.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    rows = {
        dialog.models_list.item(n).data(MODEL_ROLE): n for n in range(dialog.models_list.count())
    }
    dialog.models_list.setCurrentRow(rows[BUILTIN_ID])
    assert dialog.languages.text() == "en"
    dialog.languages.setText("en, CA")
    dialog.set_languages()
    bundled = load_catalog().get(BUILTIN_ID)
    assert bundled.languages == ("en", "ca") and bundled.bundled and bundled.default
    assert dialog.languages.text() == "ca, en"
    dialog.languages.setText("")
    dialog.set_languages()  # no codes: its family's again (SmolLM2: English)
    assert load_catalog().get(BUILTIN_ID).languages == () and dialog.languages.text() == "en"
    dialog.reject()
