"""The typed conversation: its wire form, rows written by older versions, its taint."""

from __future__ import annotations

import json

from app.core.agent.conversation_types import Conversation, TurnRecord
from app.core.agent.plan_types import ChangePlan, PlanOp, PlanRecord

PLAN = ChangePlan(
    summary="Add Anna Pujol",
    ops=(PlanOp("p1", "dedalo_create_record", {"section_tipo": "rsc197"}, "create her"),),
    plan_hash="h" * 64,
    pending_id="plan-1",
)


def test_the_wire_form_round_trips_with_the_plan_record() -> None:
    record = PlanRecord("plan-1", PLAN, "c1", "local", "local", status="declined")
    conversation = Conversation(
        id="c1",
        title="Anna",
        model="local",
        history=({"role": "user", "text": "Add Anna"}, {"role": "assistant", "text": "Done."}),
        transcript=(TurnRecord(at="2026-01-01T00:00:00+00:00", question="Add Anna"),),
        pending_plan=record,
    )
    wire = json.loads(json.dumps(conversation.to_dict()))
    assert wire["pending_plan"]["status"] == "declined"
    assert wire["pending_plan"]["plan"]["plan_hash"] == "h" * 64
    assert wire["transcript"][0]["question"] == "Add Anna"
    assert Conversation.from_dict(wire) == conversation
    assert conversation.stored()["pending_plan"] is None  # the plan book keeps the plan


def test_a_row_of_an_older_version_reads_without_its_missing_keys() -> None:
    row = {
        "id": "old",
        "title": None,
        "model": None,
        "history": [{"role": "user", "text": "hola"}, "not an entry"],
        "transcript": [{"question": "hola", "plan_status": "pending"}],
        "pending_plan": {"plan_hash": "h"},  # what the conversation itself kept once
    }
    conversation = Conversation.from_dict(row)
    assert conversation.title == "" and conversation.pending_plan is None
    assert conversation.history == ({"role": "user", "text": "hola"},)
    (turn,) = conversation.transcript
    assert (turn.question, turn.answer, turn.tainted) == ("hola", "", False)
    assert "plan_status" not in turn.to_dict()


def test_taint_is_read_from_every_turn_and_history_entry() -> None:
    clean = Conversation.new("x")
    assert not clean.tainted and clean.id and clean.history == ()
    answer = {"role": "assistant", "text": "secret", "tainted": True}
    assert Conversation(id="a", history=(answer,)).tainted
    turn = TurnRecord(at="", question="q", tainted=True)
    assert Conversation(id="b", transcript=(turn,)).tainted
