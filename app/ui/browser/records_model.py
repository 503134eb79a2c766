"""A lazy table model over one section's records: pages are read as the view scrolls.

The rows read so far are read again on a read thread after the archive changed
(:meth:`RecordsTableModel.page_reader`, then :meth:`RecordsTableModel.show_page`), with the
labels their relation cells show, and shown in place: the view keeps its scroll position,
its selection and its column widths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from app.core.archive import Archive, Field, Record, RecordKey
from app.core.archive.hierarchy import Hierarchy, count_tops, hierarchy_of, top_records
from app.core.archive.records import locators
from app.core.archive.vocabulary import Terms, field_terms, said

PAGE_SIZE = 100
MAX_EXTRA_COLUMNS = 3
COLUMN_KINDS = ("text", "date", "number", "relation", "iri")

AnyIndex = QModelIndex | QPersistentModelIndex


def table_fields(archive: Archive, section_tipo: str) -> list[Field]:
    """The fields shown as columns: the label field first, then a few short ones."""
    section = archive.section(section_tipo)
    fields = archive.fields(section_tipo)
    label = [f for f in fields if f.tipo == section.label_field]
    rest = [f for f in fields if f.tipo != section.label_field and f.kind in COLUMN_KINDS]
    return label + rest[:MAX_EXTRA_COLUMNS]


@dataclass(frozen=True)
class SectionPage:
    """The first records of one section as the table shows them."""

    section_tipo: str | None
    fields: list[Field]
    total: int
    """How many records the section holds (read or not)."""
    records: list[Record]
    labels: dict[RecordKey, str]
    """The labels of the records the relation cells of ``records`` name (may be empty: they
    are then read as the cells are drawn)."""
    terms: dict[str, Terms] = field(default_factory=dict)
    """The columns that hold codes (a level, an entity type), shown as terms of the UI's
    language (:mod:`app.core.archive.vocabulary`)."""
    tops: Hierarchy | None = None
    """The hierarchy whose top-level records alone are listed (each fonds; ``total`` counts
    them), ``None`` when every record is."""
    hierarchy: bool = False
    """Whether the section is a hierarchy (it may be listed by its top-level records)."""


def read_section_page(
    archive: Archive,
    section_tipo: str | None,
    lang: str,
    rows: int,
    *,
    labels: bool = False,
    tops: bool = False,
) -> SectionPage:
    """The columns, the count and the first ``rows`` records of ``section_tipo`` (with
    ``labels``, their relation cells' labels too; with ``tops``, of a hierarchy, only the
    records that are part of nothing); reads on the calling thread."""
    if section_tipo is None:
        return SectionPage(None, [], 0, [], {})
    fields = table_fields(archive, section_tipo)
    shape = hierarchy_of(archive, section_tipo)
    listed = shape if tops else None
    total = count_tops(archive, listed) if listed else archive.count_records(section_tipo)
    records = _page(archive, section_tipo, listed, 0, rows) if total else []
    if len(records) < rows:
        total = len(records)  # every record was read (the count is the same, or out of date)
    names = relation_labels(archive, fields, records, lang) if labels else {}
    terms = field_terms(section_tipo, shape)
    return SectionPage(section_tipo, fields, total, records, names, terms, listed, bool(shape))


def _page(
    archive: Archive, section_tipo: str, tops: Hierarchy | None, offset: int, limit: int
) -> list[Record]:
    """Records ``offset`` to ``offset + limit`` of the section (of its top-level records)."""
    if tops is not None:
        return top_records(archive, tops, offset=offset, limit=limit)
    return archive.list_records(section_tipo, offset=offset, limit=limit)


def relation_labels(
    archive: Archive, fields: list[Field], records: list[Record], lang: str
) -> dict[RecordKey, str]:
    """The label of every record the ``fields`` relation cells of ``records`` link to."""
    relations = [field.tipo for field in fields if field.kind == "relation"]
    keys = {key for record in records for tipo in relations for key in locators(record.items(tipo))}
    return {key: archive.record_label(key, lang) for key in keys}


class RecordsTableModel(QAbstractTableModel):
    """The records of one section, fetched ``PAGE_SIZE`` at a time (``fetchMore``)."""

    def __init__(self, archive: Archive, lang: str = "lg-eng", parent: QObject | None = None):
        super().__init__(parent)
        self._archive = archive
        self._lang = lang
        self._section: str | None = None
        self._fields: list[Field] = []
        self._records: list[Record] = []
        self._total = 0
        self._labels: dict[RecordKey, str] = {}
        self._terms: dict[str, Terms] = {}
        self._tops: Hierarchy | None = None
        self._hierarchy = False
        self.tops_only = True
        """A hierarchy is listed by its top-level records (each fonds), as AtoM browses
        archival descriptions; ``False``: every record."""

    # -- loading -------------------------------------------------------------------------------
    @property
    def section_tipo(self) -> str | None:
        """The section shown, if any."""
        return self._section

    def set_section(self, section_tipo: str | None) -> None:
        """Show ``section_tipo`` (``None`` empties the table); only the first page is read."""
        page = read_section_page(
            self._archive, section_tipo, self._lang, PAGE_SIZE, tops=self.tops_only
        )
        self._reset(page)

    def set_tops_only(self, tops_only: bool) -> None:
        """List a hierarchy by its top-level records (``True``) or every record, from now on
        (the section shown is read again)."""
        self.tops_only = tops_only
        self.set_section(self._section)

    @property
    def hierarchy(self) -> bool:
        """Whether the section shown is a hierarchy."""
        return self._hierarchy

    @property
    def listing_tops(self) -> bool:
        """Whether only the section's top-level records are listed."""
        return self._tops is not None

    def page_reader(self) -> Callable[[], SectionPage]:
        """The read of the rows shown (at least a page, their cells' labels included), to run
        on a read thread; :meth:`show_page` shows it."""
        archive, section, lang, tops = self._archive, self._section, self._lang, self.tops_only
        rows = max(len(self._records), PAGE_SIZE)
        return lambda: read_section_page(archive, section, lang, rows, labels=True, tops=tops)

    def show_page(self, page: SectionPage) -> bool:
        """Show ``page``, read again for the section still shown: in place, so the view keeps
        its place, unless the columns changed (a page of a section left since is dropped).

        Returns:
            Whether the model was reset (the columns changed): the view sizes them again.
        """
        if page.section_tipo != self._section or (page.tops is None) != (self._tops is None):
            return False
        if page.fields != self._fields:
            self._reset(page)
            return True
        old, new = len(self._records), len(page.records)
        if new < old:
            self.beginRemoveRows(QModelIndex(), new, old - 1)
            del self._records[new:]
            self.endRemoveRows()
        self._records[: min(old, new)] = page.records[: min(old, new)]
        self._total, self._labels, self._terms = page.total, dict(page.labels), dict(page.terms)
        if new > old:
            self.beginInsertRows(QModelIndex(), old, new - 1)
            self._records.extend(page.records[old:])
            self.endInsertRows()
        if new:
            last = self.index(new - 1, self.columnCount() - 1)
            self.dataChanged.emit(self.index(0, 0), last)
        return False

    def _reset(self, page: SectionPage) -> None:
        self.beginResetModel()
        self._section, self._fields, self._total = page.section_tipo, page.fields, page.total
        self._records, self._labels = list(page.records), dict(page.labels)
        self._terms = dict(page.terms)
        self._tops, self._hierarchy = page.tops, page.hierarchy
        self.endResetModel()

    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        """Whether records remain unread."""
        return (
            not parent.isValid()
            and self._section is not None
            and (len(self._records) < self._total)
        )

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        """Read the next page of records."""
        if parent.isValid() or self._section is None:
            return
        page = _page(self._archive, self._section, self._tops, len(self._records), PAGE_SIZE)
        if not page:
            self._total = len(self._records)
            return
        first = len(self._records)
        self.beginInsertRows(QModelIndex(), first, first + len(page) - 1)
        self._records.extend(page)
        self.endInsertRows()

    # -- reading -------------------------------------------------------------------------------
    def total(self) -> int:
        """How many records are listed, read or not (the section's, or its top-level
        records')."""
        return self._total

    def record_at(self, row: int) -> Record | None:
        """The record shown on ``row``."""
        return self._records[row] if 0 <= row < len(self._records) else None

    def row_of(self, key: RecordKey) -> int | None:
        """The row of ``key`` among the records read so far."""
        for row, record in enumerate(self._records):
            if record.key == key:
                return row
        return None

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """Rows read so far."""
        return 0 if parent.isValid() else len(self._records)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        """The id column plus the field columns."""
        return 0 if parent.isValid() else 1 + len(self._fields)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles (field labels in the UI language)."""
        if role != Qt.ItemDataRole.DisplayRole or orientation != Qt.Orientation.Horizontal:
            return None
        if section == 0:
            return self.tr("ID")
        return self._fields[section - 1].label(self._lang)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A cell's text; the full text (and the key) as tooltip, since cells are elided."""
        record = self.record_at(index.row()) if index.isValid() else None
        if record is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(record, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            full = self._cell(record, index.column(), limit=600) if index.column() else ""
            return f"{full}\n{record.key}" if full else str(record.key)
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() == 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _cell(self, record: Record, column: int, limit: int = 120) -> str:
        if column == 0:
            return str(record.section_id)
        field = self._fields[column - 1]
        if field.kind == "relation":
            return ", ".join(self._label(key) for key in locators(record.items(field.tipo)))
        text = record.text(field.tipo, self._lang) or ""
        terms = self._terms.get(field.tipo)
        if terms is not None:
            text = said(text, terms, self._lang)
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def _label(self, key: RecordKey) -> str:
        if key not in self._labels:
            self._labels[key] = self._archive.record_label(key, self._lang)
        return self._labels[key]
