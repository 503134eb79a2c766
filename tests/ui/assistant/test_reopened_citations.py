"""A reopened conversation is the same conversation: its answers' citations are links to the
records a tool returned, and the unverified ones keep their warning mark, in the panel and in
the Markdown export (issue 21, item 5). Asked on a copy of the demo archive with a scripted
model that reads one interview and cites it and one it never read."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, open_archive
from app.core.models.scripted import Turn, call
from app.ui.assistant.answer_widget import WARNING_COLOUR, AnswerWidget
from tests.ui.conftest import emitted, run

TURN_S = 20.0
READ = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}, "r1")
ANSWER = (
    "Rosa Vilaseca ho explica a «Quan ens van fer marxar de Sant Romà» (oh1/1 @00:00:05); "
    "també en parla «El pantà es va menjar el poble» (oh1/2)."
)
"""The model cites oh1/1, which the tool returned, and oh1/2, which no tool returned."""
FOLLOW_UP = "Sí: la mateixa entrevista (oh1/1)."


@pytest.fixture
def ui_archive(demo_archive_dir: Path, tmp_path: Path) -> Iterator[Archive]:
    """A copy of the demo archive (overrides the small archive ``make_window`` opens)."""
    folder = tmp_path / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    yield archive
    archive.close()


def answers(window: Any) -> list[AnswerWidget]:
    return [w for w in window.assistant.view.widgets() if isinstance(w, AnswerWidget)]


def looks(answer: AnswerWidget) -> tuple[list[str], str, list[str]]:
    """What a person sees of an answer: its record links, its text, its warning tooltips."""
    links = re.findall(r'href="(record:[^"]+)"', answer.toHtml())
    tips = []
    block = answer.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            fmt = fragment.charFormat()
            if fmt.toolTip() and fmt.foreground().color() == WARNING_COLOUR:
                tips.append(fragment.text())
            fragments += 1
        block = block.next()
    return links, answer.toPlainText(), tips


def ask(make_window: Any, window: Any, question: str) -> None:
    with emitted(make_window.loop, window.assistant.turn_finished, timeout=TURN_S):
        window.assistant.send(question)


def reopen(make_window: Any, window: Any, conversation_id: str) -> None:
    panel = window.assistant
    panel.new_conversation()
    assert not answers(window)
    with emitted(make_window.loop, panel.conversation_opened, timeout=TURN_S):
        panel.open_conversation(conversation_id)


def test_a_reopened_conversation_keeps_its_links_and_marks(make_window: Any) -> None:
    window = make_window([Turn(tool_calls=(READ,)), Turn(text=ANSWER), Turn(text=FOLLOW_UP)])
    ask(make_window, window, "Qui parla de marxar de Sant Romà?")
    ask(make_window, window, "Quan es va acabar el pantà?")  # no back-reference: a new search
    live = [looks(a) for a in answers(window)]
    assert live[0][0] == ["record:oh1/1#tc=00:00:05"]  # verified: the tool returned it
    assert "⚠ oh1/2" in live[0][1] and live[0][2] == ["⚠ oh1/2"]
    assert live[1][0] == [] and "⚠ oh1/1" in live[1][1]  # that run's tools returned nothing
    cid = window.assistant.conversation_id
    reopen(make_window, window, cid)
    assert [looks(a) for a in answers(window)] == live
    assert window.assistant.conversation_id == cid


def test_the_markdown_export_keeps_the_marks(make_window: Any, tmp_path: Path) -> None:
    window = make_window([Turn(tool_calls=(READ,)), Turn(text=ANSWER)])
    ask(make_window, window, "Qui parla de marxar de Sant Romà?")
    view = window.assistant.conversations
    cid = window.assistant.conversation_id
    run(make_window.loop, view.export(cid, tmp_path / "c.md"))
    text = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert "Sant Romà» (✓ oh1/1 @00:00:05); també" in text
    assert "el poble» (⚠ oh1/2)." in text
    assert "⚠ 1 of 2 citations unverified" in text and "oh1/2" in text.split("⚠ 1 of 2")[1]
    assert "Qui parla de marxar de Sant Romà?" in text  # the question, unmarked
