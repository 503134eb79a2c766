"""The crash dialog: a bug (anything not an ``ArxiuError``) shows its traceback here.

Known errors are caught where they happen and shown as banners or status messages; whatever
reaches :func:`sys.excepthook` (async slots included, through qasync) is a bug.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import ArxiuError

log = logging.getLogger(__name__)

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]


class CrashDialog(QDialog):
    """Shows a traceback with a Copy button."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Arxiu hit a bug"))
        intro = QLabel(
            self.tr(
                "Something went wrong inside Arxiu. Your archive is safe: every change is "
                "written in its own transaction. Please copy this report into a bug report."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.details = QPlainTextEdit(text, self)
        self.details.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        copy = buttons.addButton(self.tr("Copy"), QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(self._copy)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.details, 1)
        layout.addWidget(buttons)
        self.resize(720, 420)

    def _copy(self) -> None:
        QApplication.clipboard().setText(self.details.toPlainText())


def format_exception(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> str:
    """The traceback as text."""
    return "".join(traceback.format_exception(kind, value, tb))


def install_excepthook(*, show_dialog: bool = True) -> ExceptHook:
    """Route uncaught exceptions to the log and (when ``show_dialog``) a crash dialog.

    Returns:
        The previous hook, to restore on exit.
    """
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        text = format_exception(kind, value, tb)
        if isinstance(value, ArxiuError):
            log.error("unhandled known error: %s", value)
        else:
            log.error("bug: %s", text)
        if show_dialog and QApplication.instance() is not None:
            CrashDialog(text).exec()

    sys.excepthook = hook
    return previous
