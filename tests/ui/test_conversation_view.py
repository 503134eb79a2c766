"""The final answer is the single source of a turn's text: it is shown once, never twice."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from app.core.agent.citations import Citation
from app.core.models.scripted import Turn, call
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.assistant.conversation_view import ConversationView, align_answer
from app.ui.assistant.turn_widgets import ToolLineWidget
from tests.ui.conftest import emitted

VERIFIED = Citation("oh1", 2, "La riada", True, ("lg-cat",))


def _shown(widget: QWidget, view: ConversationView) -> bool:
    """Whether ``widget`` is shown: visible, or just added (the layout shows a new child on the
    next event-loop pass) and not hidden on purpose."""
    on_purpose = widget.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide)
    return widget.isVisibleTo(view) or not on_purpose


def _column(view: ConversationView) -> list[str]:
    """What the turn shows, in order: answer texts and tool lines."""
    out = []
    for widget in view.widgets():
        if isinstance(widget, AnswerWidget) and _shown(widget, view):
            out.append(widget.document().toPlainText())
        elif isinstance(widget, ToolLineWidget):
            out.append(f"[{widget.call_id}]")
    return out


def _view(archive: Any, *blocks: str) -> ConversationView:
    """A turn that streamed ``blocks`` with a tool call between each two."""
    view = ConversationView()
    view.add_user_turn("which?")
    for number, text in enumerate(blocks):
        if number:
            view.start_tool(f"c{number}", "dedalo_read_record", "Read")
            view.finish_tool(f"c{number}", "dedalo_read_record", True, "")
        view.append_text(text)
    return view


def test_text_before_a_tool_call_is_shown_once(make_window: Any) -> None:
    """Regression: the first model turn's text showed again in the block after the tool."""
    read = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 2}, "c1")
    window = make_window(
        [Turn(text="Let me look it up.", tool_calls=(read,)), Turn(text="It is (oh1/2).")]
    )
    with emitted(make_window.loop, window.assistant.turn_finished):
        window.assistant.send("Which interview?")
    view = window.assistant.view
    assert _column(view) == ["Let me look it up.", "[c1]", "It is (oh1/2 · ca)."]
    assert [w.markdown for w in view.turn_answers] == ["Let me look it up.", "It is (oh1/2)."]


def test_a_final_answer_that_differs_early_corrects_that_block_only(archive: Any) -> None:
    """Regression: a final answer not starting with the earlier blocks replaced the last block
    with the whole answer, so the earlier text showed twice."""
    view = _view(archive, "Let me look it up.", "It is (oh1/2).")
    view.set_answer("Let me check.It is (oh1/2).", [VERIFIED])
    assert _column(view) == ["Let me check.", "[c1]", "It is (oh1/2 · ca)."]
    view.deleteLater()


def test_only_the_text_not_yet_shown_is_added(archive: Any) -> None:
    view = _view(archive, "Let me look it up.")
    view.start_tool("c1", "dedalo_read_record", "Read")
    view.set_answer("Let me look it up.It is La riada.")
    assert _column(view) == ["Let me look it up.", "[c1]", "It is La riada."]
    view.set_answer("Let me look it up.It is La riada.")  # again: nothing new to show
    assert _column(view) == ["Let me look it up.", "[c1]", "It is La riada."]
    view.deleteLater()


def test_a_block_the_answer_does_not_hold_is_removed(archive: Any) -> None:
    view = _view(archive, "One.", "Two.", "Three.")
    view.set_answer("One.Three.")
    assert _column(view) == ["One.", "[c1]", "[c2]", "Three."]
    assert [w.markdown for w in view.turn_answers] == ["One.", "Three."]
    view.deleteLater()


def test_a_stored_answer_is_shown_in_one_block(archive: Any) -> None:
    view = ConversationView()
    view.add_user_turn("which?")
    answer = view.set_answer("It is La riada.")
    assert _column(view) == ["It is La riada."]
    assert view.turn_answers == [answer]
    view.clear()
    assert view.turn_answers == []  # nothing of the cleared turn is touched again
    view.deleteLater()


def test_align_answer_finds_what_is_already_shown() -> None:
    assert align_answer("ab", ["a", "b"]) == (2, 2, "")
    assert align_answer("abc", ["a", "b"]) == (2, 2, "c")
    assert align_answer("xb", ["a", "b"]) == (0, 1, "x")
    assert align_answer("ayc", ["a", "b", "c"]) == (1, 2, "y")
    assert align_answer("ac", ["a", "b", "c"]) == (1, 2, "")
    assert align_answer("aa", ["a", "a", "a"]) == (2, 3, "")
    assert align_answer("", []) == (0, 0, "")
    assert align_answer("", ["a"]) == (0, 1, "")
