"""The streamed answer renders finished paragraphs once and the whole answer at the end."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QTextDocument

from app.ui.assistant.answer_widget import MARKDOWN, AnswerWidget, stable_end
from app.ui.assistant.citations import linkify

ANSWER = (
    "Three interviews talk about it:\n\n"
    "- **When they made us leave** (oh1/1)\n- The reservoir (oh1/2 @00:01:10)\n\n"
    "```\ncode with a blank line\n\ninside\n```\n\n"
    "They agree the houses were *cleared* first."
)


def _rendered(markdown: str) -> str:
    document = QTextDocument()
    document.setMarkdown(linkify(markdown), MARKDOWN)
    return document.toPlainText()


def test_paragraphs_are_finished_at_blank_lines_outside_code_fences() -> None:
    assert stable_end("one\n\ntwo", 0) == len("one\n\n")
    assert stable_end("one", 0) == 0
    fenced = "a\n\n```\nx\n\ny"
    assert stable_end(fenced, 0) == len("a\n\n")  # the blank line inside the fence is not a cut
    assert stable_end(fenced + "\n```\n\nb", 0) == len(fenced + "\n```\n\n")


def test_streamed_text_shows_everything_and_ends_as_the_markdown_render(qapp: Any) -> None:
    widget = AnswerWidget()
    for start in range(0, len(ANSWER), 7):
        widget.append_text(ANSWER[start : start + 7])
        shown = widget.document().toPlainText()
        assert "".join(shown.split())  # something is shown from the first flush on
    assert widget.markdown == ANSWER
    assert "They agree the houses were" in widget.document().toPlainText()
    assert widget.document().toPlainText() != _rendered(ANSWER)  # the tail is still plain
    widget.finish()
    assert widget.document().toPlainText() == _rendered(ANSWER)
    assert not widget.streaming
    widget.deleteLater()
