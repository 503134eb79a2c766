"""“Found on this computer”: GGUF files of other apps and local servers, one click to add.

The list shows each model's name, source app, size, quantisation, context length, tool
support and whether it fits in the memory available now. The search runs off the GUI thread
(:func:`app.core.models.discovery.discover`); a model added here is always ``egress: local``.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core import paths
from app.core.counted import Counted
from app.core.errors import ArxiuError
from app.core.models import catalog as catalog_mod
from app.core.models import discovery
from app.core.models.discovery_roots import SETTINGS_KEY, check_folder
from app.core.models.discovery_servers import KNOWN_SERVERS, ServerSpec
from app.ui.gui_thread import run_released
from app.ui.i18n import InstalledTranslations, error_text
from app.ui.services import Services
from app.ui.style import DANGER_COLOR, EXTERNAL_COLOR, LOCAL_COLOR
from app.ui.tasks import TaskGroup

SERVERS: tuple[ServerSpec, ...] = KNOWN_SERVERS
"""The loopback servers asked (tests replace them)."""
COLUMNS = 8
ADD_COLUMN = 7
_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arxiu-discovery")
FOUND = Counted("1 model found in {s} s.", "{n} models found in {s} s.")
REFUSED = Counted("1 file could not be used.", "{n} files could not be used.")
"""What a search for models found, each count in the form that agrees with it."""
FIT_COLORS = {
    "fits": LOCAL_COLOR,
    "tight": EXTERNAL_COLOR,
    "over": DANGER_COLOR,
    "refused": DANGER_COLOR,
}


def forget_catalog(services: Services) -> None:
    """Make the running session re-read ``models.json`` (a model was added)."""
    session = services.session_now
    if session is not None:
        session.reload_catalog()


def saved_folders(services: Services) -> list[Path]:
    """The folders added in Settings."""
    saved = services.settings.get(SETTINGS_KEY) or []
    return [Path(str(item)) for item in saved if isinstance(item, str)]


async def search_computer(services: Services) -> discovery.Discovery:
    """Run the discovery (saved folders, :data:`SERVERS`) off the GUI thread."""
    folders, servers = saved_folders(services), SERVERS
    loop = asyncio.get_running_loop()
    return await run_released(
        lambda job: loop.run_in_executor(_EXECUTOR, job),
        lambda: discovery.discover(folders=folders, servers=servers),
    )


def _size(found: discovery.Found) -> str:
    if found.size is None:
        return "—"
    gib = found.size / (1 << 30)
    if gib >= 1:
        return f"{gib:.1f} GB"
    return f"{found.size >> 20} MB" if found.size >= 1 << 20 else "< 1 MB"


class DiscoveredModelsBox(QGroupBox):
    """The list of models found on this computer, each with an Add button.

    Signals:
        model_added: (catalog id) a found model was added to the catalog.
        search_finished: a search of this computer ended and its result is listed.
    """

    model_added = Signal(str)
    search_finished = Signal()

    def __init__(
        self, services: Services, tasks: TaskGroup | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setTitle(self.tr("Found on this computer"))
        self.services = services
        self.tasks = tasks or TaskGroup(self)
        self.result: discovery.Discovery | None = None
        self.table = QTableWidget(0, COLUMNS, self)
        self.table.setObjectName("discoveredTable")
        self.table.setHorizontalHeaderLabels(
            [
                self.tr("Name"),
                self.tr("Source"),
                self.tr("Size"),
                self.tr("Quantisation"),
                self.tr("Context"),
                self.tr("Tools"),
                self.tr("Memory"),
                "",
            ]
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.status = QLabel(
            self.tr("Looks for models of LM Studio, GPT4All, Jan and Ollama."), self
        )
        self.status.setObjectName("discoveryStatus")
        self.status.setWordWrap(True)
        self.search_button = QPushButton(self.tr("Search again"), self)
        self.search_button.clicked.connect(self.start_search)
        self.folder_button = QPushButton(self.tr("Add a folder to search…"), self)
        self.folder_button.clicked.connect(self._choose_folder)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.folder_button)
        row.addWidget(self.search_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)

    # -- searching -------------------------------------------------------------------------------
    def start_search(self) -> None:
        """Search this computer in the background and fill the list."""
        self.search_button.setEnabled(False)
        self.status.setText(self.tr("Searching this computer…"))
        self.tasks.start(self.search(), name="discover-models")

    async def search(self) -> discovery.Discovery:
        """Run the discovery off the GUI thread; show and return what it found."""
        result = await search_computer(self.services)  # cancelled: the widget may be gone
        self.search_button.setEnabled(True)
        self.show_result(result)
        self.search_finished.emit()
        return result

    def show_result(self, result: discovery.Discovery) -> None:
        """Fill the list from ``result``."""
        self.result = result
        self.table.setRowCount(0)
        added = self._catalog_sources()
        for number, found in enumerate(result.models):
            self._add_row(number, found, added)
        if result.models:
            listed = len(result.models)
            text = self.tr(FOUND.template(listed)).format(n=listed, s=f"{result.elapsed_s:.1f}")
        else:
            text = self.tr("No models found. Add a folder that holds .gguf files.")
        if result.refused:
            refused = len(result.refused)
            text += " " + self.tr(REFUSED.template(refused)).format(n=refused)
        self.status.setText(text)
        self.status.setToolTip(
            "\n".join(
                f"{r.path}: {r.code} — {r.message_in(InstalledTranslations())}"
                for r in result.refused
            )
        )

    def _catalog_sources(self) -> set[str]:
        try:
            entries = list(catalog_mod.load_catalog())
        except ArxiuError:
            return set()
        return {e.gguf for e in entries if e.gguf} | {
            f"{e.endpoint}#{e.model}" for e in entries if e.endpoint
        }

    def _add_row(self, number: int, found: discovery.Found, added: set[str]) -> None:
        tools = {True: self.tr("yes"), False: self.tr("no"), None: self.tr("unknown")}
        context = str(found.context_length) if found.context_length else "—"
        cells = [found.name, self.tr(found.source_label), _size(found), found.quantisation or "—"]
        cells += [context, tools[found.supports_tools], self.fit_text(found)]
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(str(found.path or (found.server.endpoint if found.server else "")))
            self.table.setItem(row, column, item)
        fit_item = self.table.item(row, 6)
        if found.fit in FIT_COLORS and fit_item is not None:
            fit_item.setForeground(QColor(FIT_COLORS[found.fit]))
        button = QPushButton(self.tr("Add"), self.table)
        button.setObjectName(f"addDiscovered{number}")
        key = (
            str(found.path)
            if found.path
            else f"{found.server and found.server.endpoint}#{found.name}"
        )
        if key in added:
            button.setText(self.tr("Added"))
            button.setEnabled(False)
        elif found.fit == "refused":
            button.setEnabled(False)
            button.setToolTip(self.tr("Needs more than twice the memory available now."))
        button.clicked.connect(lambda _checked=False, n=number: self.add(n))
        self.table.setCellWidget(row, ADD_COLUMN, button)

    def fit_text(self, found: discovery.Found) -> str:
        """The memory badge: fits, tight, too large… with the figures when known."""
        words = {
            "fits": self.tr("fits"),
            "tight": self.tr("tight fit"),
            "over": self.tr("more than free memory"),
            "refused": self.tr("too large"),
            "server": self.tr("in its server"),
            "unknown": self.tr("unknown"),
        }
        text = words[found.fit]
        if found.memory_needed and found.memory_available:
            text += f" ({found.memory_needed >> 20} / {found.memory_available >> 20} MiB)"
        return text

    # -- adding ----------------------------------------------------------------------------------
    def add(self, number: int) -> str | None:
        """Add found model ``number`` to the catalog; returns its id (``None``: refused)."""
        if self.result is None or not 0 <= number < len(self.result.models):
            return None
        found = self.result.models[number]
        try:
            raw = catalog_mod.read_raw_entries(paths.catalog_file())
            taken = {str(item.get("id")) for item in raw if isinstance(item, dict)}
            entry = discovery.catalog_entry(
                found, discovery.model_id_for(found, taken | {catalog_mod.BUILTIN_ID})
            )
            catalog_mod.add_entry(entry)
        except ArxiuError as error:
            self.status.setText(f"{error.code}: {error_text(error)}")
            return None
        forget_catalog(self.services)
        button = self.table.cellWidget(number, ADD_COLUMN)
        if isinstance(button, QPushButton):
            button.setText(self.tr("Added"))
            button.setEnabled(False)
        self.status.setText(self.tr("Added {name} (local / private).").format(name=found.name))
        self.model_added.emit(str(entry["id"]))
        return str(entry["id"])

    def _choose_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, self.tr("A folder with GGUF models"))
        if name:
            self.add_folder(Path(name))

    def add_folder(self, folder: Path) -> bool:
        """Remember ``folder`` as a place to search, then search again (unreadable: refused)."""
        try:
            check_folder(folder)
        except ArxiuError as error:
            self.status.setText(f"{error.code}: {error_text(error)}")
            return False
        saved = [str(path) for path in saved_folders(self.services)]
        if str(folder) not in saved:
            self.services.settings.set(SETTINGS_KEY, [*saved, str(folder)])
        self.start_search()
        return True


class DiscoveredModelsDialog(QDialog):
    """The first-start offer: the models found, one click to add each."""

    def __init__(
        self, services: Services, result: discovery.Discovery, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Models already on this computer"))
        intro = QLabel(
            self.tr(
                "Arxiu found these models on this computer. Added models run here: nothing "
                "leaves the computer."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.box = DiscoveredModelsBox(services, parent=self)
        self.box.show_result(result)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.box, 1)
        layout.addWidget(buttons)
        self.resize(860, 380)

    def done(self, result: int) -> None:
        """Closing cancels a search still running."""
        self.box.tasks.cancel_all()
        super().done(result)
