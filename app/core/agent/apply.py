"""Applying a confirmed change plan: hash check, every gate again, ops in order.

Each op runs as its own write-tool call (its own transaction, with an audit row naming the plan
hash, op id, model and egress), stopping at the first error. The report is
``{applied: [{op_id, result}], skipped: [op_id...], failed?: {op_id, error}, created: {op_id:
section_id}}``; ``{"ref": op_id}`` arguments are replaced by the locator of the record that op
created or found, so a retry of a plan built on ``dedalo_find_or_create`` creates nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.core.agent.plans import CREATING_TOOLS, plan_hash, validate_plan
from app.core.archive.model import RecordKey
from app.core.errors import ToolError
from app.core.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.tools.registry import ToolRegistry


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


def check_confirmed(plan: Any, confirmed_hash: Any, env: ApplyContext) -> dict[str, Any]:
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
    again = validate_plan(plan, env.archive, env.registry, env.lang)
    if again["plan_hash"] != actual:
        raise _mismatch("The plan no longer validates exactly as it was confirmed.")
    return again


async def apply_plan(plan: Any, confirmed_hash: Any, env: ApplyContext) -> dict[str, Any]:
    """Execute a confirmed plan; returns the apply report.

    Raises:
        ToolError: when the plan is refused as a whole (nothing is written then).
    """
    checked = check_confirmed(plan, confirmed_hash, env)
    report: dict[str, Any] = {"applied": [], "skipped": [], "created": {}}
    made: dict[str, RecordKey] = {}
    ops = checked["ops"]
    for index, op in enumerate(ops):
        args = substitute_refs(op["args"], made)
        result = await env.registry.call(op["tool"], args, _context(env, checked, op["op_id"]))
        if not result.ok:
            report["failed"] = {"op_id": op["op_id"], "error": _error_body(result)}
            report["skipped"] = [later["op_id"] for later in ops[index + 1 :]]
            break
        report["applied"].append({"op_id": op["op_id"], "result": result.data})
        key = created_key(result) if op["tool"] in CREATING_TOOLS else None
        if key is not None:
            made[op["op_id"]] = key
            report["created"][op["op_id"]] = key.section_id
    return report


def substitute_refs(value: Any, made: dict[str, RecordKey], key: str = "") -> Any:
    """``value`` with each ``{"ref": op_id}`` replaced by the record that op made or found.

    A reference in a ``section_id`` becomes the id; anywhere else it becomes the locator.
    """
    if isinstance(value, dict):
        if set(value) == {"ref"}:
            found = made.get(str(value["ref"]))
            if found is None:
                raise ToolError(
                    "mcp.plan_invalid",
                    f"ref {value['ref']!r} names an op that made no record.",
                    category="input",
                )
            return found.section_id if key == "section_id" else found.to_locator()
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


def _context(env: ApplyContext, plan: dict[str, Any], op_id: str) -> ToolContext:
    audit = {
        "plan_hash": plan["plan_hash"],
        "op_id": op_id,
        "model": env.model_id,
        "egress": env.egress,
        "actor": env.actor,
    }
    egress: Literal["local", "external"] = "external" if env.egress == "external" else "local"
    return ToolContext(
        archive=env.archive,
        searcher=env.searcher,
        lang=env.lang,
        model_id=env.model_id,
        egress=egress,
        audit=audit,
    )


def _error_body(result: ToolResult) -> dict[str, Any]:
    error: dict[str, Any] = {"code": result.code, "message": result.message}
    if result.hint:
        error["hint"] = result.hint
    return {"ok": False, "error": error}


def _mismatch(message: str) -> ToolError:
    return ToolError(
        "mcp.plan_hash_mismatch",
        message,
        hint="Ask the assistant to propose the change again; a confirmed plan is never edited.",
        category="conflict",
    )
