"""Child processes for the plan book tests: resolve a plan, or stop at a kill point.

Run through a ``forkserver`` context that preloads this module, so each child starts from an
interpreter that has already imported the agent stack. A child signals on ``events`` when it
reaches its kill point and then waits forever, holding whatever it holds at that moment (in the
middle of an op: the op's open ``BEGIN IMMEDIATE`` transaction); the parent kills it with
SIGKILL there.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import time
from pathlib import Path
from typing import Any

from app.core.agent import apply as apply_mod
from app.core.agent import plan_book as book_mod
from app.core.agent.plan_types import PlanOp
from app.core.archive import open_archive
from app.core.archive import records as records_mod
from app.core.errors import ArxiuError
from app.core.session import AssistantSession
from app.core.tools.registry import build_registry

KillPoint = tuple[str, int]
"""``("boundary", k)``: before op k runs (k == len(ops): after the last, before the status is
written); ``("mid", k)``: inside op k's transaction, after its change, before its commit."""


def context() -> Any:
    """The multiprocessing context the tests use."""
    if "forkserver" not in mp.get_all_start_methods():  # Windows
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _hang(events: Any, point: KillPoint) -> None:
    events.put(("at", point))
    while True:
        time.sleep(60)


def _install(point: KillPoint, op_ids: list[str], events: Any) -> None:
    kind, index = point
    if kind == "boundary" and index < len(op_ids):
        real_run_op = apply_mod._run_op

        async def run_op(op: PlanOp, *args: Any) -> Any:
            if op.op_id == op_ids[index]:
                _hang(events, point)
            return await real_run_op(op, *args)

        apply_mod._run_op = run_op  # type: ignore[assignment]
    elif kind == "boundary":
        real_finish = book_mod.PlanBook.finish

        async def finish(self: Any, *args: Any, **kwargs: Any) -> Any:
            _hang(events, point)  # the resolution's status write (on the writer thread)
            return await real_finish(self, *args, **kwargs)

        book_mod.PlanBook.finish = finish  # type: ignore[method-assign]
    else:
        real_audit = records_mod.write_audit

        def write_audit(
            conn: Any, action: str, key: Any, before: Any, after: Any, info: Any
        ) -> None:
            real_audit(conn, action, key, before, after, info)
            if info.get("op_id") == op_ids[index]:
                _hang(events, point)  # the change and its audit row are written, not committed

        records_mod.write_audit = write_audit  # type: ignore[assignment]


def resolve_in_child(
    folder: str, plan_id: str, op_ids: list[str], point: KillPoint | None, events: Any, go: Any
) -> None:
    """Open the archive and resolve ``plan_id`` (approved); report the outcome on ``events``."""
    if point is not None:
        _install(point, op_ids, events)
    with open_archive(folder if "://" in str(folder) else Path(folder)) as archive:
        session = AssistantSession(archive, registry=build_registry())
        if go is not None:
            go.wait()
        try:
            report = asyncio.run(session.plans.resolve(plan_id, True))
        except ArxiuError as error:
            events.put(("error", error.code))
            return
        events.put(("report", report.to_dict() if report is not None else None))
