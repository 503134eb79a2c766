"""The CSV/XLSX mapping page: each column's header, its role (a combo) and its first values.

The mapping shown is the one the import would use (saved for this layout in the archive,
else guessed from the header, :func:`~app.core.archive.importers.tabular.mapping_for`); what
the person changes is written as a ``--mapping`` JSON file (:mod:`.csv_mapping`'s form) that
the import applies, so the edited mapping is the one imported.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QComboBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.archive import Archive
from app.core.archive.importers.base import ImportOptions
from app.core.archive.importers.csv_mapping import ROLES, SINGLE, ColumnMapping
from app.core.archive.importers.tabular import mapping_for, read_table
from app.core.counted import Counted

PREVIEW_ROWS = 3
ROWS = Counted("1 row", "{n} rows")
COLUMNS = Counted("1 column", "{n} columns")
"""The table's size above the mapping, each count in the form that agrees with it."""
CONTEXT = "ImportMapping"
ROLE_NAMES = {
    "title": "Title",
    "identifier": "Reference code / identifier",
    "external_id": "Record key (matches re-imports)",
    "date": "Date (as written)",
    "date_from": "Date from",
    "date_to": "Date to",
    "description": "Description",
    "creator": "Creator (linked name)",
    "subject": "Subject (linked)",
    "place": "Place (linked)",
    "parent": "Part of (parent's key or identifier)",
    "link": "Link to a record",
    "origin": "Original record number",
    "level": "Level of description",
    "language": "Language",
    "culture": "Language of the row",
    "access": "Conditions of access",
    "restricted": "Restricted (true/false)",
    "media": "Media file or URL",
    "extent": "Extent",
    "text": "Text",
    "continue": "Continues the previous column",
    "ignore": "Do not import",
}
"""Each role's name in the combo (English source text, translated)."""


def role_name(role: str) -> str:
    """The translated name of a column role."""
    return QCoreApplication.translate(CONTEXT, ROLE_NAMES.get(role, role))


class MappingPage(QWidget):
    """Shows a table's guessed mapping and lets the person change each column's role."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mapping: ColumnMapping | None = None
        self.about = QLabel(self)
        self.about.setWordWrap(True)
        self.table = QTableWidget(0, 3, self)
        self.table.setObjectName("mappingTable")
        self.table.setHorizontalHeaderLabels(
            [self.tr("Column"), self.tr("Imported as"), self.tr("First rows")]
        )
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.about)
        layout.addWidget(self.table, 1)

    def load(self, archive: Archive | None, path: Path) -> None:
        """Read ``path``'s header and first rows and show the mapping the import would use.

        Raises:
            ImportFailed: a file that cannot be read as a table.
        """
        table = read_table(path)
        self.mapping = mapping_for(archive, table.header, ImportOptions())
        rows, columns = len(table.rows), len(table.header)
        self.about.setText(
            self.tr(
                "{file}: {rows}, {columns}. Check what each column becomes; "
                "the mapping is kept for the next file with the same columns."
            ).format(
                file=path.name,
                rows=self.tr(ROWS.template(rows)).format(n=rows),
                columns=self.tr(COLUMNS.template(columns)).format(n=columns),
            )
        )
        self.table.setRowCount(len(self.mapping.columns))
        for row, rule in enumerate(self.mapping.columns):
            self.table.setItem(row, 0, QTableWidgetItem(rule.column))
            combo = QComboBox(self.table)
            for role in ROLES:
                combo.addItem(role_name(role), role)
            combo.setCurrentIndex(max(combo.findData(rule.role), 0))
            self.table.setCellWidget(row, 1, combo)
            values = [r.cells[row] for r in table.rows[:PREVIEW_ROWS] if row < len(r.cells)]
            shown = " · ".join(v.strip()[:40] for v in values if v.strip())
            self.table.setItem(row, 2, QTableWidgetItem(shown))

    def combo(self, row: int) -> QComboBox:
        """The role combo of the ``row``-th column."""
        widget = self.table.cellWidget(row, 1)
        assert isinstance(widget, QComboBox)
        return widget

    def set_role(self, column: str, role: str) -> None:
        """Choose ``role`` for the column headed ``column`` (as a person would)."""
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.text() == column:
                self.combo(row).setCurrentIndex(self.combo(row).findData(role))
                return
        raise KeyError(column)

    def edited(self) -> dict[str, object]:
        """The mapping as shown, in the ``--mapping`` file's form."""
        assert self.mapping is not None
        columns = []
        for row, rule in enumerate(self.mapping.columns):
            role = str(self.combo(row).currentData())
            entry: dict[str, object] = {"column": rule.column, "role": role}
            entry["multi"] = rule.multi if role == rule.role else role not in SINGLE
            if rule.lang:
                entry["lang"] = rule.lang
            columns.append(entry)
        return {"columns": columns}

    def write_mapping(self) -> Path:
        """The edited mapping in a temporary JSON file (the caller removes it)."""
        with tempfile.NamedTemporaryFile(
            "w", suffix=".json", prefix="arxiu-mapping-", delete=False, encoding="utf-8"
        ) as handle:
            json.dump(self.edited(), handle, ensure_ascii=False)
        return Path(handle.name)
