"""The assistant panel over the real session with a scripted model."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QUrl

from app.core.errors import ModelError
from app.core.json_types import JsonObject
from app.core.models.scripted import Turn, call
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.turn_widgets import ErrorBanner, NoticeLabel, ToolLineWidget
from tests.ui.conftest import EXTERNAL, LOCAL, emitted, key, run
from tests.ui.signals import not_emitted

PLAN: JsonObject = {
    "summary": "Add Anna Pujol and link her as informant of oh1/3.",
    "ops": [
        {
            "op_id": "p1",
            "tool": "dedalo_find_or_create",
            "args": {"section_tipo": "rsc197", "match": {"rsc197_name": "Anna Pujol"}},
            "summary": "Find or create Anna Pujol",
        },
        {
            "op_id": "l1",
            "tool": "dedalo_portal_link",
            "args": {
                "section_tipo": "oh1",
                "section_id": 3,
                "field": "oh1_informant",
                "target": {"ref": "p1"},
            },
            "summary": "Link her as informant",
        },
    ],
}


def of_type(window: Any, kind: type) -> list[Any]:
    return [w for w in window.assistant.view.widgets() if isinstance(w, kind)]


TURN_S = 20.0
"""How long a scripted turn may take (a failure, not a figure: a hung turn fails the test)."""


def ask(factory: Any, window: Any, question: str) -> None:
    """Send ``question`` and return once its turn is over (the panel's ``turn_finished``)."""
    with emitted(factory.loop, window.assistant.turn_finished, timeout=TURN_S):
        window.assistant.send(question)


def click_and_wait(factory: Any, button: Any, signal: Any) -> None:
    """Click ``button`` and return once ``signal`` was emitted."""
    with emitted(factory.loop, signal, timeout=TURN_S):
        button.click()


def test_streamed_text_arrives_coalesced(make_window: Any) -> None:
    text = "The valley was flooded in 1962. " * 12
    window = make_window([Turn(text=text, chunk_size=4)])
    ask(make_window, window, "When was the valley flooded?")
    answers = of_type(window, AnswerWidget)
    assert [a.markdown for a in answers] == [text]
    deltas = len(text) // 4
    assert 1 <= window.assistant.bridge.emissions < deltas


def test_stop_keeps_the_partial_answer(make_window: Any) -> None:
    window = make_window([Turn(text="x" * 20000, chunk_size=1)])
    panel = window.assistant
    with emitted(make_window.loop, panel.bridge.text_received, timeout=TURN_S):
        panel.send("Tell me everything")
    assert of_type(window, AnswerWidget)
    assert panel.composer.stop_button.isVisible()
    click_and_wait(make_window, panel.composer.stop_button, panel.turn_finished)
    answer = of_type(window, AnswerWidget)[0].markdown
    assert 0 < len(answer) < 20000
    assert any("Stopped" in n.text() for n in of_type(window, NoticeLabel))
    assert panel.composer.send_button.isVisible()


def test_one_line_per_tool_call_with_its_outcome(make_window: Any) -> None:
    script = [
        Turn(
            tool_calls=(
                call("dedalo_count_records", {"section_tipo": "rsc197"}, "c1"),
                call("dedalo_read_record", {"section_tipo": "nope", "section_id": 1}, "c2"),
            )
        ),
        Turn(text="There are 3 people."),
    ]
    window = make_window(script)
    ask(make_window, window, "How many people?")
    lines = of_type(window, ToolLineWidget)
    assert [line.call_id for line in lines] == ["c1", "c2"]
    assert lines[0].outcome == "ok"
    assert lines[1].outcome not in (None, "ok")  # the registry's error code
    assert lines[1].outcome in lines[1].text()


def test_a_citation_click_opens_the_record(make_window: Any) -> None:
    read = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 2})
    window = make_window(
        [Turn(tool_calls=(read,)), Turn(text="See La riada (oh1/2), not Linares (tp2/39).")]
    )
    ask(make_window, window, "Which interview?")
    answer = of_type(window, AnswerWidget)[-1]
    assert "record:oh1/2" in answer.toHtml()  # verified: the tool returned it
    assert "record:tp2" not in answer.toHtml() and "⚠ tp2/39" in answer.toPlainText()
    answer.anchorClicked.emit(QUrl("record:oh1/2"))
    assert window.record_view.key == key("oh1", 2)
    assert window.sections.current_tipo() == "oh1"


def propose(make_window: Any) -> tuple[Any, ConfirmCardWidget]:
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    cards = of_type(window, ConfirmCardWidget)
    assert len(cards) == 1
    return window, cards[0]


def test_apply_changes_the_archive_and_writes_audit_rows(make_window: Any) -> None:
    window, card = propose(make_window)
    archive = make_window.archive
    assert [row.op.tool for row in card.rows] == ["dedalo_find_or_create", "dedalo_portal_link"]
    args = card.rows[0].findChild(type(card.status), "opWords")
    assert args is not None and "Anna Pujol" in args.text()
    click_and_wait(make_window, card.apply_button, window.refreshed)  # the window read again
    assert card.state == "applied"
    assert [row.state for row in card.rows] == ["applied", "applied"]
    created = key("rsc197", 4)
    assert archive.record_label(created) == "Anna Pujol"
    assert created in [link.target for link in archive.links_from(key("oh1", 3))]
    assert len(archive.audit_rows()) == 2
    assert window.sections.item(1).data(Qt.ItemDataRole.UserRole + 1) == 4  # count refreshed


def test_cancel_writes_nothing(make_window: Any) -> None:
    window, card = propose(make_window)
    with not_emitted(make_window.qtbot, make_window.loop, window.assistant.archive_changed):
        click_and_wait(make_window, card.cancel_button, card.resolved)
    assert card.state == "declined"
    assert make_window.archive.count_records("rsc197") == 3
    assert make_window.archive.audit_rows() == []
    assert not card.apply_button.isVisible()


def test_a_new_message_supersedes_a_pending_card(make_window: Any) -> None:
    window, card = propose(make_window)
    make_window.models[0].extend(Turn(text="Forget it."))
    with not_emitted(make_window.qtbot, make_window.loop, window.assistant.archive_changed):
        ask(make_window, window, "Actually, never mind.")
    assert card.state == "superseded"
    assert "superseded" in card.status.text()
    session = window.services.session_now
    record = run(make_window.loop, session.plans.get(card.pending_id))
    assert record is not None and record.status == "superseded"
    assert make_window.archive.audit_rows() == []


def test_an_error_banner_carries_the_hint_and_retry(make_window: Any) -> None:
    failure = ModelError(
        "ai.provider_failed",
        "The model server stopped answering.",
        hint="Check that the server is running.",
        retryable=True,
    )
    window = make_window([Turn(text="Partial", error=failure), Turn(text="Now it works.")])
    ask(make_window, window, "Hello?")
    banners = of_type(window, ErrorBanner)
    assert len(banners) == 1
    assert banners[0].error.code == "ai.provider_failed"
    assert banners[0].hint.text() == "Check that the server is running."
    assert not banners[0].retry_button.isHidden()
    click_and_wait(make_window, banners[0].retry_button, window.assistant.turn_finished)
    assert of_type(window, AnswerWidget)[-1].markdown == "Now it works."


def test_model_picker_shows_privacy_badges_and_efforts(make_window: Any) -> None:
    window = make_window(external=True)
    picker = window.assistant.picker
    assert picker.current_id() == EXTERNAL["id"]
    assert picker.badge.text() == "external"
    assert picker.badge.property("badge") == "external"
    assert [picker.effort.itemData(i) for i in range(picker.effort.count())] == [
        None,
        "low",
        "high",
    ]
    picker.select(LOCAL["id"])
    assert picker.badge.text() == "local / private"
    assert picker.effort.isHidden()


def test_restricted_refusal_offers_the_local_model(make_window: Any) -> None:
    script = [
        Turn(
            tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}, "r1"),)
        ),
        Turn(text="That record is restricted."),
        Turn(text="El pantà de la vall (oh1/1) tells how the village was emptied."),
    ]
    window = make_window(script, external=True)
    ask(make_window, window, "Summarise oh1/1")
    line = of_type(window, ToolLineWidget)[0]
    assert line.outcome == "mcp.egress_restricted"
    banner = of_type(window, ErrorBanner)[-1]
    assert not banner.local_button.isHidden()
    click_and_wait(make_window, banner.local_button, window.assistant.turn_finished)
    assert not window.assistant.picker.is_external()
    assert "village was emptied" in of_type(window, AnswerWidget)[-1].markdown


def test_conversations_are_listed_renamed_and_exported(make_window: Any, tmp_path: Any) -> None:
    window = make_window([Turn(text="Three people.")])
    ask(make_window, window, "How many people are there?")
    view = window.assistant.conversations
    run(make_window.loop, view.reload())
    assert view.list.count() == 1
    cid = window.assistant.conversation_id
    run(make_window.loop, view.rename(cid, "People count"))
    assert view.list.item(0).text().startswith("People count")
    run(make_window.loop, view.export(cid, tmp_path / "c.md"))
    assert "Three people." in (tmp_path / "c.md").read_text(encoding="utf-8")
    run(make_window.loop, view.delete(cid))
    assert view.list.count() == 0
    assert window.assistant.conversation_id is None
