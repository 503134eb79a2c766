"""Applying a confirmed change plan: hash check, every gate again, ops in order, resumable.

Each op runs as its own write-tool call (its own transaction, with an audit row naming the plan
hash, op id, model and egress), stopping at the first error. ``{"ref": op_id}`` arguments are
replaced by the locator of the record that op created or found, after checking that it is of
the section the argument requires (:mod:`app.core.agent.plan_refs`).

An apply killed part-way leaves exactly the ops that committed, each with its audit row. With
``resume`` the ops that already have their audit row (matched by plan-book id and op id) are
skipped, the records they made are read back from those rows, and only the rest run (an op
that changed nothing has no row and runs again: finding or linking twice changes nothing).

The apply never blocks the caller's event loop (the app's GUI thread): its reads — the resume
look-up, the re-validation — and each op run on the archive's read executor
(:meth:`~app.core.archive.database.Database.aread`); an op's write still commits on the writer
thread, in order, and the loop awaits each op before the next starts.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from app.core.agent.plan_refs import check_made, check_slots, is_ref
from app.core.agent.plan_types import (
    AppliedOp,
    ApplyReport,
    Candidate,
    ChangePlan,
    OpFailure,
    PlanOp,
)
from app.core.agent.plans import CREATING_TOOLS, plan_hash, validate_plan
from app.core.archive.model import AuditInfo, RecordKey
from app.core.archive.write_switch import require_writes
from app.core.errors import ToolError
from app.core.json_types import JsonObject
from app.core.phrases import Phrase
from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.write_effects import guard_plan

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.tools.registry import ToolRegistry

MADE_ACTIONS = ("create", "duplicate")
"""Audit actions whose row names the record a creating op made or found."""


@dataclass(frozen=True)
class ApplyContext:
    """Who applies: the archive, tools, and the provenance written to each audit row."""

    archive: Archive
    registry: ToolRegistry
    searcher: Searcher | None = None
    model_id: str = ""
    egress: str = "local"
    lang: str = "lg-eng"
    actor: str = "assistant"
    plan_id: str | None = None
    """The plan-book entry applied: written on each audit row, and what a resume looks up."""
    exclude_restricted: bool = False
    """The applier may not read restricted records: each op refuses to touch one
    (:mod:`app.core.tools.write_effects`)."""


def check_confirmed(
    plan: Any, confirmed_hash: Any, env: ApplyContext, done: frozenset[str] = frozenset()
) -> ChangePlan:
    """The plan re-validated, if it is byte-for-byte what was confirmed.

    Raises:
        ToolError: ``mcp.plan_hash_mismatch`` (re-propose, never edit a confirmed plan) or any
            validation error of :func:`~app.core.agent.plans.validate_plan`.
    """
    if not isinstance(plan, dict) or not isinstance(confirmed_hash, str):
        raise _mismatch("The plan or its hash is missing.")
    actual = plan_hash(plan)
    if actual != confirmed_hash or plan.get("plan_hash", actual) != actual:
        raise _mismatch("The plan differs from the one that was confirmed.")
    if plan.get("plan_version") != 1:
        raise _mismatch("Unknown plan_version.")
    again = validate_plan(plan, env.archive, env.registry, env.lang, done=done)
    if again.plan_hash != actual:
        raise _mismatch("The plan no longer validates exactly as it was confirmed.")
    return again


def done_ops(archive: Archive, plan_id: str) -> dict[str, RecordKey | None]:
    """``op_id → record made (or None)`` for each op of plan-book entry ``plan_id`` with an
    audit row (found by the entry's id: another entry of the same plan has rows of its own)."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT op_id, action, section_tipo, section_id FROM audit "
            "WHERE plan_id = ? AND op_id IS NOT NULL ORDER BY id",
            (plan_id,),
        ).fetchall()
    done: dict[str, RecordKey | None] = {}
    for op_id, action, tipo, sid in rows:
        made = RecordKey(str(tipo), int(sid)) if action in MADE_ACTIONS and tipo else None
        if done.get(str(op_id)) is None:
            done[str(op_id)] = made
    return done


async def apply_plan(
    plan: Any, confirmed_hash: Any, env: ApplyContext, *, resume: bool = False
) -> ApplyReport:
    """Execute a confirmed plan (``resume``: skipping the ops already applied).

    Raises:
        ArxiuError: ``mcp.write_disabled`` when the archive's writes are off, or when the plan
            is refused as a whole (nothing is written then).
    """
    db = env.archive.db
    await db.aread(lambda _: require_writes(env.archive))
    entry = env.plan_id
    done = await db.aread(lambda _: done_ops(env.archive, entry)) if resume and entry else {}
    if env.exclude_restricted:  # before validation, whose refusals would name restricted linkers
        await db.aread(lambda _: guard_plan(env.archive, _ops_of(plan, frozenset(done))))
    checked = await db.aread(lambda _: check_confirmed(plan, confirmed_hash, env, frozenset(done)))
    made = {op_id: key for op_id, key in done.items() if key is not None}
    applied: list[AppliedOp] = []
    ops = checked.ops
    for index, op in enumerate(ops):
        op_id = op.op_id
        if op_id in done:
            applied.append(AppliedOp(op_id, _resumed_result(made.get(op_id)), resumed=True))
            continue
        outcome = await db.aread(partial(_run_op_here, op, dict(made), env, checked.plan_hash))
        if isinstance(outcome, OpFailure):
            skipped = tuple(later.op_id for later in ops[index + 1 :])
            return _report(applied, made, ops, outcome, skipped)
        applied.append(AppliedOp(op_id, outcome.data if isinstance(outcome.data, dict) else {}))
        key = created_key(outcome) if op.tool in CREATING_TOOLS else None
        if key is not None:
            made[op_id] = key
    return _report(applied, made, ops, None, ())


def _ops_of(plan: Any, done: frozenset[str]) -> list[Any]:
    """The ops of ``plan`` still to run (a resumed plan's done ops are not checked again)."""
    ops = plan.get("ops") if isinstance(plan, dict) else None
    if not isinstance(ops, list):
        return []
    return [op for op in ops if not (isinstance(op, dict) and op.get("op_id") in done)]


def _run_op_here(
    op: PlanOp,
    made: dict[str, RecordKey],
    env: ApplyContext,
    hash_: str,
    _conn: sqlite3.Connection,
) -> ToolResult | OpFailure:
    """:func:`_run_op` to its end on this (read) thread, on an event loop of its own."""
    return asyncio.run(_run_op(op, made, env, hash_))


async def _run_op(
    op: PlanOp, made: dict[str, RecordKey], env: ApplyContext, hash_: str
) -> ToolResult | OpFailure:
    try:
        slots = check_slots(op.op_id, op.tool, op.args, env.archive)
        check_made(op.op_id, slots, made)
    except ToolError as error:
        return OpFailure(op.op_id, error.code, error.message, error.hint, words=error.words)
    args = substitute_refs(op.args, made)
    result = await env.registry.call(op.tool, args, _context(env, hash_, op.op_id))
    if result.ok:
        return result
    return OpFailure(
        op.op_id,
        str(result.code),
        result.message,
        result.hint,
        _candidates(result.details),
        result.words,
    )


def _report(
    applied: list[AppliedOp],
    made: dict[str, RecordKey],
    ops: tuple[PlanOp, ...],
    failed: OpFailure | None,
    skipped: tuple[str, ...],
) -> ApplyReport:
    creating = {op.op_id for op in ops if op.tool in CREATING_TOOLS}
    created = {op_id: key.section_id for op_id, key in made.items() if op_id in creating}
    return ApplyReport(tuple(applied), skipped, failed, created)


def _resumed_result(key: RecordKey | None) -> JsonObject:
    """The result of an op an earlier attempt applied: the record it made, if any."""
    if key is None:
        return {}
    return {"section_tipo": key.section_tipo, "section_id": key.section_id, "created": False}


def _candidates(details: JsonObject) -> tuple[Candidate, ...]:
    found = details.get("candidates")
    if not isinstance(found, list):
        return ()
    return tuple(
        Candidate.from_dict(c)
        for c in found
        if isinstance(c, dict) and "section_tipo" in c and "section_id" in c
    )


def substitute_refs(value: Any, made: dict[str, RecordKey], key: str = "") -> Any:
    """``value`` with each ``{"ref": op_id}`` replaced by the record that op made or found.

    A reference in a ``section_id`` becomes the id; anywhere else it becomes the locator.
    """
    if is_ref(value):
        found = made.get(str(value["ref"]))
        if found is None:
            raise ToolError(
                "mcp.plan_invalid",
                Phrase.of("ref {ref!r} names an op that made no record.", ref=value["ref"]),
                category="input",
            )
        return found.section_id if key == "section_id" else found.to_locator()
    if isinstance(value, dict):
        return {k: substitute_refs(v, made, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_refs(item, made, key) for item in value]
    return value


def created_key(result: ToolResult) -> RecordKey | None:
    """The record a create/find_or_create op made or found."""
    data = result.data
    if isinstance(data, dict):
        tipo, sid = data.get("section_tipo"), data.get("section_id")
        if isinstance(tipo, str) and isinstance(sid, int):
            return RecordKey(tipo, sid)
        for name in ("record", "key", "locator"):
            inner = data.get(name)
            if isinstance(inner, dict) and isinstance(inner.get("section_id"), int):
                return RecordKey(str(inner["section_tipo"]), int(inner["section_id"]))
    return result.records[0] if result.records else None


def _context(env: ApplyContext, hash_: str, op_id: str) -> ToolContext:
    audit: AuditInfo = {
        "plan_hash": hash_,
        "op_id": op_id,
        "model": env.model_id,
        "egress": env.egress,
        "actor": env.actor,
        "plan_id": env.plan_id,
    }
    egress: Literal["local", "external"] = "external" if env.egress == "external" else "local"
    return ToolContext(
        archive=env.archive,
        searcher=env.searcher,
        lang=env.lang,
        model_id=env.model_id,
        egress=egress,
        audit=audit,
        exclude_restricted=env.exclude_restricted,
    )


def _mismatch(message: str) -> ToolError:
    return ToolError(
        "mcp.plan_hash_mismatch",
        message,
        hint="Ask the assistant to propose the change again; a confirmed plan is never edited.",
        category="conflict",
    )
