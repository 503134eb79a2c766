"""The streamed answer: Markdown rendered paragraph by paragraph, so each repaint costs the same.

Re-rendering the whole answer as Markdown on every coalesced flush costs time in proportion to
the answer's length and stalls the GUI thread as the answer grows. Instead, while text streams
in, each *finished* paragraph (text before a blank line outside a code fence) is rendered as
Markdown once and appended to the document, and only the open paragraph is replaced, as plain
text, on each flush. When the answer block ends, the whole text is rendered once, so the final
look is exactly the Markdown renderer's.

Citations become links only once the run's ``final`` frame says which are verified
(:meth:`AnswerWidget.set_citations`); an unverified one shows behind a warning mark, in the
warning colour, with a tooltip saying that no tool in the run returned that record. A verified
one's tooltip says what it vouches for: the record, not the sentence. The frame's claims (see
:mod:`app.core.agent.claims`) found in no record the run read show with a ⚠ after them, in the
warning colour, with the tooltip "not in the cited records".
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QSizeF, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QToolTip, QWidget

from app.core.agent.citations import Citation
from app.core.agent.claims import MARK, Claim, mark_claims, marked
from app.ui.assistant.citations import linkify, unverified_marks
from app.ui.browser.record_html import parse_record_link

MARKDOWN = (
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub
    | QTextDocument.MarkdownFeature.MarkdownNoHTML
)
FENCE = "```"
WARNING_COLOUR = QColor("#a15c00")


def stable_end(markdown: str, start: int) -> int:
    """Where the finished paragraphs of ``markdown`` end (at or after ``start``).

    A paragraph is finished at a blank line that is not inside a fenced code block; the text
    after the last such break is still open and may change its meaning (a list, a fence).
    """
    end = markdown.rfind("\n\n", start)
    while end >= start:
        cut = end + 2
        if markdown.count(FENCE, 0, cut) % 2 == 0:
            return cut
        end = markdown.rfind("\n\n", start, end)
    return start


class AnswerWidget(QTextBrowser):
    """The answer as Markdown, growing as text streams in; citations open records.

    Signals:
        record_requested: (key, timecode or "") a citation was clicked.
    """

    record_requested = Signal(object, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("answer")
        self._markdown = ""
        self._stable = 0
        """How much of ``_markdown`` is in the document as rendered Markdown."""
        self._tail_at = 0
        """The document position where the open (plain) paragraph starts."""
        self.streaming = False
        self.citations: tuple[Citation, ...] | None = None
        """The run's verified/unverified citations (``None`` until the run ends)."""
        self.claims: tuple[Claim, ...] = ()
        """The run's checked claims in this block (offsets into :attr:`markdown`)."""
        self.setOpenLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.anchorClicked.connect(self._on_anchor)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.setFixedHeight(24)

    @property
    def markdown(self) -> str:
        """The answer text so far."""
        return self._markdown

    def append_text(self, text: str) -> None:
        """Add streamed text: render finished paragraphs once, replace the open one."""
        self._markdown += text
        self.streaming = True
        cut = stable_end(self._markdown, self._stable)
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        cursor.setPosition(self._tail_at)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if cut > self._stable:
            cursor.insertMarkdown(
                linkify(self._markdown[self._stable : cut], self.citations), MARKDOWN
            )
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            self._stable = cut
            self._tail_at = cursor.position()
        cursor.insertText(self._markdown[self._stable :], QTextCharFormat())
        cursor.endEditBlock()

    def finish(self) -> None:
        """The answer block ended: render the whole text as Markdown once."""
        if self.streaming:
            self.set_text(self._markdown, self.citations)

    def set_text(
        self,
        text: str,
        citations: Sequence[Citation] | None = None,
        claims: Sequence[Claim] | None = None,
    ) -> None:
        """Replace the whole answer (rendered at once); ``citations`` as in the final frame,
        ``claims`` its claims with offsets into ``text``."""
        self._markdown = text
        self.streaming = False
        if citations is not None:
            self.citations = tuple(citations)
        if claims is not None:
            self.claims = tuple(claims)
        shown = mark_claims(text, self.claims)
        self.document().setMarkdown(linkify(shown, self.citations), MARKDOWN)
        self._mark_unverified()
        self._mark_claims()
        self._explain_links()
        self._stable = len(text)
        self._tail_at = max(0, self.document().characterCount() - 1)

    def set_citations(
        self, citations: Sequence[Citation], claims: Sequence[Claim] | None = None
    ) -> None:
        """The run ended: link the verified citations, mark the others and the claims found
        in no record the run read."""
        self.set_text(self._markdown, citations, claims)

    def _mark_unverified(self) -> None:
        tip = self.tr(
            "Not verified: no tool in this run returned this record, so it may not exist."
        )
        document = self.document()
        for mark in dict.fromkeys(unverified_marks(self.citations)):
            cursor = document.find(mark)
            while not cursor.isNull():
                fmt = QTextCharFormat()
                fmt.setToolTip(tip)
                fmt.setForeground(WARNING_COLOUR)
                cursor.mergeCharFormat(fmt)
                cursor = document.find(mark, cursor)

    def _mark_claims(self) -> None:
        tip = self.tr("Not in the cited records: no record this run read holds it.")
        flags = QTextDocument.FindFlag.FindCaseSensitively
        for text in dict.fromkeys(claim.text + MARK for claim in marked(self.claims)):
            cursor = self.document().find(text, 0, flags)
            while not cursor.isNull():
                fmt = QTextCharFormat()
                fmt.setToolTip(tip)
                fmt.setForeground(WARNING_COLOUR)
                cursor.mergeCharFormat(fmt)
                cursor = self.document().find(text, cursor, flags)

    def _explain_links(self) -> None:
        """A verified citation's tooltip: it vouches for the record, not for the sentence."""
        tip = self.tr(
            "Verified: a tool in this run returned this record. This vouches for the record, "
            "not for the sentence that cites it."
        )
        spans = []
        block = self.document().begin()
        while block.isValid():
            fragments = block.begin()
            while not fragments.atEnd():
                fragment = fragments.fragment()
                if fragment.charFormat().anchorHref().startswith("record:"):
                    spans.append((fragment.position(), fragment.position() + fragment.length()))
                fragments += 1
            block = block.next()
        for start, end in spans:
            cursor = QTextCursor(self.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setToolTip(tip)
            cursor.mergeCharFormat(fmt)

    def tooltip_at(self, x: int, y: int) -> str:
        """The tooltip of the text at viewport point ``(x, y)`` (``""`` for none)."""
        cursor = self.cursorForPosition(QPoint(x, y))
        tip = cursor.charFormat().toolTip()
        if not tip:
            cursor.movePosition(QTextCursor.MoveOperation.NextCharacter)
            tip = cursor.charFormat().toolTip()
        return tip

    def viewportEvent(self, event: QEvent) -> bool:
        """Show an unverified citation's tooltip."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.tooltip_at(event.pos().x(), event.pos().y())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def _fit(self, size: QSizeF) -> None:
        self.setFixedHeight(int(size.height()) + 6)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Re-wrap at the new width and fit the height."""
        super().resizeEvent(event)
        self.document().setTextWidth(self.viewport().width())
        self._fit(self.document().size())

    def _on_anchor(self, url: QUrl) -> None:
        target = parse_record_link(url.toString())
        if target is not None:
            self.record_requested.emit(target[0], target[1] or "")
