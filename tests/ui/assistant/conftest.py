"""Fixtures of the confirm-card tests: a writable copy of the demo archive, and a UI language
installed for one test."""

from __future__ import annotations

import gc
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent

from app.core.archive import Archive, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.ui import i18n
from app.ui.assistant.confirm_card import ConfirmCardWidget


@pytest.fixture
def demo(demo_archive_dir: Path, tmp_path: Path) -> Iterator[Archive]:
    folder = tmp_path / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    set_writes_allowed(archive, True)
    yield archive
    archive.close()


@pytest.fixture
def translated(qapp: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """The UI language of the test (its table installed for the test's duration)."""
    lang = str(request.param)
    translator = i18n.install_translator(qapp, lang)
    yield lang
    if translator is not None:
        qapp.removeTranslator(translator)
    for widget in qapp.topLevelWidgets():
        if isinstance(widget, ConfirmCardWidget):
            widget.close()
            widget.deleteLater()
    qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
