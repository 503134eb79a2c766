"""File → New archive… names a folder that does not exist yet and makes it; the new, empty
archive shows a hint and an Import… button in place of two blank panes, and its first import
brings the records table back (issue 21, item 9)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

from app.core.archive import Archive
from app.ui.archive_switch import ask_folder, open_chosen
from app.ui.import_dialog import ImportChoiceDialog
from tests.ui.conftest import run


@pytest.fixture
def ui_archive(tmp_path: Path) -> Iterator[Archive]:
    """A new, empty archive (overrides the small archive ``make_window`` opens)."""
    archive = open_chosen(tmp_path / "Fons nou", create=True)
    yield archive
    archive.close()


def _answer_file_dialog(path: Path, asked: list[QFileDialog.FileMode]) -> None:
    """Type ``path`` into the file dialog that opens next and accept it (``asked`` gets the
    dialog's mode)."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(50, answer)
            return
        asked.append(dialog.fileMode())
        dialog.setDirectory(str(path.parent))
        name = dialog.findChild(QLineEdit, "fileNameEdit")  # Qt's own dialog, as on Linux
        assert name is not None
        name.setText(path.name)
        dialog.accept()

    QTimer.singleShot(50, answer)


def test_new_archive_makes_the_folder_it_is_given(make_window: Any, tmp_path: Path) -> None:
    window = make_window()
    wanted = tmp_path / "Fons Casals"  # not there yet
    asked: list[QFileDialog.FileMode] = []
    _answer_file_dialog(wanted, asked)
    chosen = ask_folder(window, new=True, start=tmp_path)
    assert asked == [QFileDialog.FileMode.AnyFile]  # a name typed, not an existing folder
    assert chosen == wanted and not wanted.exists()
    archive = open_chosen(chosen, create=True)
    try:
        assert (wanted / "archive.db").is_file() and archive.meta("name") == "Fons Casals"
    finally:
        archive.close()


def test_an_empty_archive_offers_import_and_its_first_import_lists_it(
    make_window: Any, tmp_path: Path
) -> None:
    window = make_window()
    assert window.stack.currentWidget() is window.empty_hint
    assert window.empty_hint.isVisible() and "empty" in window.empty_hint.text.text()
    window.empty_hint.button.click()
    dialog = window.import_dialog
    assert isinstance(dialog, ImportChoiceDialog) and dialog.isVisible()
    table = tmp_path / "cartes.csv"
    table.write_text("Títol;Signatura\nCartes de la família;C-1\n", encoding="utf-8")
    dialog.select_kind("csv")
    dialog.path.setText(str(table))
    assert dialog.next_page()
    choice = dialog.choice()
    assert choice is not None
    dialog.reject()
    run(make_window.loop, window.import_choice(choice), 60)
    assert window.stack.currentWidget() is window.table
    archive = window.services.archive
    section = next(s for s in archive.sections() if s.tipo.startswith("csv"))
    window.sections.select_tipo(section.tipo)
    assert window.records_model.total() == archive.count_records(section.tipo) == 1
    assert window.import_report is not None
    window.import_report.close()
