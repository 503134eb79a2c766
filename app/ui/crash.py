"""The crash dialog: a bug (anything not an ``ArxiuError``) shows its traceback here.

Known errors are caught where they happen and shown as banners or status messages; whatever
reaches :func:`sys.excepthook` (async slots included, through qasync; a widget's task through
:class:`~app.ui.tasks.TaskGroup`; an assistant run's bug through the run's task) is a bug.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import ArxiuError, log_bug

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


class CrashReporter(QObject):
    """The app's crash handler, installed as :func:`sys.excepthook` by :func:`install_excepthook`.

    A bug is logged once with its traceback (:func:`~app.core.errors.log_bug`; the agent loop
    may have logged it already, where it happened) and its traceback shown in a
    :class:`CrashDialog`, opened without a nested event loop (the hook runs inside asyncio
    callbacks). Ctrl+C quits.

    Signals:
        reported: (str) an uncaught exception's traceback text, once logged and shown.
    """

    reported = Signal(str)

    def __init__(self, *, show_dialog: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.show_dialog = show_dialog
        self.dialogs: list[CrashDialog] = []
        """The crash dialogs open now."""

    def __call__(
        self, kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        """Handle one uncaught exception (the :func:`sys.excepthook` signature)."""
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        text = format_exception(kind, value, tb)
        if isinstance(value, ArxiuError):
            log.error("unhandled known error: %s", value)
        else:
            log_bug(log, value, "the app")
        app = QApplication.instance()
        if self.show_dialog and app is not None and QThread.currentThread() is app.thread():
            self._open(text)
        self.reported.emit(text)

    def _open(self, text: str) -> None:
        dialog = CrashDialog(text)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialogs.append(dialog)
        dialog.finished.connect(lambda _result, d=dialog: self.dialogs.remove(d))
        dialog.open()


def install_excepthook(*, show_dialog: bool = True) -> ExceptHook:
    """Route uncaught exceptions to a :class:`CrashReporter`: the log and (when
    ``show_dialog``) a crash dialog.

    Returns:
        The previous hook, to restore on exit.
    """
    previous = sys.excepthook
    sys.excepthook = CrashReporter(show_dialog=show_dialog)
    return previous
