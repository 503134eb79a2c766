"""An image of a record, opened in the app: clicking a thumbnail in the record view shows the
whole image here, fitted to the window, instead of asking the desktop for a viewer (a
desktop with no image viewer set did nothing)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QImageReader, QPixmap, QResizeEvent
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

SCREEN_SHARE = 0.85
"""The most of the screen the viewer opens at."""


def read_image(path: Path) -> tuple[QPixmap, str]:
    """The image at ``path`` and ``""``, or a null pixmap and Qt's reason it cannot be read."""
    reader = QImageReader(str(path))
    reader.setAutoTransform(True)  # the camera's rotation
    image = reader.read()
    if image.isNull():
        return QPixmap(), reader.errorString()
    return QPixmap.fromImage(image), ""


class ImageViewer(QDialog):
    """One image, fitted to the dialog (never enlarged past its own size), under the title of
    its record (the stored file's name is a checksum) and its size in pixels."""

    def __init__(self, path: Path, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.pixmap, error = read_image(path)
        self.image = QLabel(self)
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image.setMinimumSize(120, 90)
        size = f"{self.pixmap.width()} × {self.pixmap.height()} px"
        self.caption = QLabel(f"{title} · {error or size}", self)
        self.caption.setObjectName("placeholder")
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(self.image, 1)
        layout.addWidget(self.caption)
        self.resize(self._first_size())

    def _first_size(self) -> QSize:
        """The image's own size and room for the caption, within :data:`SCREEN_SHARE`."""
        fallback = self.sizeHint().expandedTo(self.minimumSizeHint())
        if self.pixmap.isNull():
            return fallback
        screen = self.screen().availableGeometry()
        width = min(self.pixmap.width() + 40, int(screen.width() * SCREEN_SHARE))
        height = min(self.pixmap.height() + 80, int(screen.height() * SCREEN_SHARE))
        return QSize(width, height).expandedTo(fallback)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Fit the image to the room the dialog has now."""
        super().resizeEvent(event)
        if self.pixmap.isNull():
            return
        room = self.image.contentsRect().size()
        if self.pixmap.width() <= room.width() and self.pixmap.height() <= room.height():
            self.image.setPixmap(self.pixmap)
        else:
            self.image.setPixmap(
                self.pixmap.scaled(
                    room,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            )
