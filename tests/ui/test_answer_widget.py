"""The streamed answer renders finished paragraphs once and the whole answer at the end."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFont, QTextCharFormat

from app.core.agent.citations import Citation
from app.ui.assistant.answer_widget import AnswerWidget, stable_end

ANSWER = (
    "Three interviews talk about it:\n\n"
    "- **When they made us leave** (oh1/1)\n- The reservoir (oh1/2 @00:01:10)\n\n"
    "```\ncode with a blank line\n\ninside\n```\n\n"
    "They agree the houses were *cleared* first."
)


def _format_of(widget: AnswerWidget, text: str) -> QTextCharFormat:
    """The character format the widget shows ``text`` in."""
    cursor = widget.document().find(text)
    assert not cursor.isNull(), text
    return cursor.charFormat()


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
    assert "They agree the houses were *cleared* first." in widget.document().toPlainText()
    assert widget.streaming  # the last paragraph is still plain text while it streams
    widget.finish()
    shown = widget.document().toPlainText()
    assert not widget.streaming
    for marker in ("**", "*cleared*", "```", "- "):
        assert marker not in shown, f"markdown left unrendered: {marker!r}"
    assert "code with a blank line\n\ninside" in shown  # the fence keeps its blank line
    assert _format_of(widget, "When they made us leave").fontWeight() >= QFont.Weight.Bold
    assert _format_of(widget, "cleared").fontItalic()
    item = widget.document().find("The reservoir").block()
    assert item.textList() is not None  # a list item, not a line starting with "- "
    widget.deleteLater()


VERIFIED = Citation("oh1", 1, "When they made us leave", True, ("lg-cat", "lg-spa"))
INVENTED = Citation("tp2", 39, "Linares", False)
CITED = "Joan (oh1/1) and Linares (tp2/39) remember it."


def _anchors(widget: AnswerWidget) -> list[tuple[str, str]]:
    """(text, href) of every link in the widget's document."""
    out = []
    block = widget.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().isAnchor():
                out.append((fragment.text(), fragment.charFormat().anchorHref()))
            it += 1
        block = block.next()
    return out


def _tooltip_of(widget: AnswerWidget, text: str) -> str:
    cursor = widget.document().find(text)
    assert not cursor.isNull(), text
    return cursor.charFormat().toolTip()


def test_only_verified_citations_become_links_showing_the_record_language(qtbot: Any) -> None:
    """Regression: the invented "Linares (tp2/39)" rendered as a clickable citation."""
    widget = AnswerWidget()
    widget.set_text(CITED, [VERIFIED, INVENTED])
    assert _anchors(widget) == [("oh1/1 · ca/es", "record:oh1/1")]
    shown = widget.document().toPlainText()
    assert "⚠ tp2/39" in shown
    assert "Not verified" in _tooltip_of(widget, "⚠ tp2/39")
    assert "vouches for the record, not for the sentence" in _tooltip_of(widget, "oh1/1")
    widget.resize(500, 120)
    with qtbot.waitExposed(widget):
        widget.show()
    inside = widget.document().find("tp2/39")
    inside.setPosition(inside.selectionStart() + 2)
    spot = widget.cursorRect(inside).center()
    assert "Not verified" in widget.tooltip_at(spot.x(), spot.y())  # what hovering shows
    widget.deleteLater()


def test_no_citation_is_a_link_until_the_run_says_which_are_verified(qapp: Any) -> None:
    widget = AnswerWidget()
    widget.append_text(CITED + "\n\nMore text")
    widget.finish()
    assert _anchors(widget) == []
    assert "(oh1/1)" in widget.document().toPlainText()
    widget.set_citations([VERIFIED, INVENTED])
    assert [href for _, href in _anchors(widget)] == ["record:oh1/1"]
    widget.deleteLater()


def test_a_citation_missing_from_the_list_counts_as_unverified(qapp: Any) -> None:
    widget = AnswerWidget()
    widget.set_text("See (oh1/2) and `(oh1/1)` in code.", [VERIFIED])
    assert _anchors(widget) == []
    assert "⚠ oh1/2" in widget.document().toPlainText()
    assert "(oh1/1)" in widget.document().toPlainText()  # code spans are left alone
    widget.deleteLater()


def test_every_answer_block_of_a_turn_gets_the_runs_citations(qapp: Any, archive: Any) -> None:
    from app.ui.assistant.conversation_view import ConversationView

    view = ConversationView()
    view.add_user_turn("who?")
    first = view.append_text("Joan (oh1/1).")
    view.start_tool("c1", "dedalo_read_record", "Read oh1/1")
    view.finish_tool("c1", "dedalo_read_record", True, "")
    view.append_text("Linares (tp2/39).")
    view.set_answer("Joan (oh1/1).Linares (tp2/39).", [VERIFIED, INVENTED])
    assert _anchors(first) == [("oh1/1 · ca/es", "record:oh1/1")]
    last = view.answer
    assert last is not None and last.document().toPlainText() == "Linares (⚠ tp2/39)."
    assert view.turn_answers == [first, last]  # nothing repeated
    view.deleteLater()


def test_a_final_answer_already_shown_after_a_tool_line_adds_no_block(
    qapp: Any, archive: Any
) -> None:
    from app.ui.assistant.conversation_view import ConversationView

    view = ConversationView()
    view.add_user_turn("who?")
    view.append_text("Joan (oh1/1).")
    view.start_tool("c1", "dedalo_read_record", "Read oh1/1")
    answer = view.set_answer("Joan (oh1/1).", [VERIFIED])
    assert view.turn_answers == [answer]
    assert _anchors(answer) == [("oh1/1 · ca/es", "record:oh1/1")]
    view.deleteLater()
