"""The core's run events as the Vadalog dialect's NDJSON lines ``{"type", "data"}``.

One turn streams ``metadata`` first, then ``context_loaded``, then while the loop runs
``thinking {chunk}`` (the model's reasoning text, where it streams one), ``tool_start {tool,
input}`` and ``tool_result {tool, result}``, the answer as ``content {chunk}``, a change plan as
``proposal`` (and, for an authorizing client, ``authorization_request``), then ``done``, and
``session_meta`` after ``done`` on a session's first turn. A failure is one ``error`` line.

What a line carries is what the core's events carry, so the egress gate's filtering holds here
too: ``tool_start.input`` is the call's id and human summary (not the model's raw arguments),
and ``tool_result.result`` is ``{ok, code}`` — the tool's data went to the model, never to the
client. The operations of an authorized change plan show their arguments (what the client
approved) and, as result, which record each one created or found. A user without
``--can-read-restricted`` runs behind a gate that keeps restricted records from the model in
the first place, so no answer can carry one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, assert_never

from app.core.agent.events import (
    ErrorEvent,
    Event,
    FinalEvent,
    IterationEvent,
    StartEvent,
    TextEvent,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
)
from app.core.agent.plan_types import PendingPlan
from app.core.counted import Counted
from app.core.errors import ArxiuError

PROPOSE_TOOL = "propose_change_plan"
RESULT_KEYS = ("section_tipo", "section_id", "created")
APPLIED = Counted("Applied 1 operation; {records}.", "Applied {n} operations; {records}.")
CREATED = Counted("1 record created or found", "{n} records created or found")
"""The answer after an approved plan, streamed as the ``content`` the client shows: English,
as the dialect's every message is (it carries no language), each count in the form that
agrees with it."""


async def close(events: AsyncIterator[Event]) -> None:
    """Close a run's event stream (its ``finally`` stops the run and frees its slot)."""
    closer = getattr(events, "aclose", None)
    if closer is not None:
        await closer()


def line(kind: str, data: dict[str, Any]) -> bytes:
    """One NDJSON line."""
    return (
        json.dumps({"type": kind, "data": data}, ensure_ascii=False, default=str) + "\n"
    ).encode("utf-8")


def event_line(event: Event) -> bytes | None:
    """The line for a core event (``None`` for events this dialect does not show)."""
    match event:
        case StartEvent() | IterationEvent() | FinalEvent():
            return None
        case ThinkingEvent():
            return line("thinking", {"chunk": event.text}) if event.text else None
        case TextEvent():
            return line("content", {"chunk": event.delta}) if event.delta else None
        case ToolUseEvent():
            return line(
                "tool_start",
                {"tool": event.name, "input": {"id": event.id, "summary": event.summary}},
            )
        case ToolResultEvent():
            return line(
                "tool_result",
                {
                    "tool": event.name,
                    "result": {"id": event.id, "ok": event.ok, "code": event.code},
                },
            )
        case ErrorEvent():
            return error_line(event.to_dict())
        case _:
            assert_never(event)


def error_line(body: dict[str, Any]) -> bytes:
    """The ``error`` line: ``{error: message, code, hint?, ...}``."""
    return line("error", {"error": body.get("message", ""), **body})


def arxiu_error_line(error: ArxiuError) -> bytes:
    """The ``error`` line for a coded error."""
    return error_line(error.to_dict())


def proposal_line(pending: PendingPlan) -> bytes:
    """The ``proposal`` line for a change plan (the whole plan is its ``definition``)."""
    return line(
        "proposal",
        {
            "tool": PROPOSE_TOOL,
            "concept_name": pending.pending_id,
            "definition": pending.to_dict(),
            "description": pending.plan.summary,
        },
    )


def authorization_line(pending: PendingPlan) -> bytes:
    """The ``authorization_request`` line: the plan's operations, waiting for the client."""
    calls = [
        {"call_id": op.op_id, "tool": op.tool, "input": op.args, "summary": op.summary}
        for op in pending.plan.ops
    ]
    return line(
        "authorization_request",
        {
            "pending_id": pending.pending_id,
            "plan_hash": pending.plan.plan_hash,
            "summary": pending.plan.summary,
            "calls": calls,
            "reply_with": ["approved_calls", "authorized_tools"],
            "restricted_text": pending.restricted_text,
        },
    )


def op_result(report: dict[str, Any], op_id: str) -> dict[str, Any]:
    """What ``tool_result`` says of one applied operation (which record, created or found)."""
    for item in report.get("applied", []):
        if item["op_id"] == op_id:
            data = item.get("result")
            kept = {k: data[k] for k in RESULT_KEYS if isinstance(data, dict) and k in data}
            return {"op_id": op_id, "ok": True, **kept}
    failed = report.get("failed")
    if failed and failed["op_id"] == op_id:
        error = failed.get("error", failed)  # {op_id, code, message} or {op_id, error: {...}}
        if isinstance(error.get("error"), dict):
            error = error["error"]
        return {
            "op_id": op_id,
            "ok": False,
            "code": error.get("code"),
            "message": error.get("message"),
        }
    return {"op_id": op_id, "ok": False, "skipped": True}


def report_text(report: dict[str, Any] | None, approved: bool) -> str:
    """The answer after a resolution, for a person."""
    if not approved or report is None:
        return "Not every operation was authorized, so nothing was written."
    created = len(report.get("created", {}))
    applied = len(report.get("applied", []))
    text = APPLIED.template(applied).format(n=applied, records=CREATED.said(created))
    failed = report.get("failed")
    if failed:
        text += f" Operation {failed['op_id']} failed, so the ones after it were skipped."
    return text
