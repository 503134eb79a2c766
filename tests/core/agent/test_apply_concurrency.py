"""Concurrent applies of one find_or_create plan create the record once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive, open_archive
from app.core.tools.matching import find_matches
from app.core.tools.registry import ToolRegistry

NAMES = ("Anna Pujol", "Rosa Vilaseca", "Pere Serrallonga", "Teresa Coma", "Dolores Gil")


def person_plan(name: str, archive: Archive, registry: ToolRegistry) -> dict[str, Any]:
    op = {
        "op_id": "p1",
        "tool": "dedalo_find_or_create",
        "args": {"section_tipo": "rsc197", "match": {"Name": name}, "set": {"Birth year": 1931}},
        "summary": f"Find or create {name}",
    }
    return validate_plan({"summary": name, "ops": [op]}, archive, registry).to_dict()


def apply_in_threads(folder: Path | str, plan: dict[str, Any], registry: ToolRegistry) -> list[Any]:
    """Apply ``plan`` from two threads at once, each with its own connection to the archive."""
    start = threading.Barrier(2)
    reports: list[Any] = [None, None]

    def worker(slot: int) -> None:
        with open_archive(folder) as archive:
            env = ApplyContext(archive, registry, model_id=f"thread{slot}")
            start.wait()
            reports[slot] = asyncio.run(apply_plan(plan, plan["plan_hash"], env))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reports


def test_two_concurrent_applies_make_one_record(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    folder = oh_archive.location
    for name in NAMES:
        plan = person_plan(name, oh_archive, registry)
        reports = apply_in_threads(folder, plan, registry)
        assert all(r is not None and r.ok for r in reports), reports
        (person,) = find_matches(oh_archive, "rsc197", {"rsc85": name})
        results = [r.applied[0].result for r in reports]
        assert sorted(res["created"] for res in results) == [False, True]
        assert {res["section_id"] for res in results} == {person.section_id}
        creates = [
            row
            for row in oh_archive.audit_rows()
            if row["plan_hash"] == plan["plan_hash"] and row["action"] == "create"
        ]
        assert len(creates) == 1


def test_a_proposed_plan_posted_back_from_four_threads_applies_once(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    """The Dédalo seed's body (no pending id) posted four times at once, each on its own
    connection: one apply, three ``mcp.plan_resolved``; twin entries of the plan apply apart."""
    from app.core.agent.plan_book import NewPlan, PlanBook
    from app.core.errors import ArxiuError
    from app.core.session import AssistantSession, AssistantSettings

    op = {
        "op_id": "c1",
        "tool": "dedalo_create_record",
        "args": {"section_tipo": "rsc197", "values": {"rsc85": "Posted person"}},
        "summary": "Create the person",
    }
    plan = validate_plan({"summary": "p", "ops": [op]}, oh_archive, registry)
    book = PlanBook(oh_archive)
    entry = NewPlan(plan, conversation_id=None, model_id="local", egress="local", proposer="writer")
    twins = [asyncio.run(book.add(entry)) for _ in range(2)]
    start = threading.Barrier(8)
    outcomes: list[str] = []
    lock = threading.Lock()

    def worker(record_id: str) -> None:
        with open_archive(oh_archive.location) as archive:
            settings = AssistantSettings(write_allowed=True)
            session = AssistantSession(
                archive, registry=registry, settings=settings, person="writer"
            )
            record = asyncio.run(session.plans.get(record_id))
            assert record is not None
            bare = {k: v for k, v in record.plan.to_dict().items() if k != "pending_id"}
            start.wait()
            try:
                asyncio.run(session.plans.apply_posted(bare, record.plan.plan_hash))
                outcome = "applied"
            except ArxiuError as error:
                outcome = error.code
            with lock:
                outcomes.append(outcome)

    threads = [threading.Thread(target=worker, args=(t.id,)) for t in twins for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["applied"] * 2 + ["mcp.plan_resolved"] * 6, outcomes
    assert len(find_matches(oh_archive, "rsc197", {"rsc85": "Posted person"})) == 2
    print(f"\nposted back: {len(threads)} applies of 2 twin entries, 2 applied, 0 duplicates")
