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
    return validate_plan({"summary": name, "ops": [op]}, archive, registry)


def apply_in_threads(folder: Path, plan: dict[str, Any], registry: ToolRegistry) -> list[Any]:
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
    folder = oh_archive.folder
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
