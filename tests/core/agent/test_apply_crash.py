"""Crash safety: an apply killed with SIGKILL at every op boundary and in the middle of each op.

After each kill: ``PRAGMA integrity_check`` is ok, exactly the ops that committed have their
audit row (and no other op has one), the plan book reports the plan as ``applying`` and
interrupted (true: it was), and resolving it again completes it without duplicates.
The regression: killed during op 3 of 5, the plan stayed ``pending`` and resolving it again
re-ran every op, duplicating the records ops 1–2 had made.

Plans with identical hashes (issue 22): three plan-book entries of one plan, the first applied,
the third killed at each point, the second applied, the third resumed. A resume finds its own
audit rows by the plan-book id, so each entry's creates happen exactly once (the regression:
the third "resumed" every op from the first's audit rows and created nothing).
"""

from __future__ import annotations

import os
import signal
import sqlite3
from typing import Any

import pytest

from app.core.agent.plan_book import NewPlan, PlanBook
from app.core.agent.plans import validate_plan
from app.core.archive import Archive, RecordKey
from app.core.session import AssistantSession
from app.core.tools.registry import ToolRegistry
from tests.core.agent import plan_children


def crash_ops(people: int) -> list[dict[str, Any]]:
    """``people`` × (create a person, set a field on it, link it to an interview)."""
    ops: list[dict[str, Any]] = []
    for n in range(1, people + 1):
        ops += [
            {
                "op_id": f"c{n}",
                "tool": "dedalo_create_record",
                "args": {"section_tipo": "rsc197", "values": {"rsc85": f"Crash person {n}"}},
                "summary": f"create person {n}",
            },
            {
                "op_id": f"s{n}",
                "tool": "dedalo_set_field",
                "args": {
                    "section_tipo": "rsc197",
                    "section_id": {"ref": f"c{n}"},
                    "field": "rsc90",
                    "value": f"Place {n}",
                },
                "summary": f"set the birthplace of person {n}",
            },
            {
                "op_id": f"l{n}",
                "tool": "dedalo_portal_link",
                "args": {
                    "section_tipo": "oh1",
                    "section_id": 1 + (n % 3),
                    "field": "oh24",
                    "target": {"ref": f"c{n}"},
                },
                "summary": f"link person {n}",
            },
        ]
    return ops


def kill_points(count: int) -> list[plan_children.KillPoint]:
    """Every op boundary (before each op, and after the last) and the middle of every op."""
    return [("boundary", k) for k in range(count + 1)] + [("mid", k) for k in range(count)]


def integrity(archive: Archive) -> str:
    """SQLite's integrity check of the file; on PostgreSQL (whose server rolls a killed
    session's transaction back) every link joins two records that exist."""
    if archive.shared:
        with archive.db.reading() as conn:
            orphans = conn.execute(
                "SELECT count(*) FROM links l WHERE NOT EXISTS (SELECT 1 FROM records r "
                "WHERE r.section_tipo = l.from_section AND r.section_id = l.from_id) "
                "OR NOT EXISTS (SELECT 1 FROM records r WHERE r.section_tipo = l.to_section "
                "AND r.section_id = l.to_id)"
            ).fetchone()[0]
        return "ok" if orphans == 0 else f"{orphans} links to or from no record"
    conn = sqlite3.connect(archive.folder / "archive.db")
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def audited_ops(archive: Archive, plan_hash: str) -> list[str]:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT op_id FROM audit WHERE plan_hash = ? ORDER BY id", (plan_hash,)
        ).fetchall()
    return [str(r[0]) for r in rows]


def crash_people(archive: Archive) -> list[str]:
    names = [r.text("rsc85") for r in archive.list_records("rsc197", limit=1000)]
    return sorted(n for n in names if n.startswith("Crash person"))


async def kill_and_resume(
    archive: Archive, registry: ToolRegistry, ops: list[dict[str, Any]], point: Any
) -> None:
    checked = validate_plan({"summary": "crash", "ops": ops}, archive, registry)
    record = await PlanBook(archive).add(
        NewPlan(checked, conversation_id=None, model_id="local", egress="local")
    )
    plan = checked.to_dict()
    op_ids = [op["op_id"] for op in ops]
    ctx = plan_children.context()
    events = ctx.Queue()
    child = ctx.Process(
        target=plan_children.resolve_in_child,
        args=(archive.location, record.id, op_ids, point, events, None),
    )
    child.start()
    assert events.get(timeout=120) == ("at", point)
    child.kill()  # SIGKILL (TerminateProcess on Windows): no cleanup of any kind runs
    child.join(timeout=60)
    assert child.exitcode == (-signal.SIGKILL if os.name == "posix" else 1)

    committed = point[1]  # ops before the kill point committed; the one in flight did not
    assert integrity(archive) == "ok", point
    assert audited_ops(archive, plan["plan_hash"]) == op_ids[:committed], point
    after_kill = await PlanBook(archive).get(record.id)
    assert after_kill is not None
    assert (after_kill.status, after_kill.interrupted) == ("applying", True), point

    session = AssistantSession(archive, registry=registry)
    report = await session.plans.resolve(record.id, True)
    assert report is not None and report.ok, (point, report)
    assert [a.op_id for a in report.applied if a.resumed] == op_ids[:committed]
    assert audited_ops(archive, plan["plan_hash"]) == op_ids, point  # each op exactly once
    people = len(ops) // 3
    assert crash_people(archive) == sorted(f"Crash person {n}" for n in range(1, people + 1))
    for n in range(1, people + 1):
        key = RecordKey("rsc197", report.created[f"c{n}"])
        assert archive.get_record(key).text("rsc90") == f"Place {n}"
        assert [link.source for link in archive.links_to(key)] == [RecordKey("oh1", 1 + (n % 3))]
    final = await PlanBook(archive).get(record.id)
    assert final is not None and final.status == "applied" and not final.interrupted


def reset(archive: Archive) -> None:
    """Remove the people and links an earlier kill point left, so each starts clean."""
    for record in archive.list_records("rsc197", limit=1000):
        if record.text("rsc85").startswith("Crash person"):
            archive.delete_record(record.key, unlink=True)


async def run_kill_points(archive: Archive, registry: ToolRegistry, people: int) -> int:
    ops = crash_ops(people)
    points = kill_points(len(ops))
    for number, point in enumerate(points):
        renamed = [{**op, "summary": f"{op['summary']} (run {number})"} for op in ops]
        await kill_and_resume(archive, registry, renamed, point)
        reset(archive)
    print(f"\ncrash safety: {len(points)} kill points tried over a {len(ops)}-op plan, 0 failed")
    return len(points)


async def test_an_apply_killed_at_every_point_resumes_without_duplicates(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    assert await run_kill_points(oh_archive, registry, people=1) == 7


@pytest.mark.slow
async def test_an_apply_killed_at_every_point_resumes_without_duplicates_long(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    assert await run_kill_points(oh_archive, registry, people=4) == 25


def made_by(archive: Archive, report: Any) -> list[RecordKey]:
    """The records a report's creating ops made, each checked to carry its op's changes."""
    keys = []
    for op_id, section_id in sorted(report.created.items()):
        key = RecordKey("rsc197", section_id)
        n = int(op_id[1:])
        assert archive.get_record(key).text("rsc90") == f"Place {n}"
        assert [link.source for link in archive.links_to(key)] == [RecordKey("oh1", 1 + (n % 3))]
        keys.append(key)
    return keys


async def twins_killed_and_resumed(
    archive: Archive, registry: ToolRegistry, ops: list[dict[str, Any]], point: Any
) -> int:
    """Three book entries of one plan; the third killed at ``point`` between the others'
    applies, then resumed. Returns the duplicates found (records beyond one per entry's op)."""
    plan = validate_plan({"summary": "twins", "ops": ops}, archive, registry)
    book = PlanBook(archive)
    entry = NewPlan(plan, conversation_id=None, model_id="local", egress="local")
    first, second, third = [await book.add(entry) for _ in range(3)]
    session = AssistantSession(archive, registry=registry)
    reports = [await session.plans.resolve(first.id, True)]
    ctx = plan_children.context()
    events = ctx.Queue()
    op_ids = [op["op_id"] for op in ops]
    child = ctx.Process(
        target=plan_children.resolve_in_child,
        args=(archive.location, third.id, op_ids, point, events, None),
    )
    child.start()
    assert events.get(timeout=120) == ("at", point)
    child.kill()
    child.join(timeout=60)
    assert integrity(archive) == "ok", point
    reports.append(await session.plans.resolve(second.id, True))
    resumed = await AssistantSession(archive, registry=registry).plans.resolve(third.id, True)
    assert resumed is not None and resumed.ok, (point, resumed)
    assert [a.op_id for a in resumed.applied if a.resumed] == op_ids[: point[1]], point
    keys = [made_by(archive, r) for r in (*reports, resumed)]
    assert len({key for made in keys for key in made}) == 3 * (len(ops) // 3), point
    for record in (first, second, third):
        done = await book.get(record.id)
        assert done is not None and done.status == "applied", point
    return len(crash_people(archive)) - 3 * (len(ops) // 3)


async def run_twin_kill_points(archive: Archive, registry: ToolRegistry, people: int) -> int:
    ops = crash_ops(people)
    points = kill_points(len(ops))
    duplicates = 0
    for number, point in enumerate(points):
        renamed = [{**op, "summary": f"{op['summary']} (twins {number})"} for op in ops]
        found = await twins_killed_and_resumed(archive, registry, renamed, point)
        assert found == 0, (point, found)
        duplicates += found
        reset(archive)
    print(
        f"\nidentical hashes: {3 * len(points)} plans tried (3 per hash), {len(points)} kill "
        f"points over a {len(ops)}-op plan, duplicates {duplicates}, missing 0"
    )
    return len(points)


async def test_plans_with_one_hash_killed_and_resumed_each_create_once(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    assert await run_twin_kill_points(oh_archive, registry, people=1) == 7


@pytest.mark.slow
async def test_plans_with_one_hash_killed_and_resumed_each_create_once_long(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    assert await run_twin_kill_points(oh_archive, registry, people=3) == 19
