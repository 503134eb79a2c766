"""A model's reply with a date the cited record does not hold shows it marked (issue 21, item
2): the year behind a ⚠ in the warning colour with the tooltip "not in the cited records", the
verified citation's tooltip saying it vouches for the record, not the sentence; and the same
marks when the conversation is reopened. A scripted model reads a person born in 1962 and
writes 1963."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive
from app.core.models.scripted import Turn, call
from app.ui import i18n
from app.ui.assistant.answer_widget import WARNING_COLOUR, AnswerWidget
from tests.ui.assistant.test_reopened_citations import answers, ask, reopen
from tests.ui.conftest import build_archive

READ = call("dedalo_read_record", {"section_tipo": "rsc197", "section_id": 4}, "r1")
ANSWER = "Anna Ferrer (rsc197/4) was born in 1962 and left the village in 1963."
NOT_IN_RECORDS = "Not in the cited records: no record this run read holds it."
VOUCHES = (
    "Verified: a tool in this run returned this record. This vouches for the record, "
    "not for the sentence that cites it."
)


@pytest.fixture
def ui_archive(tmp_path: Path) -> Iterator[Archive]:
    """The small UI archive with a person born in 1962 (``rsc197/4``)."""
    archive = build_archive(tmp_path / "archive")
    archive.create_record(
        "rsc197",
        {
            "rsc197_name": [{"lang": "lg-nolan", "value": "Anna Ferrer"}],
            "rsc197_birth": [{"lang": "lg-nolan", "value": "1962"}],
        },
    )
    yield archive
    archive.close()


def tips(answer: AnswerWidget) -> list[tuple[str, str, bool]]:
    """Every stretch of text with a tooltip: (text, tooltip, in the warning colour)."""
    out = []
    block = answer.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            fmt = fragment.charFormat()
            if fmt.toolTip():
                warning = fmt.foreground().color() == WARNING_COLOUR
                out.append((fragment.text(), fmt.toolTip(), warning))
            fragments += 1
        block = block.next()
    return out


def test_a_year_the_cited_record_does_not_hold_is_marked_live_and_reopened(
    make_window: Any,
) -> None:
    window = make_window([Turn(tool_calls=(READ,)), Turn(text=ANSWER)])
    ask(make_window, window, "When was Anna Ferrer born?")
    [answer] = answers(window)
    text = answer.toPlainText()
    assert "in 1963⚠." in text and "1962⚠" not in text and "1962 and" in text
    assert "record:rsc197/4" in answer.toHtml()
    live = tips(answer)
    assert ("1963⚠", NOT_IN_RECORDS, True) in live
    assert [tip for shown, tip, _ in live if "rsc197/4" in shown] == [VOUCHES]
    spot = answer.document().find("1963⚠")
    assert spot.charFormat().toolTip() == NOT_IN_RECORDS  # what hovering the mark shows
    reopen(make_window, window, window.assistant.conversation_id)
    [again] = answers(window)
    assert again.toPlainText() == text and tips(again) == live


def test_the_tooltips_are_translated() -> None:
    for lang in ("ca", "es"):
        table = i18n.load_table(lang)
        assert table.get(NOT_IN_RECORDS) and table.get(VOUCHES), lang
