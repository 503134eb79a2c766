"""The search box's results: one row per record, grouped by section, sorted and filtered.

Each row shows the record's title, section, date, language badges and the passage that
matched with the query's words marked (:mod:`app.ui.browser.result_rows`); the heading counts
records, not passages, and elides a long query rather than widening the pane
(:class:`~app.ui.browser.elided.ElidedLabel`). Sorting and filtering
(:mod:`app.ui.browser.result_filters`) reorder the records already found, through the core's
:mod:`app.core.index.hit_order`, as ``arxiu search`` does.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QLocale, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListWidget,
    QListWidgetItem,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.core.counted import Counted
from app.core.index.hit_order import by_section, filter_hits, sort_hits
from app.core.index.record_hits import RecordHit
from app.ui.browser.elided import ElidedButton, ElidedLabel
from app.ui.browser.record_view import palette_colors
from app.ui.browser.result_filters import ResultFilters
from app.ui.browser.result_rows import (
    HTML_ROLE,
    RichRowDelegate,
    RowWords,
    mark_colour,
    passage_chars,
    record_row_html,
    section_row_html,
)

HIT_ROLE = Qt.ItemDataRole.UserRole
FOUND = Counted("1 record for “{query}”", "{n} records for “{query}”")
SHOWN_OF = Counted("{shown} of 1 record for “{query}”", "{shown} of {n} records for “{query}”")
"""The heading when filters hide some of the records found (``{shown}`` of them listed): the
noun agrees with the records found (0 of 1 record)."""


class SearchResultsView(QWidget):
    """The records found for a query; activating one opens it at its passage.

    Signals:
        record_requested: (key, timecode or "") a record was opened.
        closed: the person went back to the records table.
    """

    record_requested = Signal(object, str)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._query = ""
        self._within = ""
        self._hits: list[RecordHit] = []
        self.title = ElidedLabel(self)
        self.title.setObjectName("resultsTitle")
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.back = ElidedButton(self.tr("Back to records"), self)
        self.back.clicked.connect(self.closed)
        self.filters = ResultFilters(self.back, self)
        self.filters.changed.connect(self._render)
        self.list = QListWidget(self)
        self.list.setObjectName("searchResults")
        self.list.setItemDelegate(RichRowDelegate(self.list))
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setSpacing(1)
        self.list.viewport().installEventFilter(self)
        self._width = 0
        self.list.itemActivated.connect(self._on_activated)
        self.list.itemClicked.connect(self._on_activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.filters)
        layout.addWidget(self.list, 1)

    def show_hits(self, query: str, hits: list[RecordHit], within: str = "") -> None:
        """Show the records found for ``query`` (in relevance order, each once); ``within``
        names the record the search was kept to (with everything under it)."""
        self._query = query
        self._within = within
        self._hits = list(hits)
        self.filters.offer(self._hits)
        self._render()

    def show_message(self, text: str) -> None:
        """Show a sentence instead of records (searching, no index, an error...)."""
        self._hits = []
        self.list.clear()
        self.filters.offer([])
        self.title.set_full_text(text)

    def shown(self) -> list[RecordHit]:
        """The records listed now, top to bottom (after sorting and filtering)."""
        out = []
        for row in range(self.list.count()):
            hit = self.list.item(row).data(HIT_ROLE)
            if isinstance(hit, RecordHit):
                out.append(hit)
        return out

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Re-lay the rows out when the list's width changes (a top-to-bottom list only does
        so on its own when its height changes), so each row is as tall as its wrapped text;
        rebuild them when the passage a row shows changes length
        (:func:`~app.ui.browser.result_rows.passage_chars`)."""
        if event.type() == QEvent.Type.Resize and watched is self.list.viewport():
            width = self.list.viewport().width()
            if width != self._width:
                again = passage_chars(width) != passage_chars(self._width)
                self._width = width
                if again and self._hits:  # a passage of another length: the rows anew
                    bar = self.list.verticalScrollBar()
                    position = bar.value()
                    self._render()
                    bar.setValue(position)
                else:
                    self.list.doItemsLayout()
        return super().eventFilter(watched, event)

    def _render(self) -> None:
        kept = sort_hits(
            filter_hits(self._hits, self.filters.record_filter()), self.filters.order()
        )
        self.title.set_full_text(self._heading(len(kept)))
        self.list.clear()
        colors = palette_colors(self.palette())
        mark = mark_colour(self.palette())
        words = RowWords(
            exact=self.tr("exact match"), page=self.tr("p. {page}"), within=self.tr("in {top}")
        )
        chars = passage_chars(self.list.viewport().width())
        for group in by_section(kept):
            header = QListWidgetItem()
            header.setFlags(Qt.ItemFlag.NoItemFlags)
            header.setData(HTML_ROLE, section_row_html(group.label, len(group.hits), colors))
            self.list.addItem(header)
            for hit in group.hits:
                item = QListWidgetItem()
                item.setData(HIT_ROLE, hit)
                html_row = record_row_html(hit, colors, mark, words, chars)
                item.setData(HTML_ROLE, html_row)
                item.setToolTip(f"{hit.title}\n{hit.key}")
                self.list.addItem(item)
        if self._hits and not kept:
            empty = QListWidgetItem()
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            empty.setData(HTML_ROLE, html.escape(self.tr("No record matches these filters.")))
            self.list.addItem(empty)

    def _heading(self, shown: int) -> str:
        """The records found for the query (and how many of them the filters leave), each
        count in the words that agree with it, written as the UI's locale writes numbers."""
        total = len(self._hits)
        if not total:
            heading = self.tr("No records found for “{query}”").format(query=self._query)
        else:
            locale = QLocale()
            words = FOUND if shown == total else SHOWN_OF
            heading = self.tr(words.template(total)).format(
                shown=locale.toString(shown), n=locale.toString(total), query=self._query
            )
        if not self._within:
            return heading
        return self.tr("{heading}, within {record}").format(heading=heading, record=self._within)

    def _on_activated(self, item: QListWidgetItem) -> None:
        hit = item.data(HIT_ROLE)
        if isinstance(hit, RecordHit):
            passage = hit.passage
            self.record_requested.emit(hit.key, (passage.timecode if passage else None) or "")
