"""What the browser's row delegates share: the style's own background and selection for a row."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem


def paint_background(
    delegate: QStyledItemDelegate,
    painter: QPainter,
    option: QStyleOptionViewItem,
    index: QModelIndex | QPersistentModelIndex,
) -> QStyleOptionViewItem:
    """Draw the row's background and selection as the style does, with no text; the option
    used, for the delegate to draw its own text on top."""
    item = QStyleOptionViewItem(option)
    delegate.initStyleOption(item, index)
    item.text = ""
    style = item.widget.style() if item.widget is not None else QApplication.style()
    style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, item.widget)
    return item


def text_role(item: QStyleOptionViewItem) -> QPalette.ColorRole:
    """The palette role of the row's text: highlighted when the row is selected."""
    selected = bool(item.state & QStyle.StateFlag.State_Selected)
    return QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
