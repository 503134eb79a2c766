"""The conversations list: open, rename, delete, export to Markdown or JSON.

Every read and write of the stored conversations is awaited on the archive's threads.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import ArxiuError
from app.ui.services import Services
from app.ui.tasks import TaskGroup

ID_ROLE = Qt.ItemDataRole.UserRole


class ConversationsView(QWidget):
    """Persisted conversations, most recent first.

    Signals:
        opened: (conversation id) the person opened one.
        deleted: (conversation id) one was deleted.
        closed: back to the current conversation.
    """

    opened = Signal(str)
    deleted = Signal(str)
    closed = Signal()

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.tasks = TaskGroup(self)
        title = QLabel(self.tr("Conversations"), self)
        title.setObjectName("paneTitle")
        back = QPushButton(self.tr("Back"), self)
        back.clicked.connect(self.closed)
        self.list = QListWidget(self)
        self.list.itemActivated.connect(self._on_open)
        self.list.itemDoubleClicked.connect(self._on_open)
        buttons = QHBoxLayout()
        for text, slot in (
            (self.tr("Open"), self._open_current),
            (self.tr("Rename…"), self._rename_current),
            (self.tr("Delete"), self._delete_current),
            (self.tr("Export…"), self._export_current),
        ):
            button = QPushButton(text, self)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        head = QHBoxLayout()
        head.addWidget(title, 1)
        head.addWidget(back)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)

    def refresh(self) -> None:
        """Re-read the stored conversations (in the background)."""
        self.tasks.start(self.reload(), name="list")

    async def reload(self) -> None:
        """Re-read the stored conversations (on a read thread) and list them."""
        session = self.services.session_now
        found = await session.conversations.summaries() if session is not None else []
        self.list.clear()
        for item in found:
            stamp = (item.updated_at or "")[:16].replace("T", " ")
            title = item.title or self.tr("Untitled")
            entry = QListWidgetItem(f"{title}\n{stamp}")
            entry.setData(ID_ROLE, item.id)
            self.list.addItem(entry)

    def current_id(self) -> str | None:
        """The selected conversation's id."""
        item = self.list.currentItem()
        return str(item.data(ID_ROLE)) if item is not None else None

    async def rename(self, conversation_id: str, title: str) -> None:
        """Rename a conversation."""
        session = self.services.session_now
        if session is not None:
            await session.conversations.rename(conversation_id, title)
        await self.reload()

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation."""
        session = self.services.session_now
        if session is None:
            return
        await session.conversations.delete(conversation_id)
        self.deleted.emit(conversation_id)
        await self.reload()

    async def export(self, conversation_id: str, path: Path) -> None:
        """Write a conversation to ``path`` (``.json`` as JSON, anything else as Markdown).

        Raises:
            OSError, ArxiuError: the file cannot be written, or the conversation read.
        """
        session = self.services.session_now
        if session is None:
            return
        if path.suffix.lower() == ".json":
            exported = await session.conversations.export_json(conversation_id)
            text = json.dumps(exported, ensure_ascii=False, indent=2)
        else:
            text = await session.conversations.export_markdown(conversation_id, self.services.lang)
        await self.services.run_blocking(lambda: path.write_text(text, encoding="utf-8"))

    def _on_open(self, item: QListWidgetItem) -> None:
        self.opened.emit(str(item.data(ID_ROLE)))

    def _open_current(self) -> None:
        if (cid := self.current_id()) is not None:
            self.opened.emit(cid)

    def _rename_current(self) -> None:
        cid = self.current_id()
        if cid is None:
            return
        title, ok = QInputDialog.getText(self, self.tr("Rename"), self.tr("Title:"))
        if ok and title.strip():
            self.tasks.start(self.rename(cid, title), name="rename")

    def _delete_current(self) -> None:
        cid = self.current_id()
        answer = QMessageBox.question(self, self.tr("Delete"), self.tr("Delete this conversation?"))
        if cid is not None and answer == QMessageBox.StandardButton.Yes:
            self.tasks.start(self.delete(cid), name="delete")

    def _export_current(self) -> None:
        cid = self.current_id()
        if cid is None:
            return
        name, _ = QFileDialog.getSaveFileName(
            self,
            self.tr("Export conversation"),
            "conversation.md",
            self.tr("Markdown (*.md);;JSON (*.json)"),
        )
        if name:
            self.tasks.start(self._export(cid, Path(name)), name="export")

    async def _export(self, conversation_id: str, path: Path) -> None:
        try:
            await self.export(conversation_id, path)
        except (OSError, ArxiuError) as error:
            QMessageBox.warning(self, self.tr("Export"), str(error))
