"""Plan resolutions stay on record: superseded, declined and applied plans, after a restart too."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.agent.conversation_types import Conversation
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel, Turn
from app.core.session import AssistantSession
from tests.core.agent.conftest import SessionFactory, collect
from tests.core.agent.test_plans import anna_keys, propose


async def resolve_error(session: AssistantSession, pending_id: str) -> ArxiuError:
    with pytest.raises(ArxiuError) as caught:
        await session.plans.resolve(pending_id, True)
    return caught.value


async def say(session: AssistantSession, models: dict[str, ScriptedModel], cid: str) -> None:
    models["local"].extend(Turn(text="Fine."))
    await collect(
        await session.chat(ChatRequest.from_dict({"question": "never mind"}), conversation_id=cid)
    )


async def test_a_superseded_plan_stays_recorded_as_superseded(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    assert (await session.conversations.get(cid)).pending_plan.status == "pending"
    await say(session, models, cid)
    stored = (await session.conversations.get(cid)).pending_plan
    assert stored is not None
    assert stored.id == plan["pending_id"] and stored.status == "superseded"
    assert stored.plan.plan_hash == plan["plan_hash"]
    fresh = make_session()  # a restart: the resolution is read back from the archive
    record = await fresh.plans.get(plan["pending_id"])
    assert record is not None and record.status == "superseded"
    error = await resolve_error(fresh, plan["pending_id"])
    assert (error.code, error.details["status"]) == ("mcp.plan_resolved", "superseded")
    assert anna_keys(oh_archive) == []


async def plan_statuses(
    session: AssistantSession, conversation: Conversation
) -> list[tuple[str, str]]:
    """``(pending_id, status in the plan book)`` of each transcript turn that proposed a plan."""
    out = []
    for turn in conversation.transcript:
        if turn.change_plan:
            pending_id = turn.change_plan.pending_id
            assert pending_id is not None
            record = await session.plans.get(pending_id)
            assert record is not None
            out.append((pending_id, record.status))
    return out


async def test_a_newer_plan_takes_the_place_and_the_superseded_one_stays_on_record(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    first = await propose(session, models, cid)
    second = await propose(session, models, cid)
    conversation = await session.conversations.get(cid)
    assert conversation.pending_plan is not None
    assert conversation.pending_plan.id == second["pending_id"]
    assert conversation.pending_plan.status == "pending"
    assert await plan_statuses(session, conversation) == [
        (first["pending_id"], "superseded"),
        (second["pending_id"], "pending"),
    ]
    fresh = make_session()
    record = await fresh.plans.get(first["pending_id"])
    assert record is not None and record.status == "superseded"
    assert record.plan.plan_hash == first["plan_hash"]
    assert (await resolve_error(fresh, first["pending_id"])).code == "mcp.plan_resolved"
    assert await fresh.plans.resolve(second["pending_id"], True) is not None
    assert len(anna_keys(oh_archive)) == 1
    conversation = await fresh.conversations.get(cid)
    assert conversation.pending_plan is not None and conversation.pending_plan.status == "applied"
    assert (await plan_statuses(fresh, conversation))[1] == (second["pending_id"], "applied")


async def test_a_declined_plan_is_recorded_and_later_messages_keep_the_record(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    assert await session.plans.resolve(plan["pending_id"], False) is None
    await say(session, models, cid)
    stored = (await session.conversations.get(cid)).pending_plan
    assert stored is not None and (stored.id, stored.status) == (plan["pending_id"], "declined")
    record = await make_session().plans.get(plan["pending_id"])
    assert record is not None and record.status == "declined"
    assert (await make_session().plans.get("no-such-plan")) is None


async def test_reset_supersedes_the_pending_plan_and_keeps_its_record(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    (await session.conversations.reset(cid))
    conversation = await session.conversations.get(cid)
    assert conversation.history == () and conversation.transcript == ()
    assert conversation.pending_plan is not None
    assert conversation.pending_plan.status == "superseded"
    error = await resolve_error(make_session(), plan["pending_id"])
    assert error.details["status"] == "superseded"


async def test_a_stateless_message_supersedes_the_plan_it_names(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan: dict[str, Any] = await propose(session, models, cid)
    models["local"].extend(Turn(text="ok"), Turn(text="ok"))
    await collect(
        await session.chat(ChatRequest.from_dict({"question": "no"}), supersedes="unknown-id")
    )  # ignored
    assert (await session.conversations.get(cid)).pending_plan.status == "pending"
    await collect(
        await session.chat(ChatRequest.from_dict({"question": "no"}), supersedes=plan["pending_id"])
    )
    assert (await session.conversations.get(cid)).pending_plan.status == "superseded"
    assert (await resolve_error(session, plan["pending_id"])).code == "mcp.plan_resolved"
    assert anna_keys(oh_archive) == []
