"""File → Export…: a section (or one record and what is under it) out as an archival standard.

The formats are :data:`~app.core.archive.exporters.FORMATS` (a format registered there shows
up here); the export runs on the services' worker thread through
:func:`~app.core.archive.exporters.run_export`, and the person sees the real
:class:`~app.core.archive.exporters.ExportSummary`: records written, restricted ones left out.
Restricted records stay out unless "Include restricted records" is checked; then the dialog
says that the export will say so at its top.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from app.core.archive import Archive, RecordKey
from app.core.archive.exporters import (
    FORMATS,
    RESTRICTED_NOTICE,
    ExportRequest,
    ExportSummary,
    run_export,
)
from app.core.counted import Counted
from app.ui.i18n import InstalledTranslations
from app.ui.services import Services

CONTEXT = "ExportFormats"
FORMAT_NAMES = {
    "ead3": "EAD3 finding aid (a fonds with its hierarchy)",
    "eac-cpf": "EAC-CPF authority records",
    "dc": "Dublin Core (oai_dc)",
    "csv": "Spreadsheet (CSV)",
    "json": "Arxiu JSON",
}
SUFFIXES = {"ead3": ".xml", "eac-cpf": ".xml", "dc": ".xml", "csv": ".csv", "json": ".json"}
WRITTEN = Counted("1 record written to {path}.", "{n} records written to {path}.")
LEFT_OUT = Counted("1 restricted record left out.", "{n} restricted records left out.")
INCLUDED = Counted(
    "1 restricted record included; the export says so at its top.",
    "{n} restricted records included; the export says so at its top.",
)
"""The counts of :func:`export_text`, each with its form for one (the tables hold both)."""


def format_name(fmt: str) -> str:
    """A format's translated name (its code for one this table does not know)."""
    name = FORMAT_NAMES.get(fmt)
    return QCoreApplication.translate(CONTEXT, name) if name else fmt


@dataclass(frozen=True)
class ExportChoice:
    """What to export, as which format."""

    format: str
    request: ExportRequest


class ExportDialog(QDialog):
    """Asks for the section (or the selected record's subtree), the format and the file."""

    def __init__(
        self,
        archive: Archive,
        lang: str = "lg-eng",
        selected: RecordKey | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.archive = archive
        self.lang = lang
        self.selected = selected
        self.setWindowTitle(self.tr("Export"))
        self.section = QComboBox(self)
        for section in archive.sections():
            count = archive.count_records(section.tipo)
            self.section.addItem(f"{section.label(lang)} ({count})", section.tipo)
        self.subtree = QCheckBox(self.tr("Only the selected record and what is under it"), self)
        self.format = QComboBox(self)
        for fmt in FORMATS:
            self.format.addItem(format_name(fmt), fmt)
        self.restricted = QCheckBox(self.tr("Include restricted records"), self)
        self.warning = QLabel(
            self.tr(
                "The export will include restricted records and will say so at its top. "
                "Do not let it leave the institution without permission."
            ),
            self,
        )
        self.warning.setWordWrap(True)
        self.warning.setObjectName("restrictedWarning")
        self.out = QLineEdit(self)
        self._build()
        if selected is not None and archive.has_section(selected.section_tipo):
            self.section.setCurrentIndex(self.section.findData(selected.section_tipo))
        self._update()

    def _build(self) -> None:
        browse = QPushButton(self.tr("Save as…"), self)
        browse.clicked.connect(self._pick)
        row = QHBoxLayout()
        row.addWidget(self.out, 1)
        row.addWidget(browse)
        self.buttons = QDialogButtonBox(self)
        self.export_button = self.buttons.addButton(
            self.tr("Start export"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._on_export)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(self.tr("Section:"), self.section)
        form.addRow("", self.subtree)
        form.addRow(self.tr("Format:"), self.format)
        form.addRow("", self.restricted)
        form.addRow("", self.warning)
        form.addRow(self.tr("Save to:"), row)
        form.addRow(self.buttons)
        self.section.currentIndexChanged.connect(lambda _i: self._update())
        self.restricted.toggled.connect(lambda _on: self._update())
        self.format.currentIndexChanged.connect(lambda _i: self._suffix())
        self.resize(620, 260)

    def _update(self) -> None:
        here = self.selected is not None and self.selected.section_tipo == self.section_tipo()
        self.subtree.setEnabled(here)
        if not here:
            self.subtree.setChecked(False)
        if here and self.selected is not None:
            self.subtree.setToolTip(self.archive.record_label(self.selected, self.lang))
        self.warning.setVisible(self.restricted.isChecked())

    def _suffix(self) -> None:
        text = self.out.text().strip()
        if text:
            self.out.setText(str(Path(text).with_suffix(SUFFIXES.get(self.fmt(), ".txt"))))

    def section_tipo(self) -> str:
        """The section chosen."""
        return str(self.section.currentData() or "")

    def fmt(self) -> str:
        """The format chosen."""
        return str(self.format.currentData())

    def choice(self) -> ExportChoice | None:
        """The export asked for, or ``None`` when no file was given."""
        text = self.out.text().strip()
        if not text or not self.section_tipo():
            return None
        record = self.selected if self.subtree.isChecked() else None
        request = ExportRequest(
            section=self.section_tipo(),
            out=Path(text).expanduser(),
            record=record,
            include_restricted=self.restricted.isChecked(),
            lang=self.lang,
        )
        return ExportChoice(self.fmt(), request)

    def _on_export(self) -> None:
        if self.choice() is not None:
            self.accept()

    def _pick(self) -> None:
        suffix = SUFFIXES.get(self.fmt(), "")
        start = str(Path.home() / f"{self.section_tipo()}{suffix}")
        name, _ = QFileDialog.getSaveFileName(self, self.tr("Export to"), start)
        if name:
            self.out.setText(name)


async def export_records(services: Services, choice: ExportChoice) -> ExportSummary:
    """Run the export on the worker thread.

    Raises:
        ArxiuError: an unknown format, section or record, or an unwritable file.
    """
    archive = services.archive
    return await services.run_blocking(lambda: run_export(archive, choice.format, choice.request))


def export_text(summary: ExportSummary) -> str:
    """What the export wrote, in a sentence or two; then the exporter's notes (where several
    finding aids went, the fields a format has no place for), a line each, in the UI's
    language, as the CLI says them (the notice of restricted records is the sentence above)."""
    text = _count(WRITTEN, summary.records, path=str(summary.path))
    if summary.restricted_left_out:
        text += " " + _count(LEFT_OUT, summary.restricted_left_out)
    if summary.restricted_included:
        text += " " + _count(INCLUDED, summary.restricted_included)
    table = InstalledTranslations()
    notes = [n.said_in(table) for n in summary.notes if n.template != RESTRICTED_NOTICE]
    return "\n".join([text, *notes])


def _count(words: Counted, count: int, **params: str) -> str:
    """``count`` in ``words`` (the form that agrees with it) with ``params``, in the UI's
    language."""
    return QCoreApplication.translate(CONTEXT, words.template(count)).format(n=count, **params)
