"""The record view's "Ask about this record" is shown whole at 800×600 in Catalan, Spanish and
English, beside a dock no wider than before (the window as ``arxiu --screenshot --show main``
renders it: sized before it is shown, the dock at its own width); its tooltip says what it
does in full."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from app.core.archive import open_archive
from app.ui import i18n
from app.ui.main_window import DOCK_WIDTH
from app.ui.screenshot import capture
from app.ui.style import apply_style
from tests.ui.conftest import WindowFactory, run

TOOLTIPS = {
    "en": "Ask the assistant about this record",
    "ca": "Pregunta a l'assistent sobre aquest registre",
    "es": "Pregunta al asistente sobre este registro",
}


@pytest.fixture
def ui_lang(qapp: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """The UI language of the test, its table installed and the app's style applied (Fusion,
    its font and style sheet) before the window is built; both undone after."""
    lang = str(request.param)
    style, font, sheet = qapp.style().name(), qapp.font(), qapp.styleSheet()
    apply_style(qapp)
    translator = i18n.install_translator(qapp, lang)
    yield lang
    if translator is not None:
        qapp.removeTranslator(translator)
    qapp.setStyleSheet(sheet)
    qapp.setFont(font)
    qapp.setStyle(style)


@pytest.fixture
def demo_window(
    qtbot: Any, qloop: Any, demo_archive_dir: Path, tmp_path: Path
) -> Iterator[WindowFactory]:
    """Windows over a copy of the demo archive (its wide interviews table, as the app opens)."""
    shutil.copytree(demo_archive_dir, tmp_path / "demo")
    archive = open_archive(tmp_path / "demo")
    factory = WindowFactory(qtbot, qloop, archive)
    yield factory
    factory.close_all()
    archive.close()


@pytest.mark.parametrize("ui_lang", ["ca", "es", "en"], indirect=True)
def test_the_ask_button_is_whole_at_800_by_600(
    demo_window: Any, ui_lang: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window as ``arxiu --screenshot --show main`` renders it at 800×600."""
    monkeypatch.setenv("ARXIU_SHOT_SIZE", "800x600")
    window = demo_window()
    window.services.lang = i18n.ARCHIVE_LANGS[ui_lang]
    window.hide()  # sized before it is shown, as the screenshot mode does
    run(demo_window.loop, capture(window, "main", tmp_path / "main.png"), timeout=60)
    for _ in range(3):
        QApplication.processEvents()
    assert window.assistant_dock.width() <= DOCK_WIDTH  # the dock no wider than it was

    button = window.record_view.ask_button
    needed = button.fontMetrics().horizontalAdvance(button.text())
    assert window.record_view.key is not None and button.isEnabled()
    assert button.width() >= button.sizeHint().width() > needed  # painted whole, no "…"
    assert button.toolTip() == TOOLTIPS[ui_lang]
