"""The record view: one record's fields by language, its links, media and passages.

What it shows of a record is a :class:`RecordPage`, read by :func:`read_record_page` on
whichever thread asks: a record the person opens is read at once, and the record shown is
read again on a read thread after the archive changed (:meth:`RecordView.page_reader`, then
:meth:`RecordView.show_page`), so the window never waits for SQLite there.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.archive import Archive, Media, RecordKey
from app.core.archive.media import media_of
from app.core.errors import ArxiuError
from app.ui.browser.elided import ElidedButton
from app.ui.browser.media_player import MediaPlayer, timecode_seconds
from app.ui.browser.record_html import (
    CONTENTS,
    WITHIN,
    Palette,
    parse_key_link,
    parse_record_link,
    record_html,
)
from app.ui.i18n import error_text


def palette_colors(palette: QPalette) -> Palette:
    """HTML colours from a Qt palette, so the view follows light and dark themes."""
    dark = palette.color(QPalette.ColorRole.Window).lightness() < 128
    return Palette(
        text=palette.color(QPalette.ColorRole.Text).name(),
        muted=palette.color(QPalette.ColorRole.PlaceholderText).name(),
        link=palette.color(QPalette.ColorRole.Link).name() if not dark else "#6cb6ff",
        pill="#30363d" if dark else "#eaeef2",
        danger="#b42318",
        rule="#30363d" if dark else "#d8dee4",
    )


NARROW_WIDTH = 420
"""Below this width the record's fields are stacked (label above value), not in two columns."""


@dataclass(frozen=True)
class PageStyle:
    """How a page is drawn, taken from the widget on the GUI thread before the read."""

    colors: Palette
    labels: dict[str, str]
    narrow: bool
    every_child: bool = False
    """All the record's contents listed (its "show them all" link was clicked)."""


@dataclass(frozen=True)
class RecordPage:
    """One record as the view shows it: its HTML and its media (or why it cannot be read)."""

    key: RecordKey
    html: str
    media: list[Media]
    narrow: bool


def read_record_page(archive: Archive, key: RecordKey, lang: str, style: PageStyle) -> RecordPage:
    """Read ``key`` and draw its page (the archive's reads run on the calling thread)."""
    try:
        record = archive.get_record(key)
    except ArxiuError as error:
        return RecordPage(key, f"<p>{html.escape(error_text(error))}</p>", [], style.narrow)
    media = media_of(archive, key)
    text = record_html(
        archive,
        record,
        media,
        lang=lang,
        colors=style.colors,
        labels=style.labels,
        narrow=style.narrow,
        every_child=style.every_child,
    )
    return RecordPage(key, text, media, style.narrow)


class RecordView(QWidget):
    """Shows one record; its links open other records, its timecodes play the media.

    Narrower than :data:`NARROW_WIDTH` (a small window, a wide results pane beside it), each
    field's label goes above its value, so values keep the whole width rather than one word
    per line beside a column of labels.

    Signals:
        record_requested: (key, timecode or "") a link to a record was clicked.
        ask_requested: (key) "Ask about this record" was clicked.
        search_within_requested: (key) "Search within this description" was clicked (a
            record with contents).
        notice: a sentence for the status bar.
    """

    record_requested = Signal(object, str)
    ask_requested = Signal(object)
    search_within_requested = Signal(object)
    notice = Signal(str)

    def __init__(self, archive: Archive, lang: str = "lg-eng", parent: QWidget | None = None):
        super().__init__(parent)
        self._archive = archive
        self._lang = lang
        self._key: RecordKey | None = None
        self._every_child = False
        """The record shown lists all its contents (reset when another is shown)."""
        self._media: list[Media] = []
        self._narrow = False
        self._player = MediaPlayer(self)
        self.image_viewer: QDialog | None = None
        """The image opened from this record view, while it is open."""
        self._player.notice.connect(self.notice)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._on_anchor)
        self.browser.setObjectName("recordBrowser")
        self.ask_button = ElidedButton(self.tr("Ask about this record"), self)
        self.ask_button.setToolTip(self.tr("Ask the assistant about this record"))
        self.ask_button.setEnabled(False)
        self.ask_button.clicked.connect(self._on_ask)
        self.empty = QLabel(self.tr("Select a record to read it here."), self)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setObjectName("placeholder")
        self._layout_widgets()
        self.show_record(None)

    def _layout_widgets(self) -> None:
        bar = QHBoxLayout()
        bar.addStretch(1)
        bar.addWidget(self.ask_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.browser, 1)

    @property
    def key(self) -> RecordKey | None:
        """The record shown."""
        return self._key

    def show_record(self, key: RecordKey | None, timecode: str | None = None) -> None:
        """Show ``key`` (``None`` clears the view); a timecode also plays the media there."""
        if key != self._key:
            self._every_child = False
        self._key = key
        self.ask_button.setEnabled(key is not None)
        self.empty.setVisible(key is None)
        self.browser.setVisible(key is not None)
        if key is None:
            self.browser.clear()
            return
        self._show(read_record_page(self._archive, key, self._lang, self._style()))
        if timecode:
            self.play_at(timecode)

    def page_reader(self) -> Callable[[], RecordPage | None]:
        """A read of the record shown, to run on a read thread (``None``: none is shown);
        :meth:`show_page` shows what it returns."""
        key, archive, lang, style = self._key, self._archive, self._lang, self._style()
        if key is None:
            return lambda: None
        return lambda: read_record_page(archive, key, lang, style)

    def show_page(self, page: RecordPage | None) -> None:
        """Show ``page``, read again for the record still shown, where the person was reading
        (a page of a record the person has left since is dropped)."""
        if page is None or page.key != self._key:
            return
        bar = self.browser.verticalScrollBar()
        position = bar.value()
        self._show(page)
        bar.setValue(position)

    def _style(self) -> PageStyle:
        words = {
            "restricted": self.tr("restricted"),
            "linked_from": self.tr("Linked from"),
            "contents": self.tr("Contents"),
            "search_within": self.tr("Search within this description"),
            "show_every_child": self.tr("+{n}: show them all"),
        }
        narrow = self.width() < NARROW_WIDTH
        return PageStyle(palette_colors(self.palette()), words, narrow, self._every_child)

    def _show(self, page: RecordPage) -> None:
        self._media = page.media
        self._narrow = page.narrow
        self.browser.setHtml(page.html)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Switch between stacked and two-column fields when the width crosses
        :data:`NARROW_WIDTH` (the scroll position is kept)."""
        super().resizeEvent(event)
        if self._key is not None and (self.width() < NARROW_WIDTH) != self._narrow:
            bar = self.browser.verticalScrollBar()
            position = bar.value()
            self.show_record(self._key)
            bar.setValue(position)

    def play_at(self, timecode: str) -> None:
        """Play the record's audio or video from ``timecode`` (or say there is none)."""
        playable = [m for m in self._media if m.mime.startswith(("audio/", "video/"))]
        if not playable:
            self.notice.emit(
                self.tr("Passage at {tc}: this record has no audio or video.").format(tc=timecode)
            )
            return
        self._player.play(self._archive.media_path(playable[0].path), timecode_seconds(timecode))

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        target = parse_record_link(text)
        if target is not None:
            key, timecode = target
            if key == self._key and timecode:
                self.play_at(timecode)
            else:
                self.record_requested.emit(key, timecode or "")
        elif (within := parse_key_link(text, WITHIN)) is not None:
            self.search_within_requested.emit(within)
        elif parse_key_link(text, CONTENTS) == self._key and self._key is not None:
            self._every_child = True  # every child listed, where the person was reading
            bar = self.browser.verticalScrollBar()
            position = bar.value()
            self.show_record(self._key)
            bar.setValue(position)
        elif text.startswith("media:"):
            self._open_media(int(text[len("media:") :]))
        elif url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)

    def _open_media(self, media_id: int) -> None:
        item = next((m for m in self._media if m.id == media_id), None)
        if item is None:
            return
        path = self._archive.media_path(item.path)
        if item.mime.startswith(("audio/", "video/")):
            self._player.play(path, 0.0)
        elif item.mime.startswith("image/"):
            self._show_image(path)
        elif not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            self.notice.emit(
                self.tr("No application on this computer opens {name}.").format(name=path.name)
            )

    def _show_image(self, path: Path) -> None:
        """Open the image in the app's own viewer (one at a time; a new one replaces it)."""
        from app.ui.browser.image_viewer import ImageViewer

        if self.image_viewer is not None:
            self.image_viewer.close()
        title = self._archive.record_label(self._key, self._lang) if self._key else path.name
        viewer = ImageViewer(path, title, self)
        viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        viewer.destroyed.connect(lambda: setattr(self, "image_viewer", None))
        viewer.show()
        self.image_viewer = viewer

    def _on_ask(self) -> None:
        if self._key is not None:
            self.ask_requested.emit(self._key)
