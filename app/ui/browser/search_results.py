"""The search box's results: label, section, snippet and passage timecode of each hit."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.index.hits import SearchHit
from app.ui.browser.record_html import LANG_TAGS

HIT_ROLE = Qt.ItemDataRole.UserRole


def language_tag(hit: SearchHit) -> str:
    """The record's languages as short tags (``CA``, ``ES/EN``), else the passage's."""
    langs = hit.record_langs or ((hit.lang,) if hit.lang in LANG_TAGS else ())
    return "/".join(LANG_TAGS.get(lang, lang.removeprefix("lg-").upper()) for lang in langs)


class SearchResultsView(QWidget):
    """A list of search hits; activating one opens its record at the passage.

    Signals:
        record_requested: (key, timecode or "") a hit was opened.
        closed: the person went back to the records table.
    """

    record_requested = Signal(object, str)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setObjectName("resultsTitle")
        back = QPushButton(self.tr("Back to records"), self)
        back.clicked.connect(self.closed)
        self.list = QListWidget(self)
        self.list.setWordWrap(True)
        self.list.setObjectName("searchResults")
        self.list.itemActivated.connect(self._on_activated)
        self.list.itemClicked.connect(self._on_activated)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(back)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.list, 1)

    def show_hits(self, query: str, hits: list[SearchHit]) -> None:
        """Show ``hits`` for ``query``."""
        self.list.clear()
        self.title.setText(
            self.tr("{n} results for “{query}”").format(n=len(hits), query=html.escape(query))
        )
        for hit in hits:
            where = f" · {language_tag(hit)}" if language_tag(hit) else ""
            where += f" · ▶ {hit.timecode[:8]}" if hit.timecode else ""
            where += f" · p. {hit.page}" if hit.page else ""
            item = QListWidgetItem(f"{hit.label}  ({hit.key}){where}\n{hit.snippet.strip()}")
            item.setData(HIT_ROLE, hit)
            item.setToolTip(hit.snippet)
            self.list.addItem(item)

    def show_message(self, text: str) -> None:
        """Show a sentence instead of hits (no index yet, an error...)."""
        self.list.clear()
        self.title.setText(text)

    def _on_activated(self, item: QListWidgetItem) -> None:
        hit = item.data(HIT_ROLE)
        if isinstance(hit, SearchHit):
            self.record_requested.emit(hit.key, hit.timecode or "")
