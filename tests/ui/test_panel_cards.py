"""The panel never decides a card's status and never guesses a refusal: it shows what the core
says. A plan reaches a card one way (fresh or reopened), a plan the core supersedes updates its
card at once (no poll: the plan book is never read from the GUI thread), and a restricted
refusal's banner is the core's own ``final`` frame's refusal."""

from __future__ import annotations

import re
import threading
from typing import Any

from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.models.scripted import Turn, call
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.turn_widgets import ErrorBanner
from tests.ui.conftest import emitted, run
from tests.ui.test_assistant_panel import PLAN, TURN_S, ask, of_type

PLAN_TABLE = re.compile(r"\bplans\b", re.IGNORECASE)


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


def propose(make_window: Any) -> tuple[Any, ConfirmCardWidget]:
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    (card,) = of_type(window, ConfirmCardWidget)
    return window, card


def shown(card: ConfirmCardWidget) -> tuple[Any, ...]:
    """What a card shows: its plan, rows, flags, buttons and status."""
    rows = [(row.op, row.findChild(type(card.status), "opWords").text()) for row in card.rows]
    return (
        card.pending,
        card.state,
        rows,
        card.warning.isVisibleTo(card),
        card.apply_button.isEnabled(),
        card.status.text(),
    )


def plan_book_reads_on_the_gui_thread(archive: Archive) -> list[str]:
    """Trace ``archive``: the statements on the ``plans`` table the GUI thread runs."""
    seen: list[str] = []
    main = threading.main_thread()

    def traced(statement: str) -> None:
        if threading.current_thread() is main and PLAN_TABLE.search(statement):
            seen.append(statement)

    archive.db.trace(traced)
    return seen


def test_a_reopened_conversations_card_comes_the_way_a_fresh_one_does(make_window: Any) -> None:
    """Regression: a fresh card and a reopened one were wired on two paths, from two dicts."""
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    panel = window.assistant
    panel.mode.setCurrentIndex(panel.mode.findData("write"))
    cards: list[ConfirmCardWidget] = []
    panel.cards.card_shown.connect(cards.append)
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    (fresh,) = of_type(window, ConfirmCardWidget)
    before = shown(fresh)
    conversation_id = panel.conversation_id
    panel.new_conversation()
    with emitted(make_window.loop, panel.conversation_opened):
        panel.open_conversation(conversation_id)
    (reopened,) = of_type(window, ConfirmCardWidget)
    assert cards == [fresh, reopened]  # both through PlanCards.show, the one path
    assert shown(reopened) == before  # the same typed PendingPlan, shown alike
    click_and_resolve(make_window, reopened)
    assert reopened.state == "applied"


def click_and_resolve(make_window: Any, card: ConfirmCardWidget) -> None:
    with emitted(make_window.loop, card.resolved, timeout=TURN_S):
        card.apply_button.click()


def test_a_plan_the_core_supersedes_updates_its_card_without_a_poll(make_window: Any) -> None:
    """Another front end supersedes the plan: the desk announces it, and the card says so
    at once, with no message sent from the panel and no plan-book read on the GUI thread."""
    window, card = propose(make_window)
    session = window.services.session_now
    reads = plan_book_reads_on_the_gui_thread(make_window.archive)
    try:
        with emitted(make_window.loop, card.resolved, timeout=TURN_S):
            other = run(
                make_window.loop, session.chat(ChatRequest("hi"), supersedes=card.pending_id)
            )
            run(make_window.loop, _drain(other))
        assert card.state == "superseded" and "superseded" in card.status.text()
        assert not card.apply_button.isVisible()
        ask(make_window, window, "x" * 40_000)  # refused before anything streams
        assert card.state == "superseded"
    finally:
        make_window.archive.db.trace(None)
    assert reads == []
    record = run(make_window.loop, session.plans.get(card.pending_id))
    assert record is not None and record.status == "superseded"


def test_a_restricted_refusals_banner_is_the_cores_event(make_window: Any) -> None:
    """Regression: the panel inferred the refusal from a tool's code string and made up its
    own error event."""
    read = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}, "r1")
    window = make_window([Turn(tool_calls=(read,)), Turn(text="It is restricted.")], external=True)
    finals: list[FinalEvent] = []
    window.assistant.bridge.run_finished.connect(finals.append)
    ask(make_window, window, "Summarise oh1/1")
    (final,) = finals
    assert final.refusal is not None and final.refusal.restricted  # set by the core
    (banner,) = of_type(window, ErrorBanner)
    assert banner.error is final.refusal
    assert banner.error.message == "Restricted records are never sent to an external model."
    assert not banner.local_button.isHidden()
