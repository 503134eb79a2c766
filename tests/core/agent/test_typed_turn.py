"""One typed turn: a typed request in, typed frames out, dicts only on the wire; the plan desk
announces each status it sets; the session starts the conversation and names it; a run works on
its own loop thread, never on its caller's."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator

import pytest

from app.core.agent.citations import Citation
from app.core.agent.events import (
    ErrorEvent,
    FinalEvent,
    StartEvent,
    TextEvent,
    ToolResultEvent,
    from_wire,
    to_wire,
)
from app.core.agent.plan_types import ChangePlan, PendingPlan, PlanOp, PlanState
from app.core.agent.request import ChatRequest, Image, RecordContext
from app.core.agent.run_thread import THREAD_NAME, RunThread
from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.core.agent.conftest import SessionFactory, collect
from tests.core.agent.test_plans import ANNA_OPS, ANNA_QUESTION

PLAN = ChangePlan(
    summary="Add Anna",
    ops=(PlanOp("p1", "dedalo_create_record", {"section_tipo": "rsc197"}, "create her"),),
    plan_hash="h" * 64,
    pending_id="plan-1",
)


def test_a_final_frame_is_typed_and_its_wire_form_reads_back_the_same() -> None:
    final = FinalEvent(
        answer="Anna (rsc197/1).",
        stop="change_plan",
        change_plan=PendingPlan(PLAN, "plan-1", restricted_text=True),
        history=[{"role": "user", "text": "add Anna"}],
        transcript_summary=[{"turn": 1, "tool": "propose_change_plan", "ok": True}],
        usage={"input_tokens": 3},
        turns=1,
        model="local",
        citations=(Citation("rsc197", 1, "Anna", True, ("lg-cat",), "00:01:10"),),
        refusal=ErrorEvent.from_error(ArxiuError("mcp.egress_restricted", "No.", hint="Local.")),
    )
    wire = json.loads(json.dumps(to_wire(final)))
    plan = wire["data"]["change_plan"]
    assert (plan["pending_id"], plan["restricted_text"], plan["plan_hash"]) == (
        "plan-1",
        True,
        "h" * 64,
    )
    assert wire["data"]["citations"] == [
        {
            "section_tipo": "rsc197",
            "section_id": 1,
            "key": "rsc197/1",
            "label": "Anna",
            "verified": True,
            "langs": ["lg-cat"],
            "timecode": "00:01:10",
        }
    ]
    assert from_wire(wire["event"], wire["data"]) == final
    assert "proposed" not in wire["data"]
    bare = FinalEvent("a", "end_turn", None, [], [], {}, 1, "local")
    assert "refusal" not in bare.to_dict()  # the frame's keys only grow when it carries one


def test_an_error_frame_is_the_errors_own_payload() -> None:
    error = ArxiuError("ai.provider_failed", "Down.", hint="Retry.", details={"status": 502})
    event = ErrorEvent.from_error(error)
    assert event.to_dict() == error.to_dict()
    assert from_wire("error", event.to_dict()) == event
    assert not event.restricted


def test_the_start_frame_names_a_stored_conversation_only() -> None:
    assert StartEvent("local", "read", "local").to_dict() == {
        "model": "local",
        "mode": "read",
        "egress": "local",
    }
    named = StartEvent("local", "read", "local", "c1")
    assert named.to_dict()["conversation_id"] == "c1"
    assert from_wire("start", named.to_dict()) == named


def test_a_typed_request_and_its_body_are_one() -> None:
    request = ChatRequest(
        "hi",
        model="cloud",
        history=({"role": "user", "text": "a"},),
        context=RecordContext("oh1", 1, "the flood"),
        images=(Image("image/png", b"\x89PNG"),),
        mode="write",
        effort="low",
    )
    assert ChatRequest.from_dict(json.loads(json.dumps(request.to_dict()))) == request
    assert ChatRequest("hi").to_dict() == {"question": "hi"}


async def test_the_session_starts_the_conversation_names_it_and_refuses_without_one(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    with pytest.raises(ArxiuError):
        await session.chat(ChatRequest("x" * 40_000), stored=True)
    assert await session.conversations.summaries() == []  # a refused request made none
    models["local"].extend(Turn(text="Five sections."), Turn(text="Still five."))
    first = await collect(await session.chat(ChatRequest("sections?"), stored=True))
    start = first[0]
    assert isinstance(start, StartEvent) and start.conversation_id is not None
    (summary,) = await session.conversations.summaries()
    assert summary.id == start.conversation_id
    again = await collect(
        await session.chat(ChatRequest("sure?"), conversation_id=start.conversation_id)
    )
    assert isinstance(again[0], StartEvent) and again[0].conversation_id == start.conversation_id
    stored = await session.conversations.stored(start.conversation_id)
    assert [entry["text"] for entry in stored.history] == [
        "sections?",
        "Five sections.",
        "sure?",
        "Still five.",
    ]
    sent = models["local"].calls[-1].messages
    assert [m.content for m in sent if m.role == "assistant"] == ["Five sections."]


async def test_the_desk_announces_every_status_it_sets(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    heard: list[PlanState] = []
    stop = session.plans.listen(heard.append)
    cid = (await session.conversations.new()).id

    async def propose() -> PendingPlan:
        models["local"].extend(
            Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS}),))
        )
        request = ChatRequest(ANNA_QUESTION, mode="write")
        final = (await collect(await session.chat(request, conversation_id=cid)))[-1]
        assert isinstance(final, FinalEvent) and final.change_plan is not None
        assert final.proposed is None  # the book holds it now
        return final.change_plan

    first = await propose()
    second = await propose()  # supersedes the first
    assert [(s.plan_id, s.status) for s in heard] == [(first.pending_id, "superseded")]
    await session.plans.resolve(second.pending_id, True)
    assert [s.status for s in heard[1:]] == ["applying", "applied"]
    assert heard[-1].report is not None and heard[-1].report.ok
    elsewhere = make_session()  # another window: its desk, not this one, declines
    with pytest.raises(ArxiuError):
        await elsewhere.plans.resolve(first.pending_id, False)
    assert len(heard) == 3
    with pytest.raises(ArxiuError) as resolved:  # resolved already: it says how it stands
        await session.plans.resolve(second.pending_id, False)
    assert resolved.value.code == "mcp.plan_resolved"
    assert [(s.plan_id, s.status) for s in heard[3:]] == [(second.pending_id, "applied")]
    third = await propose()
    stop()
    await session.plans.supersede_conversation(cid)
    assert len(heard) == 4  # no longer listening
    record = await session.plans.get(third.pending_id)
    assert record is not None and record.status == "superseded"


async def test_a_run_works_on_its_own_loop_thread(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_count_records", {"section_tipo": "rsc197"}),)),
        Turn(text="There are people."),
    )
    threads: set[str] = set()
    oh_archive.db.trace(lambda _statement: threads.add(threading.current_thread().name))
    try:
        events = await collect(await make_session().chat(ChatRequest("how many people?")))
    finally:
        oh_archive.db.trace(None)
    assert any(isinstance(e, ToolResultEvent) and e.ok for e in events)
    assert isinstance(events[-1], FinalEvent)
    assert threads and threading.current_thread().name not in threads
    assert THREAD_NAME in threads  # the tool's reads ran on the runs' loop


async def _numbers(seen: list[str], closed: list[str]) -> AsyncIterator[int]:
    try:
        for number in range(100):
            seen.append(threading.current_thread().name)
            await asyncio.sleep(0)
            yield number
    finally:
        closed.append(threading.current_thread().name)


async def _broken() -> AsyncIterator[int]:
    yield 1
    raise ZeroDivisionError("a bug")


async def test_the_relay_pulls_one_item_at_a_time_closes_there_and_raises_bugs() -> None:
    runs = RunThread("arxiu-agent-test")
    seen: list[str] = []
    closed: list[str] = []
    relay = runs.relay(_numbers(seen, closed))
    got = [await anext(relay) for _ in range(3)]
    assert got == [0, 1, 2] and len(seen) == 3  # nothing made ahead of the caller
    await relay.aclose()  # type: ignore[attr-defined]
    assert set(seen) == {"arxiu-agent-test"} and closed == ["arxiu-agent-test"]
    with pytest.raises(ZeroDivisionError):
        async for _ in runs.relay(_broken()):
            pass
    assert await runs.call(asyncio.sleep(0, "done")) == "done"
    text = [e async for e in runs.relay(_texts())]
    assert [e.delta for e in text] == ["a", "b"]


async def _texts() -> AsyncIterator[TextEvent]:
    yield TextEvent("a")
    yield TextEvent("b")


def test_a_frame_of_another_shape_is_refused_and_a_newer_servers_keys_are_dropped() -> None:
    newer = {"id": "t1", "name": "dedalo_search", "ok": True, "code": None, "took_ms": 3}
    assert from_wire("tool_result", newer) == ToolResultEvent("t1", "dedalo_search", True)
    assert from_wire("text", {"delta": "Hi", "lang": "ca"}) == TextEvent("Hi")
    bad: list[tuple[str, dict[str, object]]] = [
        ("start", {"model": "local", "mode": "edit", "egress": "local"}),
        ("iteration", {"n": "1", "max": 3}),
        ("tool_result", {"id": "t1", "name": "dedalo_search"}),
        ("text", {"delta": 3}),
        ("final", {"answer": "a", "stop": "done"}),
        ("final", {"answer": "a", "stop": "end_turn", "history": [{"role": "system", "text": ""}]}),
        ("final", {"answer": "a", "stop": "end_turn", "usage": {"input_tokens": "3"}}),
        ("final", {"answer": "a", "stop": "end_turn", "citations": [{"section_tipo": "oh1"}]}),
        ("error", {"message": "no code"}),
    ]
    for name, data in bad:
        with pytest.raises(ValueError):
            from_wire(name, json.loads(json.dumps(data)))
    with pytest.raises(KeyError):
        from_wire("confirm_required", {})
