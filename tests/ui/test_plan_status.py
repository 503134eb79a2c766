"""A plan's status has one owner: a plan resolved in another window over the same archive is
never applied from a card that still shows it (regression: the status lived in three places,
the first window's memory among them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import qasync

from app.core.archive import Archive, open_archive
from app.core.models.scripted import Turn, call
from app.ui.assistant.confirm_card import ConfirmCardWidget
from tests.ui.conftest import WindowFactory, emitted
from tests.ui.signals import not_emitted
from tests.ui.test_assistant_panel import PLAN, ask, click_and_wait, of_type


@pytest.fixture
def other_window(qtbot: Any, qloop: qasync.QEventLoop, ui_archive: Archive) -> Iterator[Any]:
    """A second window over its own handle on the same archive folder (another process)."""
    archive = open_archive(ui_archive.location)
    factory = WindowFactory(qtbot, qloop, archive)
    yield factory
    factory.close_all()
    archive.close()


def test_a_plan_declined_in_another_window_is_not_applied_from_this_one(
    make_window: Any, other_window: Any
) -> None:
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    (card,) = of_type(window, ConfirmCardWidget)
    other = other_window()
    with emitted(other_window.loop, other.assistant.conversation_opened):
        other.assistant.open_conversation(window.assistant.conversation_id)
    (elsewhere,) = of_type(other, ConfirmCardWidget)
    assert elsewhere.pending_id == card.pending_id
    click_and_wait(other_window, elsewhere.cancel_button, elsewhere.resolved)
    assert elsewhere.state == "declined"
    with not_emitted(make_window.qtbot, make_window.loop, window.assistant.archive_changed):
        click_and_wait(make_window, card.apply_button, card.resolved)
    assert card.state != "applied", card.status.text()
    assert not card.apply_button.isVisible()
    archive = make_window.archive
    assert archive.count_records("rsc197") == 3
    assert archive.audit_rows() == []
