"""The confirm card: failure reasons, ambiguous matches, the laundering flag, writes off."""

from __future__ import annotations

import gc
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plan_book import NewPlan
from app.core.agent.plan_types import PendingPlan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.errors import ArxiuError
from app.core.models.scripted import Turn, call
from app.core.tools.registry import build_registry
from app.ui.assistant.confirm_card import ConfirmCardWidget
from tests.ui.conftest import emitted, key, run
from tests.ui.test_assistant_panel import PLAN, ask, click_and_wait, of_type


@pytest.fixture(autouse=True)
def collect_on_the_gui_thread(qapp: Any) -> Iterator[None]:
    """Free this test's cards and their wrapper cycles here, on the GUI thread (a later
    collection on a worker thread would make Qt warn about their timers)."""
    yield
    for widget in qapp.topLevelWidgets():
        if isinstance(widget, ConfirmCardWidget):
            widget.close()
            widget.deleteLater()
    qapp.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def person(op_id: str, name: str) -> dict[str, Any]:
    return {
        "op_id": op_id,
        "tool": "dedalo_create_record",
        "args": {"section_tipo": "rsc197", "values": {"rsc197_name": name}},
        "summary": f"create {name}",
    }


async def applied_card(archive: Archive, ops: list[dict[str, Any]], qtbot: Any) -> Any:
    set_writes_allowed(archive, True)
    registry = build_registry()
    plan = validate_plan({"summary": "test", "ops": ops}, archive, registry)
    card = ConfirmCardWidget(PendingPlan(plan, "p"))
    report = await apply_plan(plan.to_dict(), plan.plan_hash, ApplyContext(archive, registry))
    card.show_report(report)
    return card


def outcome_texts(card: ConfirmCardWidget) -> list[str]:
    return [f"{row.outcome.text()} {row.detail.text()}" for row in card.rows]


def test_a_failed_op_shows_its_reason(ui_archive: Archive, qtbot: Any, qloop: Any) -> None:
    ops = [
        person("c1", "Temporary"),
        {
            "op_id": "d1",
            "tool": "dedalo_delete_record",
            "args": {"section_tipo": "rsc197", "section_id": {"ref": "c1"}},
            "summary": "delete it again",
        },
        {
            "op_id": "s1",
            "tool": "dedalo_set_field",
            "args": {
                "section_tipo": "rsc197",
                "section_id": {"ref": "c1"},
                "field": "rsc197_name",
                "value": "Renamed",
            },
            "summary": "rename the deleted record",
        },
    ]
    card = run(qloop, applied_card(ui_archive, ops, qtbot))
    assert card.state == "failed"
    assert [row.state for row in card.rows] == ["applied", "applied", "failed"]
    failed = outcome_texts(card)[2]
    assert "does not exist" in failed and "archive.record_not_found" in failed


def test_an_ambiguous_match_shows_the_candidates(
    ui_archive: Archive, qtbot: Any, qloop: Any
) -> None:
    find = {
        "op_id": "f1",
        "tool": "dedalo_find_or_create",
        "args": {"section_tipo": "rsc197", "match": {"rsc197_name": "Rosa Twin"}},
        "summary": "find Rosa Twin",
    }
    card = run(
        qloop,
        applied_card(ui_archive, [person("a", "Rosa Twin"), person("b", "Rosa Twin"), find], qtbot),
    )
    failed = outcome_texts(card)[2]
    assert "mcp.match_ambiguous" in failed
    assert "Rosa Twin (rsc197/4)" in failed and "Rosa Twin (rsc197/5)" in failed
    assert ui_archive.count_records("rsc197") == 5  # the ambiguous op created nothing


def test_a_flagged_plan_needs_the_second_confirmation(make_window: Any, tmp_path: Path) -> None:
    """A local run that read a restricted interview proposes writing into People (open)."""
    read = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1})
    window = make_window(
        [Turn(tool_calls=(read,)), Turn(tool_calls=(call("propose_change_plan", PLAN),))]
    )
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Copy the informant from oh1/1 into a new person")
    (card,) = of_type(window, ConfirmCardWidget)
    assert card.restricted_text and card.warning.isVisibleTo(card)
    assert "restricted records" in card.warning.text()
    assert not card.apply_button.isEnabled()
    session = window.services.session_now
    try:
        run(make_window.loop, session.plans.resolve(card.pending_id, True))
    except ArxiuError as error:
        assert error.code == "mcp.plan_needs_confirmation"
    else:
        raise AssertionError("a flagged plan was applied without the second confirmation")
    assert run(make_window.loop, session.plans.get(card.pending_id)).status == "pending"
    card.second_confirm.setChecked(True)
    assert card.apply_button.isEnabled()
    click_and_wait(make_window, card.apply_button, card.resolved)
    assert card.state == "applied"
    assert key("rsc197", 4) in [
        link.target for link in make_window.archive.links_from(key("oh1", 3))
    ]
    card.grab().save(str(tmp_path / "flagged-card.png"))


def test_with_writes_off_there_is_no_write_mode_and_apply_is_refused(make_window: Any) -> None:
    window = make_window(write_allowed=False)
    modes = [window.assistant.mode.itemData(n) for n in range(window.assistant.mode.count())]
    assert modes == ["read"]
    session = window.services.session_now
    registry = build_registry()
    plan = validate_plan(PLAN, make_window.archive, registry)
    entry = NewPlan(plan, conversation_id=None, model_id="local", egress="local")
    record = run(make_window.loop, session.plans.book.add(entry))
    try:
        run(make_window.loop, session.plans.resolve(record.id, True))
    except ArxiuError as error:
        assert error.code == "mcp.write_disabled"
    else:
        raise AssertionError("an apply went through with writes off")
    assert make_window.archive.audit_rows() == []


def test_a_refused_message_leaves_the_card_pending(make_window: Any) -> None:
    """The panel no longer marks a card superseded before the core decides."""
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    (card,) = of_type(window, ConfirmCardWidget)
    ask(make_window, window, "x" * 40_000)  # refused before anything streams
    session = window.services.session_now
    assert run(make_window.loop, session.plans.get(card.pending_id)).status == "pending"
    assert card.state == "pending" and card.apply_button.isEnabled()
    click_and_wait(make_window, card.apply_button, card.resolved)
    assert card.state == "applied"


def test_an_interrupted_apply_resumes_from_its_card(make_window: Any) -> None:
    """Reopened after a crash mid-apply, the card says so and Apply finishes the plan."""
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    ask(make_window, window, "Add Anna Pujol as informant of oh1/3")
    (card,) = of_type(window, ConfirmCardWidget)
    archive = make_window.archive
    gone = f"{socket.gethostname()}|1|0.000|dead"  # pid 1 started long before: not its owner
    archive.db.write(
        lambda conn: conn.execute(
            "UPDATE plans SET status = 'applying', owner = ? WHERE id = ?",
            (gone, card.pending_id),
        )
    )
    conversation_id = window.assistant.conversation_id
    window.assistant.new_conversation()
    with emitted(make_window.loop, window.assistant.conversation_opened):
        window.assistant.open_conversation(conversation_id)
    (reopened,) = of_type(window, ConfirmCardWidget)
    assert reopened.state == "applying" and "Interrupted" in reopened.status.text()
    assert reopened.apply_button.isEnabled()
    click_and_wait(make_window, reopened.apply_button, reopened.resolved)
    assert reopened.state == "applied"
    assert key("rsc197", 4) in [link.target for link in archive.links_from(key("oh1", 3))]


def test_a_delete_with_unlink_reports_each_link_it_removed(
    ui_archive: Archive, qtbot: Any, qloop: Any
) -> None:
    delete = {
        "op_id": "d1",
        "tool": "dedalo_delete_record",
        "args": {"section_tipo": "rsc197", "section_id": 1, "unlink": True},
        "summary": "delete Maria Vila and unlink her",
    }
    card = run(qloop, applied_card(ui_archive, [delete], qtbot))
    assert card.state == "applied"
    assert "unlinked from oh1/1 (oh1_informant)" in outcome_texts(card)[0]
    assert ui_archive.links_to(key("rsc197", 1)) == []


@pytest.mark.parametrize("lang", ["ca", "es"])
def test_the_second_confirmation_wraps_so_the_card_fits_the_panel(
    qapp: Any, qtbot: Any, ui_archive: Archive, lang: str
) -> None:
    """Its Catalan and Spanish texts are long: as a check box's own text they made the card
    wider than the assistant panel, with Apply out of sight."""
    from PySide6.QtCore import QPoint, Qt

    from app.ui import i18n

    translator = i18n.install_translator(qapp, lang)
    try:
        set_writes_allowed(ui_archive, True)
        plan = validate_plan(
            {"summary": "test", "ops": [person("p1", "Anna")]}, ui_archive, build_registry()
        )
        card = ConfirmCardWidget(PendingPlan(plan, "p", restricted_text=True))
        qtbot.addWidget(card)
        assert card.second_row.isVisibleTo(card)
        assert card.minimumSizeHint().width() < 360
        card.resize(340, card.heightForWidth(340) if card.hasHeightForWidth() else 600)
        card.show()
        label = card.second_row.findChildren(type(card.warning))[0]
        assert (
            label.text()
            == i18n.load_table(lang)["I have checked it: copy this text from restricted records"]
        )
        qtbot.mouseClick(label, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
        assert card.second_confirm.isChecked() and card.apply_button.isEnabled()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
