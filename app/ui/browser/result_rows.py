"""How one search result reads: the HTML of a record's row and of a section's heading, and the
delegate that paints them in the results list.

A record's row is three short lines: its title (and, when the title shown is not the name that
matched, that name: ``Barcelona «Barcino»``), then its section, the top of its hierarchy (its
fonds), date, language badges and the passage's timecode or page in a muted line, then the
passage with the query's words marked. A record found through a heading it links to says so
in a line of its own before the passage, the field and the heading (``Subjects: Chemical
warfare``).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QListView,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from app.core.archive.shown_values import language_tag
from app.core.index.hit_passages import HitPassage
from app.core.index.names import fold
from app.core.index.record_hits import RecordHit
from app.ui.browser.item_paint import paint_background, text_role
from app.ui.browser.record_html import Palette

HTML_ROLE = Qt.ItemDataRole.UserRole + 1
PASSAGE_CHARS = 240
"""The most characters of a passage a row shows."""
MIN_PASSAGE_CHARS = 90
CHARS_PER_PIXEL = 0.6
"""About four lines of a passage per pixel of row width (some 7 pixels a character)."""
LEAD_CHARS = 60
"""Characters kept before the first marked word when a passage is cut."""
MARGIN = 6


@dataclass(frozen=True)
class RowWords:
    """The translated words a row uses."""

    exact: str = "exact match"
    page: str = "p. {page}"
    within: str = "in {top}"
    """The top of a record's hierarchy (``in 572AP/1-572AP/122 · Fonds Vitet``)."""


def language_tags(langs: tuple[str, ...]) -> list[str]:
    """Short tags of the record's languages (``CA``, ``ES``), in a stable order."""
    order = {code: n for n, code in enumerate(("lg-cat", "lg-spa", "lg-eng"))}
    ordered = sorted(langs, key=lambda code: (order.get(code, 9), code))
    return [language_tag(code) for code in ordered]


def excerpt(passage: HitPassage, size: int = PASSAGE_CHARS) -> tuple[str, list[tuple[int, int]]]:
    """At most ``size`` characters of the passage around its first marked word, with the
    marks that fall inside (offsets in the excerpt)."""
    text = passage.text
    if len(text) <= size:
        return text, list(passage.marks)
    first = passage.marks[0][0] if passage.marks else 0
    start = 0 if first < LEAD_CHARS else text.rfind(" ", 0, first - LEAD_CHARS) + 1
    end = text.rfind(" ", start, start + size)
    end = end if end > start else start + size
    lead = "…" if start else ""
    shift = len(lead) - start
    spans = [(a + shift, b + shift) for a, b in passage.marks if a >= start and b <= end]
    return lead + text[start:end] + "…", spans


def marked_html(text: str, spans: list[tuple[int, int]], mark: str) -> str:
    """``text`` escaped, the ``spans`` in bold on the ``mark`` colour."""
    out, position = [], 0
    for start, end in sorted(spans):
        if start < position:
            continue
        out.append(html.escape(text[position:start]))
        out.append(
            f"<span style='background-color:{mark}; font-weight:600'>"
            f"{html.escape(text[start:end])}</span>"
        )
        position = end
    out.append(html.escape(text[position:]))
    return "".join(out)


def _pill(text: str, colors: Palette) -> str:
    return (
        f"<span style='background-color:{colors.pill}; color:{colors.muted}; "
        f"font-size:small'>&nbsp;{html.escape(text)}&nbsp;</span>"
    )


def passage_chars(width: int) -> int:
    """How much of a passage a row of ``width`` pixels shows: about four lines, between
    :data:`MIN_PASSAGE_CHARS` and :data:`PASSAGE_CHARS` characters."""
    return max(MIN_PASSAGE_CHARS, min(PASSAGE_CHARS, int(width * CHARS_PER_PIXEL)))


def record_row_html(
    hit: RecordHit, colors: Palette, mark: str, words: RowWords, chars: int = PASSAGE_CHARS
) -> str:
    """The HTML of one record's row (at most ``chars`` characters of its passage)."""
    title = f"<b>{marked_html(hit.title, list(hit.title_marks), mark)}</b>"
    if hit.exact_name is not None and fold(hit.exact_name) != fold(hit.title):
        title += f" <span style='color:{colors.muted}'>«{html.escape(hit.exact_name)}»</span>"
    if hit.exact:
        title += " " + _pill(words.exact, colors)
    meta = [html.escape(hit.section_label)]
    if hit.where:
        meta.append(html.escape(words.within.format(top=hit.where)))
    if hit.date:
        meta.append(html.escape(hit.date))
    tags = " ".join(_pill(tag, colors) for tag in language_tags(hit.langs))
    passage = hit.passage
    if passage is not None and passage.timecode:
        meta.append(f"▶ {html.escape(passage.timecode[:8])}")
    elif passage is not None and passage.page:
        meta.append(html.escape(words.page.format(page=passage.page)))
    line = " · ".join(meta) + (f" &nbsp;{tags}" if tags else "")
    parts = [
        f"<div>{title}</div>",
        f"<div style='color:{colors.muted}; font-size:small'>{line}</div>",
    ]
    if hit.via is not None:
        heading = marked_html(hit.via.title, list(hit.via.title_marks), mark)
        parts.append(
            f"<div><span style='color:{colors.muted}'>{html.escape(hit.via.field_label)}:"
            f"</span> {heading}</div>"
        )
    if passage is not None:
        text, spans = excerpt(passage, chars)
        parts.append(f"<div>{marked_html(text, spans, mark)}</div>")
    return "".join(parts)


def section_row_html(label: str, count: int, colors: Palette) -> str:
    """The HTML of a section's heading in the list."""
    return (
        f"<div style='color:{colors.muted}; font-weight:600'>{html.escape(label)}"
        f" <span style='font-weight:400'>· {count}</span></div>"
    )


def mark_colour(palette: QPalette) -> str:
    """The background of a marked word: pale yellow, or dark amber in a dark theme."""
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    return "#6b5500" if dark else "#fff0a6"


class RichRowDelegate(QStyledItemDelegate):
    """Paints each row's HTML (:data:`HTML_ROLE`), wrapped to the list's width."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def _document(self, index: QModelIndex | QPersistentModelIndex, width: int) -> QTextDocument:
        document = QTextDocument()
        document.setDocumentMargin(MARGIN)
        document.setDefaultFont(self._view.font())
        document.setHtml(str(index.data(HTML_ROLE) or ""))
        document.setTextWidth(max(width, 40))
        return document

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """The item's background and selection as the style draws them, then its HTML."""
        item = paint_background(self, painter, option, index)
        rect = option.rect
        document = self._document(index, rect.width())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, item.palette.color(text_role(item)))
        painter.save()
        painter.translate(rect.topLeft())
        painter.setClipRect(QRectF(0, 0, rect.width(), rect.height()))
        document.documentLayout().draw(painter, context)
        if index.flags() & Qt.ItemFlag.ItemIsSelectable:  # a record: a rule beneath it
            painter.setPen(item.palette.color(QPalette.ColorRole.Midlight))
            painter.drawLine(0, rect.height() - 1, rect.width(), rect.height() - 1)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """As wide as the list's viewport (less its spacing, as the row is painted), as tall
        as the wrapped HTML."""
        width = self._view.viewport().width() - 2 * self._view.spacing()
        document = self._document(index, width)
        return QSize(width, math.ceil(document.size().height()))
