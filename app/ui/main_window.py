"""The main window: sections · records · record view, the search box, the assistant dock."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QLocale, QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QTableView,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.archive import RecordKey
from app.core.archive.hierarchy import subtree
from app.core.counted import Counted
from app.core.errors import ArxiuError
from app.core.index.chunk_context import SEPARATOR
from app.core.index.hits import SearchFilter
from app.core.index.record_hits import RecordHit, search_records
from app.ui.assistant.panel import AssistantPanel
from app.ui.browser.empty_archive import EmptyArchiveHint
from app.ui.browser.pane_widths import keep_record_width
from app.ui.browser.record_view import RecordView
from app.ui.browser.records_model import RecordsTableModel
from app.ui.browser.search_results import SearchResultsView
from app.ui.browser.sections_view import SectionsView
from app.ui.i18n import error_text
from app.ui.index_status import IndexStatusWidget
from app.ui.services import Services
from app.ui.shared_changes import SharedChanges
from app.ui.tasks import TaskGroup

if TYPE_CHECKING:
    from app.core.archive.importers import ImportSummary
    from app.ui.export_dialog import ExportChoice
    from app.ui.import_dialog import ImportChoice
    from app.ui.shared_archive_dialog import SharedArchiveChoice

log = logging.getLogger(__name__)

SEARCH_RESULTS = 50
"""Records a search lists (each once; sorted and filtered in the results pane)."""
COLUMN_MAX = 120
"""The widest a column other than the title may open (pixels); the title stretches."""
COLUMN_MIN = 48
"""The narrowest a column other than the title is made to give way to it (pixels)."""
TITLE_SHARE = 0.4
"""The share of the records table's width kept for the title column."""
SECTIONS_WIDTH = 220
"""The sections pane's width as the window opens (pixels)."""
DOCK_WIDTH = 440
"""The assistant dock's width in a window wide enough for it (pixels)."""
DOCK_SHARE = 0.4
"""In a narrower window the dock keeps at most this share of it (an 800-pixel window left the
record view about 200 pixels beside a 440-pixel dock)."""
MODELS_OFFERED = "models_offered"
"""Settings key: the first-start offer of the models found on this computer was made."""
SECTION_RECORDS = Counted("1 record", "{n} records")
"""The status bar's count of the section shown, in the form that agrees with it."""
TOP_RECORDS = Counted(
    "1 top-level record ({total} in all)", "{n} top-level records ({total} in all)"
)
"""The status bar's count of a hierarchy listed by its top-level records."""
SCOPE_CHARS = 48
"""The most characters of a searched record's title the search bar's scope button shows."""


class MainWindow(QMainWindow):
    """The archive browser with the assistant panel docked on the right.

    Signals:
        archive_chosen: (archive, notice) an :class:`~app.core.archive.Archive` opened by File
            → New/Open archive… or Open shared archive… to switch to (the window host swaps
            windows), and a sentence the new window shows in a message box ("" for none).
        refreshed: what the window shows was read again after the archive changed, and shown.
    """

    archive_chosen = Signal(object, str)
    """An :class:`~app.core.archive.Archive` opened by File → New/Open archive… to switch to,
    and a sentence for the new window ("" for none)."""
    refreshed = Signal()
    """What the window shows was read again after the archive changed (:meth:`refresh`)."""

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.tasks = TaskGroup(self)
        archive = services.archive
        self.setWindowTitle(self._title())
        self.sections = SectionsView(archive, services.lang, self)
        self.records_model = RecordsTableModel(archive, services.lang, self)
        self.table = self._make_table()
        self.results = SearchResultsView(self)
        self.empty_hint = EmptyArchiveHint(self)
        self.record_view = RecordView(archive, services.lang, self)
        self.tops_box = QCheckBox(self.tr("Top-level descriptions only"), self)
        self.tops_box.setObjectName("topsOnly")
        self.tops_box.setToolTip(
            self.tr("List each fonds alone; its series, files and items are under it")
        )
        self.tops_box.setChecked(self.records_model.tops_only)
        self.tops_box.setVisible(False)
        self.search_box = QLineEdit(self)
        self.scope_button = QToolButton(self)
        self.search_scope: RecordKey | None = None
        """The record searched within (with everything under it); ``None``: the archive."""
        self.assistant = AssistantPanel(services, self)
        self.index_status = IndexStatusWidget(services, self)
        self.import_report: QMessageBox | None = None
        self.import_dialog: QDialog | None = None
        self.last_import: ImportSummary | None = None
        self.export_dialog: QDialog | None = None
        self.export_report: QMessageBox | None = None
        self.settings_dialog: QDialog | None = None
        self.discovered_dialog: QDialog | None = None
        self.archive_error: QMessageBox | None = None
        self.shared_dialog: QDialog | None = None
        self.shared_changes = SharedChanges(services, self) if archive.shared else None
        """The record changes other people commit (a shared archive's window only)."""
        self._rereading = False
        self._changes_waiting = False
        self._marking = False
        """A row is being selected for the record already shown (:meth:`_mark_row`)."""
        self._dock_narrowed = False
        """The dock was narrowed for a small window (:meth:`resizeEvent`)."""
        self._build_layout()
        self._build_menus()
        self._connect()
        self._select_first_section()

    # -- construction ----------------------------------------------------------------------------
    def _title(self) -> str:
        archive = self.services.archive
        name = archive.meta("name") or archive.folder.name
        if not archive.shared:
            return self.tr("Arxiu — {name}").format(name=name)
        from app.core.archive.postgres.credentials import account

        where = account(archive.location) or archive.folder.name
        return self.tr("Arxiu — {name} (shared: {where})").format(name=name, where=where)

    def _make_table(self) -> QTableView:
        table = QTableView(self)
        table.setModel(self.records_model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(26)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setResizeContentsPrecision(40)
        header.setMinimumSectionSize(40)
        return table

    def _build_layout(self) -> None:
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.results)
        self.stack.addWidget(self.empty_hint)
        left = _titled(self.tr("Sections"), self.sections, self)
        middle = _titled(self.tr("Records"), self.stack, self, self.tops_box)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(middle)
        self.splitter.addWidget(self.record_view)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([SECTIONS_WIDTH, 560, 460])
        self.record_width = keep_record_width(self.splitter, SECTIONS_WIDTH)
        self.setCentralWidget(self.splitter)
        toolbar = QToolBar(self.tr("Search"), self)
        toolbar.setObjectName("searchBar")
        toolbar.setMovable(False)
        self.search_box.setObjectName("searchBox")
        self.search_box.setPlaceholderText(self._archive_placeholder())
        self.search_box.setClearButtonEnabled(True)
        self.scope_button.setObjectName("searchScope")
        self.scope_button.setToolTip(self.tr("Search the whole archive again"))
        self.scope_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.scope_action = toolbar.addWidget(self.scope_button)
        self.scope_action.setVisible(False)
        toolbar.addWidget(self.search_box)
        self.addToolBar(toolbar)
        dock = QDockWidget(self.tr("Assistant"), self)
        dock.setObjectName("assistantDock")
        dock.setWidget(self.assistant)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.assistant_dock = dock
        self.statusBar().addPermanentWidget(self.index_status)
        self.resize(1500, 900)
        self.resizeDocks([dock], [DOCK_WIDTH], Qt.Orientation.Horizontal)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu(self.tr("&File"))
        new_archive = QAction(self.tr("&New archive…"), self)
        new_archive.setShortcut(QKeySequence.StandardKey.New)
        new_archive.triggered.connect(lambda: self.choose_archive(new=True))
        file_menu.addAction(new_archive)
        open_archive = QAction(self.tr("&Open archive…"), self)
        open_archive.setShortcut(QKeySequence.StandardKey.Open)
        open_archive.triggered.connect(lambda: self.choose_archive(new=False))
        file_menu.addAction(open_archive)
        open_shared = QAction(self.tr("Open &shared archive…"), self)
        open_shared.triggered.connect(lambda: self.choose_shared_archive())
        file_menu.addAction(open_shared)
        file_menu.addSeparator()
        import_action = QAction(self.tr("&Import…"), self)
        import_action.triggered.connect(self.choose_import)
        file_menu.addAction(import_action)
        export_action = QAction(self.tr("&Export…"), self)
        export_action.triggered.connect(self.choose_export)
        file_menu.addAction(export_action)
        settings = QAction(self.tr("&Settings…"), self)
        settings.setShortcut(QKeySequence.StandardKey.Preferences)
        settings.triggered.connect(self.open_settings)
        file_menu.addAction(settings)
        file_menu.addSeparator()
        quit_action = QAction(self.tr("&Quit"), self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view_menu = self.menuBar().addMenu(self.tr("&View"))
        view_menu.addAction(self.assistant_dock.toggleViewAction())
        conversations = QAction(self.tr("&Conversations"), self)
        conversations.triggered.connect(self.assistant.show_conversations)
        view_menu.addAction(conversations)
        find = QAction(self.tr("&Search the archive"), self)
        find.setShortcuts([QKeySequence(QKeySequence.StandardKey.Find), QKeySequence("Ctrl+L")])
        find.triggered.connect(self.focus_search)
        view_menu.addAction(find)

    def _connect(self) -> None:
        self.sections.section_selected.connect(self.show_section)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.record_view.record_requested.connect(self.open_record)
        self.record_view.ask_requested.connect(self.assistant.ask_about)
        self.record_view.search_within_requested.connect(self.search_within)
        self.tops_box.toggled.connect(self.list_tops_only)
        self.stack.currentChanged.connect(lambda _index: self._show_tops_box())
        self.scope_button.clicked.connect(self.search_everywhere)
        self.record_view.notice.connect(self.show_notice)
        self.results.record_requested.connect(self.open_record)
        self.empty_hint.import_requested.connect(self.choose_import)
        self.results.closed.connect(lambda: self.stack.setCurrentWidget(self.table))
        self.search_box.returnPressed.connect(self._on_search)
        self.assistant.record_requested.connect(self.open_record)
        self.assistant.archive_changed.connect(self.refresh)
        self.assistant.notice.connect(self.show_notice)
        self.index_status.notice.connect(self.show_notice)
        if self.shared_changes is not None:
            self.shared_changes.changed.connect(self._shared_changed)

    def _select_first_section(self) -> None:
        if self.sections.count():
            self.sections.setCurrentRow(0)
        self._show_if_empty()

    def _show_if_empty(self) -> None:
        """An archive with no sections shows the hint to import; its first import, the table."""
        empty = self.sections.count() == 0
        if empty:
            self.stack.setCurrentWidget(self.empty_hint)
        elif self.stack.currentWidget() is self.empty_hint:
            self.stack.setCurrentWidget(self.table)
            self._select_first_section()

    # -- actions ---------------------------------------------------------------------------------
    def show_section(self, tipo: str) -> None:
        """Show the records of section ``tipo`` (a hierarchy's top-level records alone while
        "Top-level descriptions only" is ticked)."""
        self.stack.setCurrentWidget(self.table)
        if self.records_model.section_tipo != tipo:
            self.records_model.set_section(tipo)
            self._size_columns()
        self._show_tops_box()
        self.statusBar().showMessage(self._records_count(), 4000)

    def list_tops_only(self, tops_only: bool) -> None:
        """List a hierarchy by its top-level records (each fonds) or every record."""
        self.records_model.set_tops_only(tops_only)
        self._size_columns()
        key = self.record_view.key
        if key is not None and key.section_tipo == self.records_model.section_tipo:
            self._select_row(key)
        self.statusBar().showMessage(self._records_count(), 4000)

    def _records_count(self) -> str:
        """The status bar's count of what the table lists: the section's records, or its
        top-level records among them."""
        model, locale = self.records_model, QLocale()
        total = model.total()
        if not model.listing_tops or model.section_tipo is None:
            return self.tr(SECTION_RECORDS.template(total)).format(n=locale.toString(total))
        every = self.services.archive.count_records(model.section_tipo)
        return self.tr(TOP_RECORDS.template(total)).format(
            n=locale.toString(total), total=locale.toString(every)
        )

    def _show_tops_box(self) -> None:
        """The "Top-level descriptions only" box shows over a hierarchy's table."""
        table = self.stack.currentWidget() is self.table
        self.tops_box.setVisible(table and self.records_model.hierarchy)

    def _size_columns(self) -> None:
        """The title column takes the room left; the others fit their contents, within limits,
        and together leave the title at least :data:`TITLE_SHARE` of the table's width."""
        header = self.table.horizontalHeader()
        columns = self.records_model.columnCount()
        for column in range(columns):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.resizeColumnToContents(column)
            most = 64 if column == 0 else COLUMN_MAX
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), most))
        others = range(2, columns)
        room = self.table.viewport().width() * (1 - TITLE_SHARE) - self.table.columnWidth(0)
        wide = sum(self.table.columnWidth(column) for column in others)
        if wide > room > 0:  # a narrow pane: the other columns give way to the title
            for column in others:
                share = int(self.table.columnWidth(column) * room / wide)
                self.table.setColumnWidth(column, max(share, COLUMN_MIN))
        if columns > 1:
            header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

    def open_record(self, key: RecordKey, timecode: str = "") -> None:
        """Show ``key`` (selecting its section and row) and play from ``timecode`` if given."""
        if not self.services.archive.has_section(key.section_tipo):
            self.show_notice(self.tr("{key} is not in this archive.").format(key=key))
            return
        searching = self.stack.currentWidget() is self.results
        self.sections.select_tipo(key.section_tipo, notify=False)
        self.show_section(key.section_tipo)
        self._select_row(key)
        if searching:  # the results stay listed beside the record opened from them
            self.stack.setCurrentWidget(self.results)
        self.record_view.show_record(key, timecode or None)

    def _select_row(self, key: RecordKey) -> None:
        model = self.records_model
        row = model.row_of(key)
        while row is None and model.canFetchMore(QModelIndex()) and model.rowCount() < 5000:
            model.fetchMore(QModelIndex())
            row = model.row_of(key)
        if row is not None:
            self._mark_row(row)
            self.table.scrollTo(model.index(row, 0))
        else:  # not listed (a unit under a fonds listed alone): no other row stays selected
            self._marking = True
            try:
                self.table.selectionModel().clear()
            finally:
                self._marking = False

    def _mark_row(self, row: int) -> None:
        """Select ``row`` without opening its record again.

        The selection model's signals are left flowing (the table repaints the rows they name:
        with them blocked, the row shown before stayed highlighted on screen); only
        :meth:`_on_row` ignores the change.
        """
        self._marking = True
        try:
            self.table.selectRow(row)
        finally:
            self._marking = False

    def refresh(self) -> None:
        """Read again everything shown (the archive changed: a plan was applied, the settings
        were saved), on a read thread; ``refreshed`` says when it is shown."""
        self.tasks.start(self.reload_shown(), name="refresh")

    async def reload_shown(self) -> None:
        """Read the sections, the rows listed and the record open again in one read on a read
        thread, then show them together where they were (a part the person has moved on from
        meanwhile is not shown)."""
        sections = self.sections.rows_reader()
        records = self.records_model.page_reader()
        record = self.record_view.page_reader()
        rows, page, shown = await self.services.read(lambda: (sections(), records(), record()))
        self.sections.show_rows(rows)
        self._show_if_empty()
        if self.records_model.show_page(page):
            self._size_columns()
        self.record_view.show_page(shown)
        key = self.record_view.key
        row = self.records_model.row_of(key) if key is not None else None
        if row is not None and self.table.currentIndex().row() != row:
            self._mark_row(row)
        self.refreshed.emit()

    def show_notice(self, text: str) -> None:
        """A sentence in the status bar."""
        self.statusBar().showMessage(text, 8000)

    def open_settings(self) -> None:
        """Open the settings dialog."""
        from app.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.services, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(self._settings_saved)
        dialog.open()  # not exec(): the asyncio loop keeps running (a model test streams)
        self.settings_dialog = dialog

    def _settings_saved(self) -> None:
        self.assistant.reload_models()
        self.refresh()

    def choose_archive(self, *, new: bool) -> None:
        """Ask for a folder and switch to its archive (``new``: create an empty one there)."""
        from app.ui.archive_switch import ask_folder

        folder = ask_folder(self, new=new, start=self.services.archive.folder.parent)
        if folder is not None:
            self.switch_archive(folder, create=new)

    def switch_archive(self, folder: Path, *, create: bool) -> bool:
        """Open (``create``: make) the archive in ``folder`` and ask the host to switch to it."""
        from app.ui.archive_switch import open_chosen

        try:
            archive = open_chosen(folder, create=create)
        except ArxiuError as error:
            self.show_warning(error_text(error, paragraphs=True))
            return False
        self.archive_chosen.emit(archive, "")
        return True

    def choose_shared_archive(
        self, url: str = "", problem: ArxiuError | None = None, *, at_start: bool = False
    ) -> QDialog:
        """File → Open shared archive…: ask for the server, database and login (``url``: the
        fields filled from it; ``problem``: why it did not open before, ``at_start``: when
        the app started), then switch to it."""
        import getpass

        from app.ui.shared_archive_dialog import SharedArchiveDialog

        dialog = SharedArchiveDialog(self, user=getpass.getuser())
        if url:
            dialog.prefill(url)
        if problem is not None:
            lead = (
                self.tr("The shared archive opened last did not open; this is the demo archive.")
                if at_start
                else self.tr("The shared archive did not open.")
            )
            dialog.show_problem(f"{lead}\n\n{error_text(problem, paragraphs=True)}")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._shared_chosen(dialog.choice()))
        dialog.open()  # not exec(): the loop keeps running
        self.shared_dialog = dialog
        return dialog

    def _shared_chosen(self, choice: SharedArchiveChoice) -> None:
        self.tasks.start(self.open_shared(choice), name="open-shared")

    async def open_shared(self, choice: SharedArchiveChoice) -> bool:
        """Connect to the shared archive chosen (off the GUI thread) and ask the host to
        switch to it; a refusal is said in a message box, and the dialog is offered again."""
        from app.ui.archive_switch import open_shared

        self.show_notice(self.tr("Connecting to {url}…").format(url=choice.url))
        try:
            archive, keyring_error = await self.services.run_blocking(lambda: open_shared(choice))
        except ArxiuError as error:
            self.statusBar().clearMessage()
            self.choose_shared_archive(choice.url, error)
            return False
        notice = ""
        if keyring_error is not None:  # said by the new window: this one closes
            said = self.tr("The password could not be remembered: it is used until Arxiu closes.")
            notice = f"{said}\n\n{error_text(keyring_error, paragraphs=True)}"
        self.archive_chosen.emit(archive, notice)
        return True

    def show_warning(self, text: str) -> QMessageBox:
        """Say ``text`` in a warning box (kept in :attr:`archive_error`)."""
        box = QMessageBox(QMessageBox.Icon.Warning, self.tr("Archive"), text, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not exec(): the loop keeps running
        self.archive_error = box
        return box

    def _shared_changed(self, _changes: object) -> None:
        """Someone committed a change to the shared archive: read what is shown again (once
        more after the read in flight, if changes keep coming)."""
        if self._rereading:
            self._changes_waiting = True
            return
        self.tasks.start(self._reread_for_changes(), name="shared-changes")

    async def _reread_for_changes(self) -> None:
        self._rereading = True
        try:
            while True:
                self._changes_waiting = False
                await self.reload_shown()
                if not self._changes_waiting:
                    return
        finally:
            self._rereading = False

    def choose_import(self) -> QDialog:
        """Ask for a format and its source (a table's mapping too), then import it."""
        from app.ui.import_dialog import ImportChoiceDialog

        dialog = ImportChoiceDialog(self, self.services.archive)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._import_chosen(dialog.chosen))
        dialog.open()  # not exec(): the loop keeps running
        self.import_dialog = dialog
        return dialog

    def _import_chosen(self, choice: object) -> None:
        from app.ui.import_dialog import ImportChoice

        if isinstance(choice, ImportChoice):
            self.tasks.start(self.import_choice(choice), name="import")

    async def import_dataset(self, kind: str, path: Path | str) -> str:
        """Import ``path`` as ``kind`` with a progress dialog, then show what it did."""
        from app.ui.import_dialog import ImportChoice

        return await self.import_choice(ImportChoice(kind, str(path)))

    async def import_choice(self, choice: ImportChoice) -> str:
        """Import what the dialog chose with a progress dialog, then show what it did; the
        new sections appear in the sections list, searchable at once (lexical)."""
        from app.ui.import_dialog import import_with_progress
        from app.ui.importing.summary import summary_notice

        text, summary = await import_with_progress(self, self.services, choice)
        if summary is not None:
            await self.reload_shown()
        first = text.splitlines()[0] if text else text
        self.show_notice(summary_notice(summary) if summary is not None else first)
        box = QMessageBox(QMessageBox.Icon.Information, self.tr("Import"), text, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not exec(): the loop keeps running
        self.import_report = box
        self.last_import = summary
        return text

    def choose_export(self) -> QDialog:
        """Ask what to export (the selected record's subtree offered), then export it."""
        from app.ui.export_dialog import ExportDialog

        dialog = ExportDialog(
            self.services.archive, self.services.lang, self.record_view.key, parent=self
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._export_chosen(dialog.choice()))
        dialog.open()  # not exec(): the loop keeps running
        self.export_dialog = dialog
        return dialog

    def _export_chosen(self, choice: ExportChoice | None) -> None:
        if choice is not None:
            self.tasks.start(self.export(choice), name="export")

    async def export(self, choice: ExportChoice) -> str:
        """Export on the worker thread, then show the real summary."""
        from app.ui.export_dialog import export_records, export_text

        try:
            summary = await export_records(self.services, choice)
            text = export_text(summary)
        except ArxiuError as error:
            text = error_text(error)
        self.show_notice(text)
        box = QMessageBox(QMessageBox.Icon.Information, self.tr("Export"), text, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not exec(): the loop keeps running
        self.export_report = box
        return text

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._marking:
            return
        record = self.records_model.record_at(current.row())
        if record is not None:
            self.record_view.show_record(record.key)

    def _on_search(self) -> None:
        query = self.search_box.text().strip()
        if query:
            self.tasks.start(self.search(query), name="search")

    async def search(self, query: str) -> None:
        """Run the hybrid search for ``query`` (within :attr:`search_scope` when one is set)
        and show the hits."""
        self.stack.setCurrentWidget(self.results)
        self.results.show_message(self.tr("Searching…"))
        scope, within = self.search_scope, self.scope_label()
        try:
            index = await self.services.index()
            if index is None:
                self.results.show_message(self.tr("Search is not available: no index service."))
                return
            archive, lang = self.services.archive, self.services.lang

            def find() -> list[RecordHit]:
                if scope is None:
                    return search_records(index, archive, query, k=SEARCH_RESULTS, lang=lang)
                # a scope deleted since keeps its own key, which matches nothing
                where = SearchFilter(records=subtree(archive, scope) or (scope,))
                hits = search_records(
                    index, archive, query, k=SEARCH_RESULTS, filter=where, lang=lang
                )
                top = archive.record_label(scope, lang)  # the heading says it: not each row
                return [_under(h, top) for h in hits]

            hits = await self.services.read(find)
        except ArxiuError as error:
            self.results.show_message(error_text(error))
            return
        self.results.show_hits(query, hits, within)

    def search_within(self, key: RecordKey) -> None:
        """Search ``key`` and every record under it from now on (a fonds, a series): the
        search bar names it, and a query already typed is searched there at once."""
        self.search_scope = key
        label = self.scope_label()
        self.scope_button.setText(self.tr("Within: {record}").format(record=label) + "  ✕")
        self.scope_action.setVisible(True)
        self.search_box.setPlaceholderText(self.tr("Search within {record}").format(record=label))
        self.focus_search()
        self._on_search()

    def search_everywhere(self) -> None:
        """Search the whole archive again (the scope button's ✕); a query shown in the
        results is searched again everywhere."""
        self.search_scope = None
        self.scope_action.setVisible(False)
        self.search_box.setPlaceholderText(self._archive_placeholder())
        if self.stack.currentWidget() is self.results:
            self._on_search()

    def scope_label(self) -> str:
        """The title of the record searched within, shortened ("" when none)."""
        if self.search_scope is None:
            return ""
        label = self.services.archive.record_label(self.search_scope, self.services.lang)
        return label if len(label) <= SCOPE_CHARS else label[: SCOPE_CHARS - 1] + "…"

    def _archive_placeholder(self) -> str:
        return self.tr(
            "Search the archive by meaning — e.g. families who left when the valley flooded"
        )

    def focus_search(self) -> None:
        """Put the cursor in the search box, its text selected (Ctrl+F, Ctrl+L)."""
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def start_background(self) -> None:
        """After the window is shown: load the models, bring the index up to date."""
        self.assistant.start()
        self.index_status.start()
        if self.shared_changes is not None:
            self.shared_changes.start()
        if not self.services.settings.get(MODELS_OFFERED):
            self.services.settings.set(MODELS_OFFERED, True)
            self.tasks.start(self.offer_discovered_models(), name="discover-models")

    async def offer_discovered_models(self) -> QDialog | None:
        """First start: offer the models already on this computer (if any can be used)."""
        from app.ui.discovered_models import DiscoveredModelsDialog, search_computer

        result = await search_computer(self.services)
        if not any(found.fit != "refused" for found in result.models):
            return None
        dialog = DiscoveredModelsDialog(self.services, result, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.box.model_added.connect(lambda _id: self.assistant.reload_models())
        dialog.open()  # not exec(): the loop keeps running
        self.discovered_dialog = dialog
        return dialog

    # -- state -----------------------------------------------------------------------------------
    def is_busy(self) -> bool:
        """Whether a run, a search or another task is still going."""
        return self.assistant.is_busy() or self.tasks.busy()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A narrow window gives the assistant dock at most :data:`DOCK_SHARE` of its width
        (down to what the dock needs), so the record view keeps room beside it; grown again,
        the window gives the dock its width back."""
        super().resizeEvent(event)
        dock = self.assistant_dock
        if not dock.isVisible() or dock.isFloating():
            return
        most = max(int(self.width() * DOCK_SHARE), dock.minimumSizeHint().width())
        if dock.width() > most:
            self._dock_narrowed = True
            self.resizeDocks([dock], [most], Qt.Orientation.Horizontal)
        elif self._dock_narrowed and dock.width() < min(most, DOCK_WIDTH):
            self._dock_narrowed = most < DOCK_WIDTH
            self.resizeDocks([dock], [min(most, DOCK_WIDTH)], Qt.Orientation.Horizontal)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop runs and timers before the window goes."""
        self.assistant.shutdown()
        self.index_status.shutdown()
        if self.shared_changes is not None:
            self.shared_changes.stop()
        self.tasks.cancel_all()
        self.statusBar().clearMessage()  # also stops the message's timeout timer
        super().closeEvent(event)

    async def aclose(self) -> None:
        """Wait for cancelled tasks to finish."""
        await self.assistant.aclose()
        await self.tasks.wait()
        if self.shared_changes is not None:
            await self.shared_changes.wait()
        await asyncio.sleep(0)


def _under(hit: RecordHit, scope: str) -> RecordHit:
    """A hit of a search within ``scope`` (its label) without what the heading says: the top
    it is in, when that is the scope, and the record it is part of, when that is the scope."""
    within = None if hit.within == scope else hit.within
    path = hit.path
    if path is not None and (path == scope or path.endswith(f"{SEPARATOR}{scope}")):
        path = None
    return replace(hit, within=within, path=path)


def _titled(title: str, body: QWidget, parent: QWidget, extra: QWidget | None = None) -> QWidget:
    """``body`` under a pane title (with ``extra`` at the title's right)."""
    box = QWidget(parent)
    label = QLabel(title, box)
    label.setObjectName("paneTitle")
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    if extra is None:
        layout.addWidget(label)
    else:
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 6, 0)
        row.addWidget(label, 1)
        row.addWidget(extra)
        layout.addLayout(row)
    layout.addWidget(body, 1)
    return box
