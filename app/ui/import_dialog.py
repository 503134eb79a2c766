"""File → Import…: choose a dataset kind and its file or folder, import it with a progress dialog.

The import runs on the services' worker thread; its ``progress(done, total)`` callback posts to
the GUI thread, where a :class:`QProgressDialog` shows it. Cancel is honoured at the importer's
next progress report (every 500 lines): the callback raises :class:`ImportCancelled`, the
batch in flight is still committed, and what was written stays (imports are idempotent, so
importing the same file again completes it).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QProgressDialog,
    QPushButton,
    QWidget,
)

from app.core.archive.importers import KINDS, ImportSummary
from app.core.errors import ArxiuError
from app.core.importing import import_dataset
from app.ui.services import Services


class ImportCancelled(Exception):
    """Raised from the progress callback to stop an import the person cancelled."""


class ImportChoiceDialog(QDialog):
    """Asks for the dataset kind and its file or folder."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Import a dataset"))
        self.kind = QComboBox(self)
        for kind in KINDS:
            self.kind.addItem(kind, kind)
        self.path = QLineEdit(self)
        self.path.setPlaceholderText(self.tr("A dataset file (.jsonl.gz) or its folder"))
        file_button = QPushButton(self.tr("File…"), self)
        file_button.clicked.connect(self._pick_file)
        folder_button = QPushButton(self.tr("Folder…"), self)
        folder_button.clicked.connect(self._pick_folder)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(file_button)
        row.addWidget(folder_button)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(self.tr("Kind:"), self.kind)
        form.addRow(self.tr("From:"), row)
        form.addRow(buttons)
        self.resize(560, 140)

    def choice(self) -> tuple[str, Path] | None:
        """The chosen kind and path, or ``None`` when no path was given."""
        text = self.path.text().strip()
        return (str(self.kind.currentData()), Path(text)) if text else None

    def _pick_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, self.tr("Dataset file"), "", self.tr("Datasets (*.jsonl *.jsonl.gz *.gz)")
        )
        if name:
            self.path.setText(name)

    def _pick_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, self.tr("Dataset folder"))
        if name:
            self.path.setText(name)


class ImportRunner:
    """Runs one import off the GUI thread and shows its progress in ``dialog``."""

    def __init__(self, services: Services, dialog: QProgressDialog) -> None:
        self.services = services
        self.dialog = dialog
        self._cancel = threading.Event()
        dialog.canceled.connect(self._cancel.set)

    async def run(self, kind: str, path: Path) -> ImportSummary | None:
        """Import; ``None`` when cancelled. Raises ArxiuError when the file cannot be imported."""
        loop = asyncio.get_running_loop()

        def progress(done: int, total: int) -> None:
            if self._cancel.is_set():
                raise ImportCancelled
            loop.call_soon_threadsafe(self._show, done, total)

        archive = self.services.archive
        try:
            return await self.services.run_blocking(
                lambda: import_dataset(archive, kind, path, progress=progress)
            )
        except ImportCancelled:
            return None

    def _show(self, done: int, total: int) -> None:
        if not self._cancel.is_set():
            self.dialog.setMaximum(max(total, 1))
            self.dialog.setValue(min(done, max(total, 1)))


def progress_dialog(parent: QWidget, kind: str, path: Path) -> QProgressDialog:
    """A window-modal progress dialog for importing ``path``."""
    dialog = QProgressDialog(
        parent.tr("Importing {name}…").format(name=path.name), parent.tr("Cancel"), 0, 0, parent
    )
    dialog.setWindowTitle(parent.tr("Import {kind}").format(kind=kind))
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    return dialog


def summary_text(parent: QWidget, summary: ImportSummary) -> str:
    """What the import did, in a sentence or two."""
    data: dict[str, Any] = summary.to_dict()
    text = parent.tr(
        "{records} records ({created} new, {updated} updated, {unchanged} unchanged), "
        "{links} links, {skipped} lines skipped, in {seconds} s."
    ).format(
        records=data["records"],
        created=data["created"],
        updated=data["updated"],
        unchanged=data["unchanged"],
        links=data["links"],
        skipped=len(data["skipped"]),
        seconds=data["seconds"],
    )
    if summary.error is not None:
        text += "\n" + f"{summary.error.message} {summary.error.hint or ''}".strip()
    return text


async def import_with_progress(
    parent: QWidget, services: Services, kind: str, path: Path
) -> tuple[str, ImportSummary | None]:
    """Import with a progress dialog; returns the sentence to show and the summary."""
    dialog = progress_dialog(parent, kind, path)
    dialog.show()
    try:
        summary = await ImportRunner(services, dialog).run(kind, path)
    except ArxiuError as error:
        return f"{error.message} {error.hint or ''}".strip(), None
    finally:
        dialog.close()
        dialog.deleteLater()
    if summary is None:
        return parent.tr("Import cancelled; the records written so far are kept."), None
    return summary_text(parent, summary), summary
