"""The window's loose ends (issue 21, item 9): the highlighted row follows the record shown,
Qt's own dialogs and the export speak the UI's language, a new archive's folder is made, an
empty archive offers Import, images open in the app, the model test says what it measured,
Write mode and the model stay as chosen, and no label is clipped in Catalan or Spanish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSize, QUrl
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QSplitter,
    QWidget,
)

from app.core.archive import RecordKey, open_archive
from app.core.models.base import Usage
from app.core.models.scripted import Turn
from app.ui import i18n
from app.ui.browser.elided import ElidedButton
from app.ui.browser.image_viewer import ImageViewer
from app.ui.browser.pane_widths import RECORD_FLOOR, RECORD_WIDTH, give_back, keep_record_width
from app.ui.browser.record_view import RecordView
from app.ui.main_window import DOCK_SHARE, MainWindow
from app.ui.model_check import check_model
from app.ui.settings_dialog import SettingsDialog
from app.ui.style import STYLESHEET
from tests.ui.conftest import emitted, key, run


def _row_painted_selected(window: MainWindow, row: int) -> bool:
    """Whether ``row`` of the records table is on screen in the highlight colour: what the
    window last painted (its backing store), not a fresh rendering of the table."""
    QApplication.processEvents()  # the paints the changes asked for
    table = window.table
    rect = table.visualRect(window.records_model.index(row, 0))
    spot = table.viewport().mapTo(window, rect.center())
    screen = window.screen()
    shot = screen.grabWindow(window.winId()).toImage()
    colour = QColor(shot.pixel(rect.left() + 2 + spot.x() - rect.center().x(), spot.y()))
    highlight = table.palette().color(QPalette.ColorRole.Highlight)
    return abs(colour.red() - highlight.red()) + abs(colour.blue() - highlight.blue()) < 30


def test_the_highlighted_row_follows_the_record_shown(make_window: Any) -> None:
    window = make_window()
    window.sections.select_tipo("oh1")
    window.table.selectRow(0)
    assert window.record_view.key == key("oh1", 1)
    assert _row_painted_selected(window, 0)
    window.open_record(key("oh1", 3))  # a citation's or a link's click
    assert window.record_view.key == key("oh1", 3)
    assert window.table.currentIndex().row() == 2
    assert _row_painted_selected(window, 2)
    assert not _row_painted_selected(window, 0)


def test_a_model_that_answers_nothing_fails_its_test_with_how_it_ended(make_window: Any) -> None:
    window = make_window([Turn(text="")])
    ok, text = run(make_window.loop, check_model(window.services, "local-test"))
    assert not ok
    assert text == "The model answered nothing (the stream ended: end_turn)."
    assert "0.0 tokens/s" not in text


def test_a_model_test_reports_the_tokens_it_timed(make_window: Any) -> None:
    reply = Turn(text="An archive keeps records for later.", usage=Usage(output_tokens=12))
    window = make_window([reply])
    ok, text = run(make_window.loop, check_model(window.services, "local-test"))
    assert ok and "'An archive keeps records for later.'" in text
    rate, rest = text.split(" tokens/s (", 1)
    assert float(rate) > 0
    assert rest.startswith("12 tokens; first after ")  # the count the model reported


def test_a_model_that_only_thinks_in_the_test_says_so(make_window: Any) -> None:
    window = make_window([Turn(text="", thinking="The user asks what an archive is")])
    ok, text = run(make_window.loop, check_model(window.services, "local-test"))
    assert ok and "only thinking so far: 'The user asks what an archive is'" in text


def _save_settings(make_window: Any, window: Any) -> None:
    window.open_settings()
    dialog = window.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    with emitted(make_window.loop, window.assistant.models_loaded):
        dialog.save()


def test_write_mode_and_the_model_stay_as_chosen_after_the_settings(make_window: Any) -> None:
    window = make_window(external=True)
    panel = window.assistant
    panel.mode.setCurrentIndex(panel.mode.findData("write"))
    assert panel.picker.current_id() == "cloud-test"  # chosen, never sent a question with
    _save_settings(make_window, window)
    assert panel.header.chosen_mode() == "write"
    assert panel.picker.current_id() == "cloud-test"


def _needed(widget: QWidget) -> tuple[str, int]:
    """A label's, button's or combo's text and the width it needs to show it whole."""
    metrics = widget.fontMetrics()
    if isinstance(widget, QComboBox):  # what a combo sized to this one item asks for
        probe = QComboBox()
        probe.setFont(widget.font())
        probe.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        probe.addItem(widget.itemIcon(widget.currentIndex()), widget.currentText())
        needed = probe.sizeHint().width()
        probe.deleteLater()
        return widget.currentText(), needed
    text = widget.text().replace("&", "") if isinstance(widget, QAbstractButton | QLabel) else ""
    if isinstance(widget, QLabel):
        margins = widget.width() - widget.contentsRect().width()
        return text, metrics.horizontalAdvance(text) + margins
    return text, widget.sizeHint().width()


def clipped(root: QWidget) -> list[str]:
    """The visible labels, buttons and combos under ``root`` narrower than their text needs
    (the elided ones, which draw "…" on purpose, wrapped labels and panes folded away left
    out)."""
    out = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root) or isinstance(widget, ElidedButton):
            continue
        if widget.visibleRegion().isEmpty():  # in a pane folded away to make room
            continue
        if isinstance(widget, QLabel) and (widget.wordWrap() or "<" in widget.text()):
            continue
        if isinstance(widget, QLabel | QAbstractButton | QComboBox):
            text, needed = _needed(widget)
            if text and widget.width() < needed:
                out.append(f"{type(widget).__name__} {text!r}: {widget.width()} < {needed}")
    return out


def _text_inset(label: QLabel) -> int:
    """How far the white text painted on a badge stays from the pill's nearer side (pixels;
    0 when it touches or runs past it)."""
    shot = label.grab().toImage()
    columns = [
        x
        for x in range(shot.width())
        if any(QColor(shot.pixel(x, y)).lightness() > 230 for y in range(shot.height()))
    ]
    return min(columns[0], shot.width() - 1 - columns[-1]) if columns else 0


@pytest.mark.parametrize("lang", ["ca", "es"])
@pytest.mark.parametrize("size", [(1500, 900), (800, 600)])
def test_no_label_is_clipped_in_catalan_or_spanish(
    make_window: Any, qapp: Any, lang: str, size: tuple[int, int]
) -> None:
    translator = i18n.install_translator(qapp, lang)
    qapp.setStyleSheet(STYLESHEET)  # the app's look: the badges' padding, the bold titles
    try:
        window = make_window()
        window.resize(*size)
        QApplication.processEvents()
        assert clipped(window) == []
        badge = window.assistant.picker.badge
        assert _text_inset(badge) >= 4  # "local / privat" inside its pill, not cut at its edge
        panel = window.assistant
        panel.mode.setCurrentIndex(panel.mode.findData("write"))
        QApplication.processEvents()
        assert clipped(window.assistant) == []
    finally:
        qapp.setStyleSheet("")
        if translator is not None:
            qapp.removeTranslator(translator)


class _Pane(QWidget):
    """A pane with a fixed smallest width (the window's panes take theirs from their
    contents)."""

    def __init__(self, minimum: int, parent: QWidget) -> None:
        super().__init__(parent)
        self.minimum = minimum
        self.setMinimumWidth(minimum)

    def minimumSizeHint(self) -> QSize:
        return QSize(self.minimum, 10)


def _settle(splitter: QSplitter, width: int) -> list[int]:
    splitter.resize(width, 300)
    QApplication.processEvents()  # the resize, then the keeper's deferred rebalance
    QApplication.processEvents()
    return splitter.sizes()


def test_the_sections_folded_for_a_small_window_come_back_when_it_grows(qapp: Any) -> None:
    splitter = QSplitter()
    for minimum in (92, 160, 96):
        splitter.addWidget(_Pane(minimum, splitter))
    splitter.setSizes([220, 560, 460])
    keeper = keep_record_width(splitter, 220)
    splitter.show()
    before = _settle(splitter, 1240)[0]
    assert before >= 219  # as laid out (a pixel may go to the handles)
    small = _settle(splitter, 420)
    assert small[0] == 0 and small[2] >= RECORD_FLOOR  # folded to give the record view room
    sections, _middle, record = _settle(splitter, 1240)
    assert sections == 220 and record >= RECORD_WIDTH  # back as it was laid out
    assert _settle(splitter, 700)[0] < before  # taken from again
    splitter.setSizes([0, 300, 400])
    splitter.splitterMoved.emit(0, 1)  # the person drags the sections shut
    assert _settle(splitter, 1400)[0] == 0  # theirs to open again
    splitter.removeEventFilter(keeper)  # gone before its splitter, as in a closed window
    splitter.close()
    splitter.deleteLater()
    QApplication.processEvents()


def test_giving_back_takes_from_the_middle_then_the_record_view() -> None:
    assert give_back([0, 600, 500], [92, 160, 96], 220) == [220, 380, 500]
    assert give_back([0, 200, 600], [92, 160, 96], 220) == [220, 160, 420]
    assert give_back([100, 200, 400], [92, 160, 96], 220) == [180, 160, 360]  # what it can
    assert give_back([0, 170, 370], [92, 160, 96], 220) is None  # no room for the pane yet
    assert give_back([220, 600, 500], [92, 160, 96], 220) is None  # nothing owed


def test_an_image_opens_in_the_app_s_own_viewer(qapp: Any, demo_archive_dir: Path) -> None:
    archive = open_archive(demo_archive_dir, read_only=True)
    view = RecordView(archive)
    try:
        view.resize(700, 900)
        view.show_record(RecordKey("rsc170", 1))
        html = view.browser.toHtml()
        link = html[html.index("media:") : html.index('"', html.index("media:"))]
        view.browser.anchorClicked.emit(QUrl(link))  # a click on the thumbnail
        viewer = view.image_viewer
        assert isinstance(viewer, ImageViewer) and viewer.isVisible()
        assert not viewer.pixmap.isNull() and viewer.pixmap.width() > 140
        assert viewer.windowTitle() == archive.record_label(RecordKey("rsc170", 1), "lg-eng")
        shown = viewer.image.pixmap()
        assert not shown.isNull()
        assert shown.width() <= viewer.image.width() and shown.height() <= viewer.image.height()
        viewer.close()
        QApplication.processEvents()
    finally:
        view.close()
        view.deleteLater()
        archive.close()


@pytest.mark.parametrize(
    ("lang", "labels", "cancel"),
    [
        ("ca", ("&Cerca a:", "&Nom de fitxer:", "Fitxers de &tipus:"), "Cancel·la"),
        # qtbase_es.qm lacks Qt 6's "&Look in:" and "Files of &type:": the app's table has them
        ("es", ("&Buscar en:", "&Nombre de fichero:", "Ficheros de &tipo:"), "Cancelar"),
    ],
)
def test_qt_s_own_dialogs_speak_the_ui_language(
    qapp: Any, lang: str, labels: tuple[str, str, str], cancel: str
) -> None:
    translator = i18n.install_qt_translator(qapp, lang)
    assert translator is not None, f"no qtbase_{lang}.qm in {i18n.qt_translation_dirs()}"
    table = i18n.install_translator(qapp, lang)  # asked first, as at start-up
    try:
        dialog = QFileDialog(None, "", "", "")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # Qt's own, as on Linux
        found = [
            dialog.findChild(QLabel, n) for n in ("lookInLabel", "fileNameLabel", "fileTypeLabel")
        ]
        assert tuple(label.text() if label else None for label in found) == labels
        buttons = dialog.findChild(QDialogButtonBox)
        assert buttons is not None
        button = buttons.button(QDialogButtonBox.StandardButton.Cancel)
        assert button is not None and button.text() == cancel
        dialog.deleteLater()
    finally:
        qapp.removeTranslator(translator)
        if table is not None:
            qapp.removeTranslator(table)
    assert i18n.install_qt_translator(qapp, "en") is None  # Qt's own English


@pytest.mark.parametrize(
    ("lang", "you", "assistant", "note"),
    [
        ("lg-cat", "## Tu", "## Assistent", "*⚠ 1 de 1 cites sense verificar"),
        ("lg-spa", "## Tú", "## Asistente", "*⚠ 1 de 1 citas sin verificar"),
        ("lg-eng", "## You", "## Assistant", "*⚠ 1 of 1 citations unverified"),
    ],
)
def test_the_markdown_export_speaks_the_ui_language(
    make_window: Any, tmp_path: Path, lang: str, you: str, assistant: str, note: str
) -> None:
    window = make_window([Turn(text="La riada ho explica (oh1/2).")])
    window.services.lang = lang
    with emitted(make_window.loop, window.assistant.turn_finished):
        window.assistant.send("Qui va marxar?")
    view = window.assistant.conversations
    run(make_window.loop, view.export(window.assistant.conversation_id, tmp_path / "c.md"))
    text = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert f"{you}\n\nQui va marxar?" in text
    assert f"{assistant}\n\nLa riada ho explica (⚠ oh1/2)." in text
    assert note in text and "oh1/2" in text.split(note)[1]


def test_a_small_window_narrows_the_dock_for_the_record_view(make_window: Any) -> None:
    window = make_window()
    window.sections.select_tipo("oh1")
    window.table.selectRow(0)
    window.resize(1500, 900)
    QApplication.processEvents()
    wide = window.assistant_dock.width()
    window.resize(800, 600)
    for _ in range(3):
        QApplication.processEvents()
    dock = window.assistant_dock
    assert dock.width() <= max(int(800 * DOCK_SHARE), dock.minimumSizeHint().width())
    button = window.record_view.ask_button
    assert button.width() >= button.sizeHint().width()  # "Ask about this record", whole
    window.resize(1500, 900)
    for _ in range(3):
        QApplication.processEvents()
    assert window.assistant_dock.width() == wide  # its width back
