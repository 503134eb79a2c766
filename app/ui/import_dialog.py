"""File → Import…: choose a format and its source, check a table's mapping, import with progress.

The formats come from :mod:`app.ui.importing.formats` (the archival standards first, the
public test datasets last). A spreadsheet goes through a mapping page
(:class:`~app.ui.importing.mapping_page.MappingPage`) whose edits are what is imported; an
OAI-PMH repository asks for a URL, an optional set and a from date instead of a path.

The import runs on the services' worker thread through
:func:`~app.core.importing.import_dataset` (records, then the lexical index, so the new records
are searchable at once; vectors follow in the background). Its ``progress(done, total)``
callback posts to the GUI thread, where a :class:`QProgressDialog` shows it with the file's
name. Cancel is honoured at the importer's next progress report: the callback raises
:class:`ImportCancelled`, the batch in flight is still committed, and what was written stays
(imports are idempotent, so importing the same file again completes it).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressDialog,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.archive import Archive
from app.core.archive.importers import ImportSummary
from app.core.archive.importers.base import ImportOptions
from app.core.errors import ArxiuError
from app.core.importing import import_dataset
from app.ui.i18n import error_text
from app.ui.importing import formats
from app.ui.importing.formats import ImportFormat
from app.ui.importing.mapping_page import MappingPage
from app.ui.importing.summary import summary_text
from app.ui.services import Services

FORMAT_ROLE = int(Qt.ItemDataRole.UserRole) + 1


class ImportCancelled(Exception):
    """Raised from the progress callback to stop an import the person cancelled."""


@dataclass(frozen=True)
class ImportChoice:
    """What to import: the KIND, its path or URL, and the options (a set, a mapping file)."""

    kind: str
    target: str
    options: ImportOptions | None = None
    mapping_file: Path | None = None
    """The edited CSV mapping, a temporary file removed after the import."""

    @property
    def name(self) -> str:
        """What the progress dialog names: the file's name, else the URL."""
        return self.target if self.kind == "oai" else Path(self.target).name or self.target


class ImportChoiceDialog(QDialog):
    """Asks for the format and its source; for a table, shows the mapping to check."""

    def __init__(self, parent: QWidget | None = None, archive: Archive | None = None) -> None:
        super().__init__(parent)
        self.archive = archive
        self.chosen: ImportChoice | None = None
        """What Import was pressed for (read it after ``accepted``)."""
        self.setWindowTitle(self.tr("Import"))
        self.formats = formats.import_formats()
        self.list = self._format_list()
        self.describe = QLabel(self)
        self.describe.setWordWrap(True)
        self.describe.setObjectName("formatDescription")
        self.path = QLineEdit(self)
        self.url = QLineEdit(self)
        self.set_spec = QLineEdit(self)
        self.from_date = QLineEdit(self)
        self.metadata = QComboBox(self)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.mapping = MappingPage(self)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._choice_page())
        self.pages.addWidget(self.mapping)
        self.buttons = self._buttons()
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.list.currentItemChanged.connect(lambda *_: self._format_changed())
        self._select_first()
        self.resize(760, 600)

    # -- construction ----------------------------------------------------------------------------
    def _format_list(self) -> QListWidget:
        widget = QListWidget(self)
        widget.setObjectName("importFormats")
        widget.setWordWrap(True)
        group = ""
        for entry in self.formats:
            if entry.group != group:
                group = entry.group
                heading = QListWidgetItem(formats.group_title(group), widget)
                heading.setFlags(Qt.ItemFlag.NoItemFlags)
                font = QFont(heading.font())
                font.setBold(True)
                heading.setFont(font)
            item = QListWidgetItem("    " + entry.name, widget)
            item.setData(FORMAT_ROLE, entry.kind)
            item.setToolTip(entry.description)
        return widget

    def _choice_page(self) -> QWidget:
        page = QWidget(self)
        self.path.setPlaceholderText(self.tr("A file or a folder"))
        self.file_button = QPushButton(self.tr("File…"), page)
        self.file_button.clicked.connect(self._pick_file)
        self.folder_button = QPushButton(self.tr("Folder…"), page)
        self.folder_button.clicked.connect(self._pick_folder)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.file_button)
        row.addWidget(self.folder_button)
        self.path_row = row
        self.url.setPlaceholderText("https://example.org/oai")
        self.set_spec.setPlaceholderText(self.tr("optional"))
        for label, prefix in (
            (self.tr("Dublin Core (oai_dc)"), "oai_dc"),
            (self.tr("EAD finding aids (oai_ead)"), "oai_ead"),
            (self.tr("EAD finding aids (ead)"), "ead"),
        ):
            self.metadata.addItem(label, prefix)
        self.from_date.setPlaceholderText(self.tr("YYYY-MM-DD (default: since the last harvest)"))
        self.form = QFormLayout()
        self.form.addRow(self.tr("From:"), row)
        self.form.addRow(self.tr("Repository URL:"), self.url)
        self.form.addRow(self.tr("Metadata format:"), self.metadata)
        self.form.addRow(self.tr("Set:"), self.set_spec)
        self.form.addRow(self.tr("Changed since:"), self.from_date)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(self.tr("What do you want to import?"), page))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.describe)
        layout.addLayout(self.form)
        return page

    def _buttons(self) -> QDialogButtonBox:
        box = QDialogButtonBox(self)
        self.back_button = box.addButton(self.tr("Back"), QDialogButtonBox.ButtonRole.ActionRole)
        self.next_button = box.addButton(self.tr("Next"), QDialogButtonBox.ButtonRole.ActionRole)
        self.import_button = box.addButton(
            self.tr("Start import"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        box.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.back_button.clicked.connect(lambda: self._show_page(0))
        self.next_button.clicked.connect(self.next_page)
        self.import_button.clicked.disconnect()
        self.import_button.clicked.connect(self._on_import)
        box.rejected.connect(self.reject)
        return box

    def _select_first(self) -> None:
        for row in range(self.list.count()):
            if self.list.item(row).data(FORMAT_ROLE):
                self.list.setCurrentRow(row)
                break
        self._show_page(0)

    # -- state -----------------------------------------------------------------------------------
    def kinds(self) -> list[str]:
        """The kinds offered, in the order shown."""
        return [
            str(self.list.item(row).data(FORMAT_ROLE))
            for row in range(self.list.count())
            if self.list.item(row).data(FORMAT_ROLE)
        ]

    def headings(self) -> list[str]:
        """The group headings, in the order shown."""
        return [
            self.list.item(row).text()
            for row in range(self.list.count())
            if not self.list.item(row).data(FORMAT_ROLE)
        ]

    def current(self) -> ImportFormat:
        """The format chosen."""
        item = self.list.currentItem()
        kind = item.data(FORMAT_ROLE) if item is not None else None
        return next((f for f in self.formats if f.kind == kind), self.formats[0])

    def select_kind(self, kind: str) -> None:
        """Choose ``kind`` in the list."""
        for row in range(self.list.count()):
            if self.list.item(row).data(FORMAT_ROLE) == kind:
                self.list.setCurrentRow(row)
                return
        raise KeyError(kind)

    def _format_changed(self) -> None:
        entry = self.current()
        self.describe.setText(entry.description)
        url = entry.source == formats.URL
        for widget in (self.url, self.metadata, self.set_spec, self.from_date):
            widget.setVisible(url)
            label = self.form.labelForField(widget)
            if label is not None:
                label.setVisible(url)
        self.path.setVisible(not url)
        path_label = self.form.labelForField(self.path_row)
        if path_label is not None:
            path_label.setVisible(not url)
        self.file_button.setVisible(
            not url and entry.source in (formats.FILE, formats.FILE_OR_FOLDER, formats.TABLE)
        )
        self.folder_button.setVisible(entry.source in (formats.FOLDER, formats.FILE_OR_FOLDER))
        self.error.clear()
        self._show_page(0)

    def _show_page(self, page: int) -> None:
        self.pages.setCurrentIndex(page)
        table = self.current().source == formats.TABLE
        self.back_button.setVisible(page == 1)
        self.next_button.setVisible(page == 0 and table)
        self.import_button.setVisible(page == 1 or not table)

    def next_page(self) -> bool:
        """From a table's path to its mapping page; whether the table could be read."""
        text = self.path.text().strip()
        if not text:
            self.error.setText(self.tr("Choose a file first."))
            return False
        try:
            self.mapping.load(self.archive, Path(text).expanduser())
        except ArxiuError as failure:
            self.error.setText(error_text(failure))
            return False
        self.error.clear()
        self._show_page(1)
        return True

    def _on_import(self) -> None:
        table = self.current().source == formats.TABLE
        if table and self.pages.currentIndex() == 0 and not self.next_page():
            return
        self.chosen = self.choice()
        if self.chosen is None:
            self.error.setText(self.tr("Say where to import from first."))
            return
        self.accept()

    def choice(self) -> ImportChoice | None:
        """What to import, or ``None`` when no path or URL was given (writes the edited
        mapping of a table to a temporary file)."""
        entry = self.current()
        if entry.source == formats.URL:
            url = self.url.text().strip()
            if not url:
                return None
            options = ImportOptions(
                set_spec=self.set_spec.text().strip() or None,
                from_date=self.from_date.text().strip() or None,
                metadata_prefix=str(self.metadata.currentData()),
            )
            return ImportChoice(entry.kind, url, options)
        text = self.path.text().strip()
        if not text:
            return None
        if entry.source == formats.TABLE and self.mapping.mapping is not None:
            mapping = self.mapping.write_mapping()
            return ImportChoice(entry.kind, text, ImportOptions(mapping_file=str(mapping)), mapping)
        return ImportChoice(entry.kind, text)

    def _pick_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, self.tr("File to import"))
        if name:
            self.path.setText(name)

    def _pick_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, self.tr("Folder to import"))
        if name:
            self.path.setText(name)


class ImportRunner:
    """Runs one import off the GUI thread and shows its progress in ``dialog``."""

    def __init__(self, services: Services, dialog: QProgressDialog) -> None:
        self.services = services
        self.dialog = dialog
        self._cancel = threading.Event()
        dialog.canceled.connect(self._cancel.set)

    async def run(
        self, kind: str, path: Path | str, options: ImportOptions | None = None
    ) -> ImportSummary | None:
        """Import; ``None`` when cancelled. Raises ArxiuError when the file cannot be imported."""
        progress = _Progress(self, asyncio.get_running_loop())
        archive = self.services.archive
        try:
            return await self.services.run_blocking(
                lambda: import_dataset(archive, kind, path, progress=progress, options=options)
            )
        except ImportCancelled:
            return None

    def _show(self, done: int, total: int) -> None:
        if not self._cancel.is_set():
            self.dialog.setMaximum(max(total, 1))
            self.dialog.setValue(min(done, max(total, 1)))

    def _show_file(self, name: str) -> None:
        if not self._cancel.is_set():
            self.dialog.setLabelText(self.dialog.tr("Reading {name}…").format(name=name))


class _Progress:
    """The importer's progress callback (a ``FileProgress``): posts each figure and file name
    to the GUI thread, and stops the import once the person cancelled."""

    def __init__(self, runner: ImportRunner, loop: asyncio.AbstractEventLoop) -> None:
        self.runner = runner
        self.loop = loop

    def __call__(self, done: int, total: int) -> None:
        if self.runner._cancel.is_set():
            raise ImportCancelled
        self.loop.call_soon_threadsafe(self.runner._show, done, total)

    def reading(self, name: str) -> None:
        """Show ``name`` as the file being read."""
        if self.runner._cancel.is_set():
            raise ImportCancelled
        self.loop.call_soon_threadsafe(self.runner._show_file, name)


def progress_dialog(parent: QWidget, kind: str, path: Path | str) -> QProgressDialog:
    """A window-modal progress dialog for importing ``path`` (a file, a folder or a URL)."""
    name = path if kind == "oai" else (Path(path).name or str(path))
    dialog = QProgressDialog(
        parent.tr("Importing {name}…").format(name=name), parent.tr("Cancel"), 0, 0, parent
    )
    dialog.setWindowTitle(parent.tr("Import: {format}").format(format=formats.format_name(kind)))
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    return dialog


async def import_with_progress(
    parent: QWidget, services: Services, choice: ImportChoice
) -> tuple[str, ImportSummary | None]:
    """Import with a progress dialog; returns the text to show and the summary."""
    dialog = progress_dialog(parent, choice.kind, choice.target)
    dialog.show()
    try:
        summary = await ImportRunner(services, dialog).run(
            choice.kind, choice.target, choice.options
        )
    except ArxiuError as error:
        return error_text(error), None
    finally:
        dialog.close()
        dialog.deleteLater()
        if choice.mapping_file is not None:
            with contextlib.suppress(OSError):
                choice.mapping_file.unlink()
    if summary is None:
        return parent.tr("Import cancelled; the records written so far are kept."), None
    names = {s.tipo: s.label(services.lang) for s in services.archive.sections()}
    return summary_text(summary, names), summary
