"""The model picker: each model with its privacy badge, and the effort levels it offers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from app.core.models.catalog import PublicModel
from app.ui.style import EXTERNAL_COLOR, LOCAL_COLOR

ID_ROLE = Qt.ItemDataRole.UserRole
MODEL_ROLE = Qt.ItemDataRole.UserRole + 1


class ModelPicker(QWidget):
    """A model combo, a badge (**local / private** or **external**) and an effort combo.

    Signals:
        model_changed: (model id) another model was chosen.
    """

    model_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox(self)
        self.combo.setObjectName("modelCombo")
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.badge = QLabel(self)
        self.badge.setObjectName("egressBadge")
        # a badge style from the first polish: polished again later, a label keeps the margins
        # it had, and the padding-less first box clipped "local / private" in ca and es
        self.badge.setProperty("badge", "local")
        self.effort = QComboBox(self)
        self.effort.setObjectName("effortCombo")
        self.effort.setToolTip(self.tr("Reasoning effort"))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.combo, 1)
        layout.addWidget(self.badge)
        layout.addWidget(self.effort)
        self.combo.currentIndexChanged.connect(self._on_changed)
        self._models: list[PublicModel] = []

    def set_models(self, models: Sequence[PublicModel], selected: str | None = None) -> None:
        """Fill the picker from the public catalog (``{id, label, egress, vision, ...}``)."""
        self._models = list(models)
        self.combo.blockSignals(True)
        self.combo.clear()
        chosen = 0
        for number, model in enumerate(models):
            self.combo.addItem(_dot(model), str(model["label"]))
            self.combo.setItemData(number, self.badge_text(model), Qt.ItemDataRole.ToolTipRole)
            self.combo.setItemData(number, model["id"], ID_ROLE)
            self.combo.setItemData(number, model, MODEL_ROLE)
            if model["id"] == selected or (selected is None and model.get("default")):
                chosen = number
        self.combo.setCurrentIndex(chosen)
        self.combo.blockSignals(False)
        self._on_changed(chosen)

    def badge_text(self, model: Mapping[str, object]) -> str:
        """The badge words for a model."""
        return self.tr("local / private") if model.get("egress") == "local" else self.tr("external")

    def current(self) -> dict[str, Any] | None:
        """The chosen model's public entry."""
        data = self.combo.currentData(MODEL_ROLE)
        return data if isinstance(data, dict) else None

    def current_id(self) -> str | None:
        """The chosen model's id."""
        model = self.current()
        return str(model["id"]) if model else None

    def current_effort(self) -> str | None:
        """The chosen effort (``None``: the model's default)."""
        value = self.effort.currentData()
        return str(value) if value else None

    def current_vision(self) -> bool:
        """Whether the chosen model reads images."""
        model = self.current()
        return bool(model and model.get("vision"))

    def is_external(self) -> bool:
        """Whether the chosen model is external."""
        model = self.current()
        return bool(model and model.get("egress") != "local")

    def local_model_id(self) -> str | None:
        """The first local model (the one to switch to for restricted records)."""
        return next((m["id"] for m in self._models if m["egress"] == "local"), None)

    def select(self, model_id: str) -> None:
        """Choose ``model_id``."""
        index = self.combo.findData(model_id, ID_ROLE)
        if index >= 0:
            self.combo.setCurrentIndex(index)

    def _on_changed(self, index: int) -> None:
        model = self.current()
        if model is None:
            self.badge.setText("")
            self.badge.setVisible(False)
            self.effort.setVisible(False)
            return
        self.badge.setVisible(True)
        self.badge.setText(self.badge_text(model))
        self.badge.setProperty("badge", "local" if model.get("egress") == "local" else "external")
        self.badge.setToolTip(
            self.tr("Nothing leaves this computer.")
            if model.get("egress") == "local"
            else self.tr("Questions go to an external provider; restricted records never do.")
        )
        self.badge.style().unpolish(self.badge)
        self.badge.style().polish(self.badge)
        self._fill_efforts(list(model.get("efforts") or []))
        self.model_changed.emit(str(model["id"]))

    def _fill_efforts(self, efforts: list[str]) -> None:
        self.effort.clear()
        self.effort.addItem(self.tr("default effort"), None)
        for effort in efforts:
            self.effort.addItem(effort, effort)
        self.effort.setVisible(bool(efforts))


def _dot(model: Mapping[str, object]) -> QIcon:
    """A green (local) or amber (external) dot for the model list."""
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(LOCAL_COLOR if model.get("egress") == "local" else EXTERNAL_COLOR))
    painter.setPen(QColor(0, 0, 0, 0))
    painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    return QIcon(pixmap)
