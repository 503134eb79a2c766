"""The pieces of a conversation: user turns, thinking, tool lines, error banners (and answers)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.events import ErrorEvent
from app.ui.i18n import InstalledTranslations


class UserTurnWidget(QFrame):
    """What the person asked (with the record it was about, if any)."""

    def __init__(self, text: str, context: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("userTurn")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        if context:
            chip = QLabel(context, self)
            chip.setObjectName("contextChip")
            layout.addWidget(chip, 0, Qt.AlignmentFlag.AlignLeft)
        self.label = QLabel(text, self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.label)


class ThinkingWidget(QWidget):
    """A "Thinking…" indicator; the thinking text, when streamed, folds out."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.toggle = QToolButton(self)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setVisible(False)
        self.toggle.toggled.connect(self._on_toggled)
        self.label = QLabel(self.tr("Thinking…"), self)
        self.label.setObjectName("thinking")
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setObjectName("thinking")
        self.text.setVisible(False)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.toggle)
        head.addWidget(self.label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.text)
        self.thinking = True

    def append(self, text: str) -> None:
        """Add streamed thinking text (folded by default)."""
        self.text.setText(self.text.text() + text)
        self.toggle.setVisible(True)

    def finish(self) -> None:
        """The model stopped thinking."""
        self.thinking = False
        self.label.setText(self.tr("Thought"))

    def _on_toggled(self, shown: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.text.setVisible(shown)


class ToolLineWidget(QLabel):
    """One tool call: its summary, then ok or the error code."""

    def __init__(self, call_id: str, name: str, summary: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.call_id = call_id
        self.name = name
        self.summary = summary or name
        self.outcome: str | None = None
        self.setObjectName("toolLine")
        self.setWordWrap(True)
        self.setToolTip(name)
        self.setText(f"⚙ {self.summary} …")

    def finish(self, ok: bool, code: str) -> None:
        """Show how the call ended."""
        self.outcome = "ok" if ok else code or "failed"
        if ok:
            self.setText(f"✓ {self.summary} — {self.tr('ok')}")
        else:
            self.setObjectName("toolLineFailed")
            self.setText(f"✗ {self.summary} — {self.outcome}")
            self.style().unpolish(self)
            self.style().polish(self)


class ErrorBanner(QFrame):
    """A failed run: the message, the hint, Retry when retryable, and for a restricted record
    on an external model, a one-click switch to the local model.

    Signals:
        retry_requested: Retry was clicked.
        switch_local_requested: "Use the local model" was clicked.
    """

    retry_requested = Signal()
    switch_local_requested = Signal()

    def __init__(
        self, error: ErrorEvent, *, offer_local: bool = False, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.error = error
        self.setObjectName("errorBanner")
        table = InstalledTranslations()
        said = error.message_in(table)  # the core's words, in the UI's language if in the table
        label = table.get(error.label_key) if said == error.message else None
        title = QLabel(label or said, self)  # else the code's label, in the UI's language
        title.setObjectName("errorTitle")
        title.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.addWidget(title)
        if label:
            message = QLabel(said, self)  # the message as the core wrote it (English)
            message.setWordWrap(True)
            layout.addWidget(message)
        hint = error.hint_in(table)
        if hint:
            self.hint = QLabel(hint, self)
            self.hint.setWordWrap(True)
            layout.addWidget(self.hint)
        code = QLabel(error.code, self)
        code.setObjectName("toolLine")
        buttons = QHBoxLayout()
        buttons.addWidget(code, 1)
        self.retry_button = self._button(self.tr("Retry"), error.retryable, self.retry_requested)
        self.local_button = self._button(
            self.tr("Use the local model"), offer_local, self.switch_local_requested
        )
        buttons.addWidget(self.local_button)
        buttons.addWidget(self.retry_button)
        layout.addLayout(buttons)

    def _button(self, text: str, shown: bool, signal: SignalInstance) -> QPushButton:
        button = QPushButton(text, self)
        button.setVisible(shown)
        button.clicked.connect(signal)
        return button


class NoticeLabel(QLabel):
    """A quiet line in the conversation (stopped, superseded, switched model...)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("toolLine")
        self.setWordWrap(True)
