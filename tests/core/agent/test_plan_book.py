"""The plan book: one status per plan in its own table, one resolution across processes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.plan_book import LOCAL_PERSON, NewPlan, PlanBook
from app.core.agent.plan_types import PlanRecord
from app.core.agent.plans import validate_plan
from app.core.agent.request import ChatRequest
from app.core.archive import Archive, open_archive
from app.core.archive.database import Database
from app.core.archive.migrations import MIGRATIONS
from app.core.archive.plan_seal import plan_key, seal
from app.core.archive.write_switch import set_writes_allowed
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel
from app.core.tools.registry import ToolRegistry
from tests.core.agent import plan_children
from tests.core.agent.conftest import SessionFactory
from tests.core.agent.test_plans import propose

CREATE_PEOPLE = [
    {
        "op_id": f"c{n}",
        "tool": "dedalo_create_record",
        "args": {"section_tipo": "rsc197", "values": {"rsc85": f"Book person {n}"}},
        "summary": f"create person {n}",
    }
    for n in range(1, 4)
]


async def book_plan(
    archive: Archive, registry: ToolRegistry, ops: list[dict[str, Any]]
) -> PlanRecord:
    plan = validate_plan({"summary": "people", "ops": ops}, archive, registry)
    return await PlanBook(archive).add(
        NewPlan(plan, conversation_id=None, model_id="local", egress="local")
    )


def people_named(archive: Archive, prefix: str) -> list[str]:
    names = [r.text("rsc85") for r in archive.list_records("rsc197", limit=1000)]
    return [n for n in names if n.startswith(prefix)]


async def test_two_processes_resolving_one_plan_at_once_apply_it_once(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    record = await book_plan(oh_archive, registry, CREATE_PEOPLE)
    ctx = plan_children.context()
    events, go = ctx.Queue(), ctx.Barrier(2)
    op_ids = [op["op_id"] for op in CREATE_PEOPLE]
    children = [
        ctx.Process(
            target=plan_children.resolve_in_child,
            args=(oh_archive.location, record.id, op_ids, None, events, go),
        )
        for _ in range(2)
    ]
    for child in children:
        child.start()
    outcomes = sorted((events.get(timeout=120) for _ in children), key=lambda o: o[0])
    for child in children:
        child.join(timeout=60)
    assert [kind for kind, _ in outcomes] == ["error", "report"]
    assert outcomes[0][1] == "mcp.plan_resolved"
    assert len(outcomes[1][1]["applied"]) == 3
    assert sorted(people_named(oh_archive, "Book person")) == [
        "Book person 1",
        "Book person 2",
        "Book person 3",
    ]
    done = await PlanBook(oh_archive).get(record.id)
    assert done is not None and done.status == "applied" and done.report is not None
    creates = [r for r in oh_archive.audit_rows() if r["plan_id"] == record.id]
    assert sorted(r["op_id"] for r in creates) == ["c1", "c2", "c3"]


async def test_the_status_lives_in_the_book_and_survives_a_restart(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    with oh_archive.db.reading() as conn:
        row = conn.execute("SELECT status FROM plans WHERE id = ?", (plan["pending_id"],))
        assert row.fetchone()[0] == "pending"
    stored = await oh_archive.conversation(cid)
    assert stored is not None and stored.get("pending_plan") is None  # not a second source
    assert all("plan_status" not in turn for turn in stored["transcript"])
    assert await session.plans.resolve(plan["pending_id"], False) is None
    fresh = make_session()
    found = await fresh.plans.get(plan["pending_id"])
    assert found is not None and found.status == "declined"
    assert found.plan.plan_hash == plan["plan_hash"]
    assert [op.op_id for op in found.plan.ops] == ["p1", "l1"]
    reopened = await fresh.conversations.get(cid)
    assert reopened.pending_plan is not None
    assert reopened.pending_plan.status == "declined"  # what the UI reads


async def test_a_claim_is_refused_once_resolved(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    record = await book_plan(oh_archive, registry, CREATE_PEOPLE[:1])
    book = PlanBook(oh_archive)
    assert (await book.claim(record.id, False)).record.status == "declined"
    with pytest.raises(ArxiuError) as caught:
        await book.claim(record.id, True)
    assert (caught.value.code, caught.value.details["status"]) == ("mcp.plan_resolved", "declined")
    with pytest.raises(ArxiuError) as unknown:
        await book.claim("no-such-plan", True)
    assert unknown.value.code == "mcp.plan_unknown"


async def test_plans_kept_in_conversations_by_an_older_version_move_into_the_book(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    db = Database(folder / "archive.db")
    before = [m for m in MIGRATIONS if m.name != "0003_plan_book"]
    for number, migration in enumerate(before[:2], start=1):

        def step(conn: sqlite3.Connection, m: Any = migration, n: int = number) -> None:
            conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY)")
            m.apply(conn)
            conn.execute("INSERT INTO _migrations(name) VALUES (?)", (m.name,))
            conn.execute(f"PRAGMA user_version = {n}")

        db.write(step)
    old_plan = {"plan_version": 1, "summary": "old", "ops": [], "plan_hash": "a" * 64}
    pending = {"id": "p-latest", "plan": {**old_plan, "plan_hash": "b" * 64}, "status": "pending"}
    transcript = [
        {"change_plan": {**old_plan, "pending_id": "p-early"}, "plan_status": "declined"},
        {"change_plan": {**pending["plan"], "pending_id": "p-latest"}, "plan_status": "pending"},
    ]
    db.write(
        lambda conn: conn.execute(
            "INSERT INTO conversations(id, created_at, updated_at, transcript, pending_plan) "
            "VALUES ('c1', 'now', 'now', ?, ?)",
            (json.dumps(transcript), json.dumps(pending)),
        )
    )
    db.close()
    with open_archive(folder) as archive:
        book = PlanBook(archive)
        early, latest = await book.get("p-early"), await book.get("p-latest")
        assert early is not None and early.status == "declined"
        assert latest is not None and latest.status == "pending"
        assert latest.conversation_id == "c1" and latest.proposer is None  # the local person's
        with archive.db.reading() as conn:  # bound to the book by the later migration
            assert latest.plan.plan_hash == seal(plan_key(conn), "p-latest", "b" * 64)


async def test_with_the_archive_switch_off_nothing_is_written_and_the_plan_waits(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    set_writes_allowed(oh_archive, False)
    assert session.models()["write_allowed"] is False
    with pytest.raises(ArxiuError) as chat:
        await session.chat(ChatRequest.from_dict({"question": "more", "mode": "write"}))
    assert chat.value.code == "mcp.write_disabled"
    with pytest.raises(ArxiuError) as resolve:
        await session.plans.resolve(plan["pending_id"], True)
    assert resolve.value.code == "mcp.write_disabled"
    still = await session.plans.get(plan["pending_id"])
    assert still is not None and still.status == "pending"
    assert oh_archive.audit_rows() == []
    set_writes_allowed(oh_archive, True)
    report = await session.plans.resolve(plan["pending_id"], True)
    assert report is not None and report.ok


async def test_another_persons_plan_answers_as_an_unknown_id(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    from app.core.session import AssistantSession

    plan = validate_plan({"summary": "people", "ops": CREATE_PEOPLE[:1]}, oh_archive, registry)
    record = await PlanBook(oh_archive).add(
        NewPlan(plan, conversation_id="c1", model_id="local", egress="local", proposer="alice")
    )
    for person in ("bob", LOCAL_PERSON):  # another API user, and the local person
        other = AssistantSession(oh_archive, registry=registry, person=person)
        assert await other.plans.get(record.id) is None
        assert await other.plans.latest("c1") is None
        assert await other.plans.supersede(record.id) is False
        await other.plans.supersede_conversation("c1")
        codes = []
        for plan_id in (record.id, "no-such-plan"):
            for approved in (True, False):
                with pytest.raises(ArxiuError) as refused:
                    await other.plans.resolve(plan_id, approved)
                codes.append((refused.value.code, refused.value.message, refused.value.details))
        assert len(set(map(str, codes))) == 1 and codes[0][0] == "mcp.plan_unknown"
        with pytest.raises(ArxiuError) as posted:
            await other.plans.apply_posted(record.plan.to_dict(), record.plan.plan_hash)
        assert posted.value.code == "mcp.plan_unknown"
    alice = AssistantSession(oh_archive, registry=registry, person="alice")
    pending = await alice.plans.get(record.id)
    assert pending is not None and pending.status == "pending" and pending.proposer == "alice"
    report = await alice.plans.resolve(record.id, True)
    assert report is not None and report.ok
    assert people_named(oh_archive, "Book person") == ["Book person 1"]
