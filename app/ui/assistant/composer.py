"""The composer: the question box, the record-context chip, attached images, Send and Stop."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.archive import RecordKey
from app.core.counted import Counted

IMAGES = Counted("1 image attached", "{n} images attached")
"""The images that go with the next question, in the form that agrees with their number."""


class QuestionEdit(QPlainTextEdit):
    """Enter sends, Shift+Enter breaks the line.

    Signals:
        submitted: Enter was pressed.
    """

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Send on Enter."""
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class ComposerWidget(QFrame):
    """Where the person writes.

    Signals:
        send_requested: Send (or Enter) with a non-empty question.
        stop_requested: Stop was clicked.
    """

    send_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.context_key: RecordKey | None = None
        self.images: list[tuple[str, bytes]] = []
        self.edit = QuestionEdit(self)
        self.edit.setObjectName("composerEdit")
        self.edit.setPlaceholderText(self.tr("Ask about the archive…"))
        self.edit.setFixedHeight(64)
        self.edit.submitted.connect(self._on_send)
        self.context_chip = QLabel(self)
        self.context_chip.setObjectName("contextChip")
        self.clear_context = QToolButton(self)
        self.clear_context.setText("×")
        self.clear_context.setAutoRaise(True)
        self.clear_context.clicked.connect(lambda: self.set_context(None, ""))
        self.attach_button = QPushButton(self.tr("Attach image"), self)
        self.attach_button.clicked.connect(self._on_attach)
        self.images_label = QLabel(self)
        self.send_button = QPushButton(self.tr("Send"), self)
        self.send_button.setObjectName("primary")
        self.send_button.clicked.connect(self._on_send)
        self.stop_button = QPushButton(self.tr("Stop"), self)
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.setVisible(False)
        self._layout()
        self.set_context(None, "")

    def _layout(self) -> None:
        chips = QHBoxLayout()
        chips.addWidget(self.context_chip)
        chips.addWidget(self.clear_context)
        chips.addWidget(self.images_label)
        chips.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.attach_button)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(6)
        layout.addLayout(chips)
        layout.addWidget(self.edit)
        layout.addLayout(buttons)

    def question(self) -> str:
        """The text written."""
        return self.edit.toPlainText().strip()

    def set_busy(self, busy: bool) -> None:
        """Swap Send for Stop while a run streams."""
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)

    def set_vision(self, vision: bool) -> None:
        """Attaching images only for vision models."""
        self.attach_button.setVisible(vision)
        if not vision:
            self.set_images([])

    def set_context(self, key: RecordKey | None, label: str) -> None:
        """The record sent as context with the next questions (``None``: none)."""
        self.context_key = key
        shown = key is not None
        self.context_chip.setText(self.tr("About: {label}").format(label=label) if shown else "")
        self.context_chip.setVisible(shown)
        self.clear_context.setVisible(shown)

    def ask_about(self, key: RecordKey, label: str) -> None:
        """Send ``key`` (``label``) with the next questions; the cursor goes to the question."""
        self.set_context(key, f"{label} ({key})")
        self.edit.setFocus()

    def set_images(self, images: list[tuple[str, bytes]]) -> None:
        """Images sent with the next question."""
        self.images = list(images)
        self.images_label.setText(
            self.tr(IMAGES.template(len(images))).format(n=len(images)) if images else ""
        )

    def take_question(self) -> str:
        """The question, clearing the box (images go with it)."""
        text = self.question()
        self.edit.clear()
        return text

    def _on_send(self) -> None:
        if self.question() and self.send_button.isVisible():
            self.send_requested.emit()

    def _on_attach(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, self.tr("Attach an image"), "", self.tr("Images (*.png *.jpg *.jpeg *.webp)")
        )
        if name:
            path = Path(name)
            mime = mimetypes.guess_type(path.name)[0] or "image/png"
            self.set_images([*self.images, (mime, path.read_bytes())])
