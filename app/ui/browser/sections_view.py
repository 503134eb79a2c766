"""The sections list: each section's label, record count and a restricted badge.

The rows are read by :func:`read_section_rows` on whichever thread asks: at the window's
start, and on a read thread after the archive changed (:meth:`SectionsView.rows_reader`, then
:meth:`SectionsView.show_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QListWidget,
    QListWidgetItem,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from app.core.archive import Archive
from app.ui.browser.item_paint import paint_background, text_role

TIPO_ROLE = Qt.ItemDataRole.UserRole
COUNT_ROLE = Qt.ItemDataRole.UserRole + 1
RESTRICTED_ROLE = Qt.ItemDataRole.UserRole + 2
BADGE_COLOR = QColor("#b42318")


@dataclass(frozen=True)
class SectionRow:
    """One section as the list shows it."""

    tipo: str
    label: str
    count: int
    restricted: bool


def read_section_rows(archive: Archive, lang: str) -> list[SectionRow]:
    """Every section with its label in ``lang`` and its record count (reads on the calling
    thread)."""
    return [
        SectionRow(
            section.tipo,
            section.label(lang),
            archive.count_records(section.tipo),
            section.restricted,
        )
        for section in archive.sections()
    ]


class SectionDelegate(QStyledItemDelegate):
    """Paints a section row: label, the count on the right, a red "restricted" pill."""

    def __init__(self, badge_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._badge_text = badge_text

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Rows a little taller than text, asking for no width: a row is as wide as the list
        and its label is elided there, so a long label ("Persons, families and corporate
        bodies") never widens the rows past the pane and pushes the counts out of sight."""
        size = super().sizeHint(option, index)
        return QSize(0, max(size.height() + 12, 30))

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """Draw the row."""
        opt = paint_background(self, painter, option, index)
        role = text_role(opt)
        rect: QRect = opt.rect.adjusted(10, 0, -10, 0)
        painter.save()
        painter.setPen(opt.palette.color(role))
        count = str(index.data(COUNT_ROLE))
        metrics = painter.fontMetrics()
        count_width = metrics.horizontalAdvance(count)
        painter.drawText(
            rect, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), count
        )
        right = rect.right() - count_width - 8
        if index.data(RESTRICTED_ROLE):
            right = self._paint_badge(painter, rect, right)
            painter.setPen(opt.palette.color(role))  # the badge painted in white
        label_rect = QRect(rect.left(), rect.top(), max(right - rect.left(), 0), rect.height())
        label = metrics.elidedText(
            str(index.data()), Qt.TextElideMode.ElideRight, label_rect.width()
        )
        painter.drawText(
            label_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), label
        )
        painter.restore()

    def _paint_badge(self, painter: QPainter, rect: QRect, right: int) -> int:
        font = painter.font()
        small = painter.font()
        small.setPointSizeF(max(font.pointSizeF() - 1.5, 6.0))
        painter.setFont(small)
        width = painter.fontMetrics().horizontalAdvance(self._badge_text) + 10
        height = painter.fontMetrics().height() + 2
        badge = QRect(right - width, rect.center().y() - height // 2, width, height)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setBrush(BADGE_COLOR)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawRoundedRect(badge, height / 2, height / 2)
        painter.setPen(QColor("white"))
        painter.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), self._badge_text)
        painter.setFont(font)
        return badge.left() - 6


class SectionsView(QListWidget):
    """The archive's sections.

    Signals:
        section_selected: (tipo) the person chose a section.
    """

    section_selected = Signal(str)

    def __init__(self, archive: Archive, lang: str = "lg-eng", parent: QWidget | None = None):
        super().__init__(parent)
        self._archive = archive
        self._lang = lang
        self.setObjectName("sectionsView")
        self.setItemDelegate(SectionDelegate(self.tr("restricted"), self))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.currentItemChanged.connect(self._on_current)
        self._rows: list[SectionRow] = []
        self.reload()

    def reload(self) -> None:
        """Re-read sections and counts now, keeping the selection (at the window's start)."""
        self.show_rows(read_section_rows(self._archive, self._lang))

    def rows_reader(self) -> Callable[[], list[SectionRow]]:
        """The read of the sections, to run on a read thread; :meth:`show_rows` shows it."""
        archive, lang = self._archive, self._lang
        return lambda: read_section_rows(archive, lang)

    def show_rows(self, rows: list[SectionRow]) -> None:
        """List ``rows``, keeping the selection (nothing is redrawn when nothing changed)."""
        if rows == self._rows:
            return
        self._rows = rows
        current = self.current_tipo()
        self.blockSignals(True)
        self.clear()
        for row in rows:
            item = QListWidgetItem(row.label)
            item.setData(TIPO_ROLE, row.tipo)
            item.setData(COUNT_ROLE, row.count)
            item.setData(RESTRICTED_ROLE, row.restricted)
            tip = (
                self.tr("{tipo}: restricted, never sent to external models")
                if row.restricted
                else "{tipo}"
            )
            item.setToolTip(f"{row.label}\n{tip.format(tipo=row.tipo)}")  # a label elided
            self.addItem(item)
        self.blockSignals(False)
        if current:
            self.select_tipo(current, notify=False)

    def current_tipo(self) -> str | None:
        """The selected section's tipo."""
        item = self.currentItem()
        return str(item.data(TIPO_ROLE)) if item is not None else None

    def select_tipo(self, tipo: str, *, notify: bool = True) -> None:
        """Select the section ``tipo``."""
        for row in range(self.count()):
            item = self.item(row)
            if item.data(TIPO_ROLE) == tipo:
                if not notify:
                    self.blockSignals(True)
                self.setCurrentItem(item)
                self.blockSignals(False)
                return

    def _on_current(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.section_selected.emit(str(current.data(TIPO_ROLE)))
