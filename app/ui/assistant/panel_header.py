"""The panel's head: the model picker, read or write mode, New and Conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from app.core.agent.request import Mode
from app.ui.assistant.model_picker import ModelPicker

if TYPE_CHECKING:
    from app.core.session import ModelListing


class PanelHeader(QWidget):
    """The model picker over a row of the mode and the conversation buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.picker = ModelPicker(self)
        self.mode = QComboBox(self)
        self.mode.setObjectName("modeCombo")
        # sized to its items whenever they change: sized at the first show, when only "Read"
        # was offered, the combo clipped "Write" to "Escriptu" in Catalan
        self.mode.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.mode.setToolTip(self.tr("Write mode lets the assistant propose changes"))
        self.new_button = QToolButton(self)
        self.new_button.setText(self.tr("New"))
        self.new_button.setToolTip(self.tr("Start a new conversation"))
        self.list_button = QToolButton(self)
        self.list_button.setText(self.tr("Conversations"))
        self.set_modes(write=False)
        head = QHBoxLayout()
        head.setContentsMargins(10, 6, 10, 2)
        head.addWidget(self.picker, 1)
        tools = QHBoxLayout()
        tools.setContentsMargins(10, 2, 10, 6)
        tools.addWidget(self.mode)
        tools.addStretch(1)
        tools.addWidget(self.new_button)
        tools.addWidget(self.list_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(head)
        layout.addLayout(tools)

    def set_modes(self, *, write: bool) -> None:
        """Offer read mode, and write mode when writes are on; the mode chosen stays chosen
        while it is still offered (the settings saved do not turn Write back to Read)."""
        chosen = self.mode.currentData()
        self.mode.clear()
        self.mode.addItem(self.tr("Read"), "read")
        if write:
            self.mode.addItem(self.tr("Write"), "write")
        kept = self.mode.findData(chosen)
        if kept >= 0:
            self.mode.setCurrentIndex(kept)

    def show_models(self, offered: ModelListing, last_model: str | None) -> None:
        """Offer the session's catalog (``{models, write_allowed}``): the model chosen in the
        picker stays chosen while it is offered, else ``last_model``, else the default."""
        self.set_modes(write=bool(offered["write_allowed"]))
        offered_ids = {model["id"] for model in offered["models"]}
        current = self.picker.current_id()
        selected = current if current in offered_ids else last_model
        self.picker.set_models(offered["models"], selected)

    def chosen_mode(self) -> Mode:
        """The mode chosen."""
        return "write" if self.mode.currentData() == "write" else "read"
