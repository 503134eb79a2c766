"""The conversation: a scrolling column of turns, answers, tool lines, cards and banners."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.core.agent.citations import Citation
from app.core.agent.claims import Claim
from app.core.agent.events import ErrorEvent
from app.core.agent.plan_preview import OpPreview
from app.core.agent.plan_types import PendingPlan
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.turn_widgets import (
    ErrorBanner,
    NoticeLabel,
    ThinkingWidget,
    ToolLineWidget,
    UserTurnWidget,
)
from app.ui.bridge import RunBridge


def align_answer(text: str, shown: Sequence[str]) -> tuple[int, int, str]:
    """Line the final answer ``text`` up with the texts ``shown`` in a turn's answer blocks.

    Returns ``(first, last, middle)``: ``shown[:first]`` already show the start of ``text`` and
    ``shown[last:]`` its end, in order; ``middle`` is the text between them, which the blocks
    ``shown[first:last]`` (none when ``first == last``) should show instead of what they do.
    """
    first, start = 0, 0
    while first < len(shown) and text.startswith(shown[first], start):
        start += len(shown[first])
        first += 1
    last, end = len(shown), len(text)
    while last > first and end - len(shown[last - 1]) >= start:
        if not text.endswith(shown[last - 1], start, end):
            break
        end -= len(shown[last - 1])
        last -= 1
    return first, last, text[start:end]


def shifted(claims: Sequence[Claim], offset: int, length: int) -> list[Claim]:
    """The claims within ``[offset, offset + length)`` of the answer, as offsets into that
    part of it (an answer block's)."""
    return [
        replace(claim, start=claim.start - offset, end=claim.end - offset)
        for claim in claims
        if offset <= claim.start and claim.end <= offset + length
    ]


class ConversationView(QScrollArea):
    """Shows one conversation; follows the bottom while an answer streams.

    Signals:
        record_requested: (key, timecode or "") a citation or created-record link was clicked.
    """

    record_requested = Signal(object, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversation")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body = QWidget(self)
        self.body.setObjectName("conversationBody")
        self.column = QVBoxLayout(self.body)
        self.column.setContentsMargins(12, 12, 12, 12)
        self.column.setSpacing(8)
        self.column.addStretch(1)
        self.placeholder = QLabel(
            self.tr(
                "Ask about the archive. Answers cite their records — click a citation to open "
                "it. With the local model nothing leaves this computer; in write mode every "
                "change waits for your Apply."
            ),
            self.body,
        )
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.column.insertWidget(0, self.placeholder)
        self.setWidget(self.body)
        self.answer: AnswerWidget | None = None
        self.turn_answers: list[AnswerWidget] = []
        """The answer blocks of the current turn (text between tool calls)."""
        self.thinking: ThinkingWidget | None = None
        self.tool_lines: dict[str, ToolLineWidget] = {}
        self.cards: list[ConfirmCardWidget] = []
        self._scroll_timer = QTimer(self)
        self._scroll_timer.setSingleShot(True)
        self._scroll_timer.setInterval(0)
        self._scroll_timer.timeout.connect(self._to_bottom)
        self.verticalScrollBar().rangeChanged.connect(self._on_range)

    def follow(self, bridge: RunBridge) -> None:
        """Show each run ``bridge`` streams: its text, thinking and tool calls."""
        bridge.text_received.connect(self.append_text)
        bridge.thinking_started.connect(self.start_thinking)
        bridge.thinking_received.connect(self.add_thinking_text)
        bridge.thinking_stopped.connect(self.stop_thinking)
        bridge.tool_started.connect(self.start_tool)
        bridge.tool_finished.connect(self.finish_tool)

    # -- building ----------------------------------------------------------------------------
    def add(self, widget: QWidget) -> QWidget:
        """Append a widget to the conversation and scroll to it."""
        self.placeholder.hide()
        self.column.insertWidget(self.column.count() - 1, widget)
        self._scroll_timer.start()
        return widget

    def clear(self) -> None:
        """Remove everything."""
        while self.column.count() > 2:
            item = self.column.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.placeholder.show()
        self.end_turn()
        self.turn_answers = []
        self.cards.clear()

    def end_turn(self) -> None:
        """The run ended: the next text starts a new answer."""
        self._close_answer()
        self.thinking = None
        self.tool_lines.clear()

    def add_user_turn(self, text: str, context: str = "") -> UserTurnWidget:
        """The person's question."""
        self.end_turn()
        self.turn_answers = []
        widget = UserTurnWidget(text, context, self.body)
        self.add(widget)
        return widget

    def append_text(self, text: str) -> AnswerWidget:
        """Streamed answer text (a new answer block if none is open)."""
        if self.answer is None:
            self.answer = AnswerWidget(self.body)
            self.answer.record_requested.connect(self.record_requested)
            self.turn_answers.append(self.answer)
            self.add(self.answer)
        self.answer.append_text(text)
        self._scroll_timer.start()
        return self.answer

    def set_answer(
        self,
        text: str,
        citations: Sequence[Citation] | None = None,
        claims: Sequence[Claim] = (),
    ) -> AnswerWidget:
        """The run's final answer, the single source of what the turn shows, its citations and
        its checked claims.

        The answer is the text of every answer block of the turn (text between tool calls).
        Blocks that already show their part of it stay as they are; only what is not shown yet
        is rendered, and a block whose text the answer does not hold is corrected or removed,
        so the turn shows the answer exactly once. Every block then links its verified
        citations and marks the others, and the claims found in no record it holds.
        """
        blocks = list(self.turn_answers)
        first, last, middle = align_answer(text, [w.markdown for w in blocks])
        if first < last:
            keep = blocks[first] if middle else None
            for widget in blocks[first:last]:
                if widget is not keep:
                    self._remove_answer(widget)
            if keep is not None:
                keep.set_text(middle)
        elif middle and last < len(blocks):
            before = blocks[first - 1] if first > 0 else None
            if before is not None:
                before.set_text(before.markdown + middle)
            else:
                blocks[last].set_text(middle + blocks[last].markdown)
        elif middle:
            self.append_text(middle)
        if not self.turn_answers:
            self.append_text("")
        answer = self.answer or self.turn_answers[-1]
        if citations is not None:
            offset = 0  # the blocks hold the answer in order: each its part of the claims
            for widget in self.turn_answers:
                widget.set_citations(citations, shifted(claims, offset, len(widget.markdown)))
                offset += len(widget.markdown)
        return answer

    def _remove_answer(self, widget: AnswerWidget) -> None:
        self.turn_answers.remove(widget)
        if widget is self.answer:
            self.answer = None
        self.column.removeWidget(widget)
        widget.hide()
        widget.deleteLater()

    def start_thinking(self) -> ThinkingWidget:
        """A thinking indicator."""
        self.thinking = ThinkingWidget(self.body)
        self.add(self.thinking)
        return self.thinking

    def add_thinking_text(self, text: str) -> None:
        """Streamed thinking text."""
        (self.thinking or self.start_thinking()).append(text)

    def stop_thinking(self) -> None:
        """The model stopped thinking."""
        if self.thinking is not None:
            self.thinking.finish()

    def start_tool(self, call_id: str, name: str, summary: str) -> ToolLineWidget:
        """A tool call line."""
        line = ToolLineWidget(call_id, name, summary, self.body)
        self.tool_lines[call_id] = line
        self._close_answer()  # text after a tool call is a new block
        self.add(line)
        return line

    def finish_tool(self, call_id: str, name: str, ok: bool, code: str) -> None:
        """A tool call ended."""
        line = self.tool_lines.get(call_id) or self.start_tool(call_id, name, name)
        line.finish(ok, code)

    def add_card(
        self, pending: PendingPlan, previews: Mapping[str, OpPreview] | None = None
    ) -> ConfirmCardWidget:
        """A confirm card for a proposed plan (``previews``: its ops in words)."""
        card = ConfirmCardWidget(pending, previews, parent=self.body)
        card.record_requested.connect(self.record_requested)
        self.cards.append(card)
        self.add(card)
        return card

    def add_error(self, error: ErrorEvent, *, offer_local: bool = False) -> ErrorBanner:
        """An error banner."""
        banner = ErrorBanner(error, offer_local=offer_local, parent=self.body)
        self.add(banner)
        return banner

    def add_notice(self, text: str) -> NoticeLabel:
        """A quiet line."""
        label = NoticeLabel(text, self.body)
        self.add(label)
        return label

    def widgets(self) -> list[QWidget]:
        """Everything shown, in order."""
        out = []
        for number in range(1, self.column.count() - 1):
            item = self.column.itemAt(number)
            widget = item.widget() if item is not None else None
            if widget is not None:
                out.append(widget)
        return out

    def _close_answer(self) -> None:
        if self.answer is not None:
            self.answer.finish()
        self.answer = None

    def _on_range(self, _low: int, high: int) -> None:
        self.verticalScrollBar().setValue(high)

    def _to_bottom(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
