"""A label and a button that elide their text instead of asking for the width to show it all.

A plain ``QLabel`` asks its layout for the width of its whole text, so a long search query in
the results heading widened the records pane, and the splitter took that width from the
record view. :class:`ElidedLabel` asks for none: it paints as much of its text as fits, ending
in "…", and shows the whole text as its tooltip. :class:`ElidedButton` does the same for a
button's label below its natural width (the record view's "Ask about this record" in a
narrow window), down to :data:`BUTTON_MIN_CHARS` characters.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QLabel,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOption,
    QStyleOptionButton,
    QStylePainter,
    QWidget,
)

BUTTON_MIN_CHARS = 6
"""The fewest characters an elided button keeps (then \"…\")."""


class ElidedLabel(QLabel):
    """A plain-text label, elided on the right to the width it is given."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)

    def set_full_text(self, text: str) -> None:
        """Show ``text`` (elided as needed; the tooltip holds all of it)."""
        self.setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:
        """As tall as a line, as narrow as nothing."""
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        """A modest preferred width; the layout may give it more or less."""
        hint = super().sizeHint()
        return QSize(min(hint.width(), 160), hint.height())

    def elided_text(self) -> str:
        """The text as painted at the label's current width."""
        width = self.contentsRect().width()
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, width)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Paint the style's frame and background, then the elided text."""
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_Widget, option, painter, self)
        painter.setFont(self.font())
        painter.setPen(self.palette().color(self.foregroundRole()))
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.contentsRect(), int(align), self.elided_text())
        painter.end()


class ElidedButton(QPushButton):
    """A push button whose label is elided when the layout gives it less than its width."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setToolTip(text)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def minimumSizeHint(self) -> QSize:
        """Room for :data:`BUTTON_MIN_CHARS` characters and the ellipsis."""
        hint = super().minimumSizeHint()
        full = super().sizeHint().width()
        short = self.fontMetrics().horizontalAdvance("x" * BUTTON_MIN_CHARS + "…")
        text = self.fontMetrics().horizontalAdvance(self.text())
        return QSize(min(full, full - text + short), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        """Paint the button as the style does, its label elided to the width it has."""
        option = QStyleOptionButton()
        self.initStyleOption(option)
        natural = super().sizeHint().width()
        if self.width() < natural:  # at its natural width the whole label fits
            spare = natural - self.fontMetrics().horizontalAdvance(self.text())
            room = max(self.width() - spare, 0)
            option.text = self.fontMetrics().elidedText(
                self.text(), Qt.TextElideMode.ElideRight, room
            )
        painter = QStylePainter(self)
        painter.drawControl(QStyle.ControlElement.CE_PushButton, option)
        painter.end()
