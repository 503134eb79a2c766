"""Small forms for adding models: an OpenAI-compatible server, an Anthropic key."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QWidget,
)

from app.core.models.secrets import store_api_key


def _buttons(dialog: QDialog) -> QDialogButtonBox:
    box = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, dialog
    )
    box.accepted.connect(dialog.accept)
    box.rejected.connect(dialog.reject)
    return box


class EndpointDialog(QDialog):
    """An OpenAI-compatible server (Ollama, vLLM, LM Studio...) with its egress class."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("OpenAI-compatible server"))
        self.model_id = QLineEdit(self)
        self.label = QLineEdit(self)
        self.endpoint = QLineEdit("http://localhost:11434/v1", self)
        self.model = QLineEdit(self)
        self.egress = QComboBox(self)
        self.egress.addItem(self.tr("local / private (this computer or institution)"), "local")
        self.egress.addItem(self.tr("external (a third party)"), "external")
        form = QFormLayout(self)
        form.addRow(self.tr("Id:"), self.model_id)
        form.addRow(self.tr("Label:"), self.label)
        form.addRow(self.tr("Endpoint:"), self.endpoint)
        form.addRow(self.tr("Model name:"), self.model)
        form.addRow(self.tr("Privacy:"), self.egress)
        form.addRow(_buttons(self))

    def entry(self) -> dict[str, Any]:
        """The catalog entry."""
        return {
            "id": self.model_id.text().strip(),
            "label": self.label.text().strip() or self.model.text().strip(),
            "provider": "openai_compatible",
            "model": self.model.text().strip(),
            "endpoint": self.endpoint.text().strip(),
            "egress": self.egress.currentData(),
        }


class AnthropicDialog(QDialog):
    """An Anthropic model; the key goes to the OS keyring, never a file."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Anthropic model"))
        self.model_id = QLineEdit("claude", self)
        self.model = QLineEdit("claude-sonnet-4-5", self)
        self.key = QLineEdit(self)
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        form = QFormLayout(self)
        form.addRow(self.tr("Id:"), self.model_id)
        form.addRow(self.tr("Model:"), self.model)
        form.addRow(self.tr("API key:"), self.key)
        form.addRow(_buttons(self))

    def entry(self) -> dict[str, Any]:
        """The catalog entry (always external)."""
        model = self.model.text().strip()
        return {
            "id": self.model_id.text().strip(),
            "label": f"{model} (external)",
            "provider": "anthropic",
            "model": model,
        }

    def store_key(self) -> None:
        """Put the key in the keyring."""
        if self.key.text().strip():
            store_api_key(self.model_id.text().strip(), self.key.text().strip())
