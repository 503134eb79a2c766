"""An apply leaves its caller's event loop (the app's GUI thread) free while its ops run."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive
from app.core.tools.registry import ToolRegistry

PEOPLE = 6


def people_plan(archive: Archive, registry: ToolRegistry) -> dict[str, Any]:
    ops = [
        {
            "op_id": f"c{n}",
            "tool": "dedalo_create_record",
            "args": {"section_tipo": "rsc197", "values": {"rsc85": f"Loop person {n}"}},
            "summary": f"create person {n}",
        }
        for n in range(PEOPLE)
    ]
    return validate_plan({"summary": "people", "ops": ops}, archive, registry).to_dict()


def committed(archive: Archive, plan_hash: str) -> int:
    with archive.db.reading() as conn:
        row = conn.execute("SELECT count(*) FROM audit WHERE plan_hash = ?", (plan_hash,))
        return int(row.fetchone()[0])


async def test_the_loop_sees_the_apply_part_way(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    """A task on the loop runs between the ops and sees some, not all, of them committed.

    Before, every op ran on the loop's own thread without yielding, so the watcher only ran
    once the whole plan was applied.
    """
    plan = people_plan(oh_archive, registry)
    seen: list[int] = []
    done = asyncio.Event()

    async def watch() -> None:
        while not done.is_set():
            seen.append(committed(oh_archive, plan["plan_hash"]))
            await asyncio.sleep(0)

    watcher = asyncio.ensure_future(watch())
    report = await apply_plan(plan, plan["plan_hash"], ApplyContext(oh_archive, registry))
    done.set()
    await watcher
    assert report.ok, report
    assert len(report.applied) == PEOPLE
    assert committed(oh_archive, plan["plan_hash"]) == PEOPLE
    assert any(0 < count < PEOPLE for count in seen), seen


async def test_the_ops_run_on_a_read_thread(
    oh_archive: Archive, registry: ToolRegistry, monkeypatch: Any
) -> None:
    """Each op's write tool runs on an ``arxiu-read-N`` thread, never on the loop's thread."""
    threads: list[str] = []
    original = oh_archive.create_record

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(oh_archive, "create_record", spy)
    plan = people_plan(oh_archive, registry)
    report = await apply_plan(plan, plan["plan_hash"], ApplyContext(oh_archive, registry))
    assert report.ok, report
    assert len(threads) == PEOPLE
    assert all(name.startswith("arxiu-read-") for name in threads), threads
    assert threading.current_thread().name not in threads
