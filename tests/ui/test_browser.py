"""The archive browser, indexing progress and the ``--screenshot`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QUrl
from PySide6.QtGui import QImage

from app.core.archive import Archive
from app.core.index.embedders import HashingEmbedder
from app.core.index.opening import open_index
from app.ui.browser import records_model
from app.ui.browser.records_model import RecordsTableModel
from app.ui.browser.sections_view import COUNT_ROLE, RESTRICTED_ROLE
from tests.ui.conftest import build_archive, emitted, key

REPO = Path(__file__).resolve().parents[2]


def test_records_are_read_page_by_page(ui_archive: Archive, monkeypatch: Any, qapp: Any) -> None:
    monkeypatch.setattr(records_model, "PAGE_SIZE", 2)
    model = RecordsTableModel(ui_archive)
    model.set_section("rsc197")
    assert model.total() == 3
    assert model.rowCount() == 2
    assert model.canFetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    assert model.rowCount() == 3
    assert not model.canFetchMore(QModelIndex())
    assert model.data(model.index(2, 1)) == "Rosa Puig"


def test_sections_show_counts_and_the_restricted_badge(make_window: Any) -> None:
    window = make_window()
    items = [window.sections.item(row) for row in range(window.sections.count())]
    assert [(i.text(), i.data(COUNT_ROLE), i.data(RESTRICTED_ROLE)) for i in items] == [
        ("Oral history", 3, True),
        ("People", 3, False),
    ]


def test_record_view_links_open_linked_records(make_window: Any) -> None:
    window = make_window()
    window.open_record(key("oh1", 2))
    html = window.record_view.browser.toHtml()
    assert "La riada" in html and "record:rsc197/2" in html and "00:01:10" in html
    window.record_view.browser.anchorClicked.emit(QUrl("record:rsc197/2"))
    assert window.record_view.key == key("rsc197", 2)
    assert "record:oh1/2" in window.record_view.browser.toHtml()  # "Linked from"
    assert window.table.currentIndex().row() == 1


def test_indexing_progress_reaches_the_status_bar(make_window: Any) -> None:
    window = make_window()
    index = open_index(make_window.archive, HashingEmbedder())
    window.services._index = index
    status = window.index_status
    with emitted(make_window.loop, status.state_shown, check=lambda state: state == "idle"):
        status.start()
    assert status.label.text() == "Index up to date"
    assert status.bar.maximum() >= 1
    assert index.stats().chunks > 0
    status.show_progress("running", 2, 6)
    assert status.bar.value() == 2 and not status.pause_button.isHidden()
    status.toggle_pause()
    assert index.indexer.paused
    status.toggle_pause()
    assert not index.indexer.paused


def test_screenshot_command_writes_a_png(tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "archive")
    archive.close()
    png = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ARXIU_HOME": str(tmp_path / "home")}
    code = (
        "import sys; from app.cli import main; "
        f"sys.exit(main(['--archive', {str(tmp_path / 'archive')!r}, '--screenshot', "
        f"{str(png)!r}, '--show', 'conversation']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, timeout=120, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shot = QImage(str(png))
    assert (shot.width(), shot.height()) == (1600, 940)
    colours = {shot.pixel(x, y) for x in range(0, 1600, 16) for y in range(0, 940, 16)}
    assert len(colours) > 20, "the screenshot is blank"  # a window with text, not one colour


def test_catalan_and_spanish_tables_translate_the_panel(qapp: Any) -> None:
    from app.ui import i18n
    from app.ui.assistant.composer import ComposerWidget

    for lang, send in (("ca", "Envia"), ("es", "Enviar")):
        translator = i18n.install_translator(qapp, lang)
        assert translator is not None
        try:
            assert ComposerWidget().send_button.text() == send
        finally:
            qapp.removeTranslator(translator)
    assert ComposerWidget().send_button.text() == "Send"
