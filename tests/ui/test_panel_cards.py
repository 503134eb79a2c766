"""The panel never decides a card's status: after each message it shows what the core holds."""

from __future__ import annotations

from typing import Any

from app.core.models.scripted import Turn, call
from app.ui.assistant.confirm_card import ConfirmCardWidget
from tests.ui.conftest import run
from tests.ui.test_assistant_panel import PLAN, ask, of_type


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


def test_a_refused_message_shows_the_status_the_core_holds(make_window: Any) -> None:
    """Another front end superseded the plan; a refused message then refreshes the card."""
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    (card,) = of_type(window, ConfirmCardWidget)
    session = window.services.session_now
    other = run(make_window.loop, session.chat({"question": "hi"}, supersedes=card.pending_id))
    run(make_window.loop, _drain(other))
    assert session.plans.get(card.pending_id).status == "superseded"
    assert card.state == "pending"  # nothing told the panel yet
    ask(make_window, window, "x" * 40_000)  # refused before anything streams
    assert card.state == "superseded" and "superseded" in card.status.text()
    assert not card.apply_button.isVisible()
