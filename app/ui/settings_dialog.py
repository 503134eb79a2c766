"""Settings: models, privacy, write mode, the index, the language; appearance follows the OS."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.archive.write_switch import set_writes_allowed, writes_allowed
from app.core.errors import ArxiuError
from app.core.models import catalog as catalog_mod
from app.core.models.model_languages import entry_languages
from app.ui.i18n import LANGUAGES, error_text
from app.ui.services import Services
from app.ui.tasks import TaskGroup

TIPO_ROLE = Qt.ItemDataRole.UserRole
MODEL_ROLE = Qt.ItemDataRole.UserRole + 1
MODEL_SETTING = "index.model"
"""The archive meta key the index reads its embedding model from (``app.core.index``)."""


def model_id_from(text: str) -> str:
    """A catalog id from a label or file name (``^[a-z0-9_-]{1,64}$``)."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")
    return (slug or "model")[:64]


class SettingsDialog(QDialog):
    """The settings window; changes are saved on OK.

    Signals:
        model_tested: (ok, text) the test of the selected model ended; ``text`` is shown.
    """

    model_tested = Signal(bool, str)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.tasks = TaskGroup(self)
        self.setWindowTitle(self.tr("Settings"))
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._models_tab(), self.tr("Models"))
        self.tabs.addTab(self._privacy_tab(), self.tr("Privacy"))
        self.tabs.addTab(self._write_tab(), self.tr("Write mode"))
        self.tabs.addTab(self._general_tab(), self.tr("Index and language"))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(buttons)
        self.resize(900, 640)

    # -- tabs ------------------------------------------------------------------------------------
    def _models_tab(self) -> QWidget:
        page = QWidget(self)
        self.models_list = QListWidget(page)
        self._fill_models()
        gguf = QPushButton(self.tr("Add a GGUF file…"), page)
        gguf.clicked.connect(self._add_gguf)
        endpoint = QPushButton(self.tr("Add an OpenAI-compatible server…"), page)
        endpoint.clicked.connect(self._add_endpoint)
        anthropic = QPushButton(self.tr("Add an Anthropic key…"), page)
        anthropic.clicked.connect(self._add_anthropic)
        self.test_button = QPushButton(self.tr("Test the selected model"), page)
        self.test_button.clicked.connect(self.test_selected)
        self.test_result = QLabel(self.tr("Choose a model and test it: a short reply is streamed."))
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        for button in (gguf, endpoint, anthropic):
            buttons.addWidget(button)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        layout = QVBoxLayout(page)
        layout.addWidget(self.models_list, 1)
        layout.addLayout(test_row)
        layout.addLayout(self._languages_row(page))
        layout.addLayout(buttons)
        from app.ui.discovered_models import DiscoveredModelsBox

        self.discovered = DiscoveredModelsBox(self.services, self.tasks, page)
        self.discovered.model_added.connect(lambda _id: self._fill_models())
        layout.addWidget(self.discovered, 2)
        self.discovered.start_search()
        return page

    def _fill_models(self) -> None:
        self.models_list.clear()
        try:
            entries = list(catalog_mod.load_catalog())
        except ArxiuError as error:
            self.models_list.addItem(f"{error.code}: {error_text(error)}")
            return
        for entry in entries:
            badge = self.tr("local / private") if entry.egress == "local" else self.tr("external")
            item = QListWidgetItem(f"{entry.label}  ·  {badge}  ·  {entry.id}")
            item.setData(MODEL_ROLE, entry.id)
            self.models_list.addItem(item)

    def _languages_row(self, page: QWidget) -> QHBoxLayout:
        """The languages the selected model writes: shown, and editable (ISO codes)."""
        self.languages = QLineEdit(page)
        self.languages.setPlaceholderText(self.tr("every language"))
        self.languages_button = QPushButton(self.tr("Set languages"), page)
        self.languages_button.clicked.connect(self.set_languages)
        self.models_list.currentItemChanged.connect(lambda *_: self._show_languages())
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("Languages it writes (en, ca, es…):"), page))
        row.addWidget(self.languages, 1)
        row.addWidget(self.languages_button)
        return row

    def _selected_entry(self) -> catalog_mod.ModelEntry | None:
        item = self.models_list.currentItem()
        model_id = item.data(MODEL_ROLE) if item is not None else None
        try:
            return catalog_mod.load_catalog().get(str(model_id)) if model_id else None
        except ArxiuError:
            return None

    def _show_languages(self) -> None:
        entry = self._selected_entry()
        known = entry_languages(entry) if entry is not None else None
        self.languages.setText(", ".join(sorted(known)) if known else "")

    def set_languages(self) -> None:
        """Declare the languages the selected model writes (empty: its family's)."""
        entry = self._selected_entry()
        if entry is None:
            return
        codes = [code for code in re.split(r"[\s,;]+", self.languages.text().lower()) if code]
        try:
            catalog_mod.set_languages(entry.id, codes)
        except ArxiuError as error:
            QMessageBox.warning(
                self, self.tr("Languages not set"), error_text(error, paragraphs=True)
            )
            return
        from app.ui.discovered_models import forget_catalog

        forget_catalog(self.services)  # the session rereads the catalog
        self._show_languages()

    def _sections_list(self, page: QWidget, flag: str) -> QListWidget:
        box = QListWidget(page)
        archive = self.services.archive
        for section in archive.sections():
            item = QListWidgetItem(f"{section.label(self.services.lang)} ({section.tipo})")
            item.setData(TIPO_ROLE, section.tipo)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = getattr(section, flag)
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            box.addItem(item)
        return box

    def _privacy_tab(self) -> QWidget:
        page = QWidget(self)
        self.external_content = QCheckBox(
            self.tr("Let external models read record content (never restricted records)"), page
        )
        self.external_content.setChecked(bool(self.services.settings.get("external_content")))
        self.restricted = self._sections_list(page, "restricted")
        layout = QVBoxLayout(page)
        layout.addWidget(self.external_content)
        layout.addWidget(QLabel(self.tr("Restricted sections (never sent to external models):")))
        layout.addWidget(self.restricted, 1)
        return page

    def _write_tab(self) -> QWidget:
        page = QWidget(self)
        self.write_mode = QCheckBox(
            self.tr("Let the assistant propose changes in this archive (write mode)"), page
        )
        self.write_mode.setToolTip(
            self.tr("Off for a new archive. Every change is still a plan you confirm.")
        )
        self.write_mode.setChecked(
            self.services.settings.get("write_mode") is not False
            and writes_allowed(self.services.archive)
        )
        self.writable = self._sections_list(page, "writable")
        layout = QVBoxLayout(page)
        layout.addWidget(self.write_mode)
        layout.addWidget(QLabel(self.tr("Sections open to proposed changes:")))
        layout.addWidget(self.writable, 1)
        return page

    def _general_tab(self) -> QWidget:
        page = QWidget(self)
        current_model = self.services.archive.meta(MODEL_SETTING) or ""
        self.index_model = QLineEdit(current_model, page)
        self.index_model.setPlaceholderText(self.tr("the bundled all-MiniLM-L6-v2"))
        self.index_model.setToolTip(
            self.tr("A sentence-transformers model folder; used when the index is next opened.")
        )
        self.language = QComboBox(page)
        for code, name in LANGUAGES.items():
            self.language.addItem(name, code)
        current = self.services.settings.get("language")
        if current in LANGUAGES:
            self.language.setCurrentIndex(self.language.findData(current))
        form = QFormLayout(page)
        form.addRow(self.tr("Embedding model (after a restart):"), self.index_model)
        form.addRow(self.tr("Language (after a restart):"), self.language)
        form.addRow(QLabel(self.tr("Light or dark appearance follows the system.")))
        return page

    # -- model actions ---------------------------------------------------------------------------
    def _add(self, entry: dict[str, Any]) -> bool:
        try:
            catalog_mod.add_entry(entry)
        except ArxiuError as error:
            QMessageBox.warning(
                self, self.tr("Model not added"), error_text(error, paragraphs=True)
            )
            return False
        from app.ui.discovered_models import forget_catalog

        forget_catalog(self.services)  # the picker offers the new model after OK
        self._fill_models()
        return True

    def _add_gguf(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, self.tr("GGUF model"), "", "GGUF (*.gguf)")
        if name:
            stem = name.rsplit("/", 1)[-1].removesuffix(".gguf")
            self._add(
                {
                    "id": model_id_from(stem),
                    "label": f"{stem} (local)",
                    "provider": "local",
                    "gguf": name,
                }
            )

    def _add_endpoint(self) -> None:
        from app.ui.model_forms import EndpointDialog

        dialog = EndpointDialog(self)
        if dialog.exec():
            self._add(dialog.entry())

    def _add_anthropic(self) -> None:
        from app.ui.model_forms import AnthropicDialog

        dialog = AnthropicDialog(self)
        if dialog.exec() and self._add(dialog.entry()):
            dialog.store_key()

    # -- testing ---------------------------------------------------------------------------------
    def test_selected(self) -> None:
        """Stream a short reply from the selected model and show tokens/s or the error."""
        item = self.models_list.currentItem()
        model_id = item.data(MODEL_ROLE) if item is not None else None
        if not model_id:
            self.test_result.setText(self.tr("Choose a model in the list first."))
            return
        self.test_result.setText(self.tr("Testing {id}…").format(id=model_id))
        self.test_button.setEnabled(False)
        self.tasks.start(self._test(str(model_id)), name="test-model")

    async def _test(self, model_id: str) -> None:
        from app.ui.model_check import check_model

        try:
            ok, text = await check_model(self.services, model_id)
        finally:
            self.test_button.setEnabled(True)
        self.test_result.setObjectName("testOk" if ok else "testFailed")
        self.test_result.setText(text)
        self.model_tested.emit(ok, text)

    # -- saving ----------------------------------------------------------------------------------
    def save(self) -> None:
        """Write the settings and the sections' flags, apply them to the session, then close."""
        settings = self.services.settings
        settings.set("external_content", self.external_content.isChecked())
        settings.set("write_mode", self.write_mode.isChecked())
        set_writes_allowed(self.services.archive, self.write_mode.isChecked())
        settings.set("language", self.language.currentData())
        self.services.archive.set_meta(MODEL_SETTING, self.index_model.text().strip())
        self._save_flags(self.restricted, "restricted")
        self._save_flags(self.writable, "writable")
        self._apply_live()
        self.accept()

    def _apply_live(self) -> None:
        """Write mode and external content reach the running session without a restart."""
        self.services.apply_settings()

    def done(self, result: int) -> None:
        """Closing also cancels a model test still running."""
        self.tasks.cancel_all()
        super().done(result)

    def _save_flags(self, box: QListWidget, flag: str) -> None:
        archive = self.services.archive
        for row in range(box.count()):
            item = box.item(row)
            section = archive.section(str(item.data(TIPO_ROLE)))
            wanted = item.checkState() == Qt.CheckState.Checked
            if getattr(section, flag) != wanted:
                if flag == "restricted":
                    archive.put_section(dataclasses.replace(section, restricted=wanted))
                else:
                    archive.put_section(dataclasses.replace(section, writable=wanted))
