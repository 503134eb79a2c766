"""What a confirm card shows for each op: its real arguments, its outcome, the records made.

Pure functions over the typed plan and its apply report, so the card shows exactly what Apply
will send and the tests can check it without widgets. A field's value before and after is the
core's (:mod:`app.core.agent.plan_preview`).
"""

from __future__ import annotations

import json
from typing import Any

from app.core.agent.plan_types import ApplyReport, ChangePlan, OpFailure, unlinked_text
from app.core.archive import RecordKey

MAX_ARGS_CHARS = 600


def format_args(args: dict[str, Any]) -> str:
    """The op's arguments as compact, readable JSON (long values cut)."""
    text = json.dumps(args, ensure_ascii=False, indent=1, sort_keys=False)
    lines = [line.strip() for line in text.splitlines()]
    compact = " ".join(lines).replace("{ ", "{").replace(" }", "}").replace("[ ", "[")
    compact = compact.replace(" ]", "]")
    return compact if len(compact) <= MAX_ARGS_CHARS else compact[: MAX_ARGS_CHARS - 1] + "…"


def failure_text(failure: OpFailure) -> str:
    """Why an op failed, for a person: the reason, the code, the hint and any candidates."""
    text = f"{failure.message} [{failure.code}]" if failure.message else failure.code
    if failure.hint:
        text += f" — {failure.hint}"
    missing = [c for c in failure.candidates if c.key not in failure.message]
    if missing:
        names = "; ".join(f"{c.label or '…'} ({c.key})" for c in missing)
        text += f" Candidates: {names}."
    return text


def op_outcomes(plan: ChangePlan, report: ApplyReport) -> dict[str, tuple[str, str]]:
    """Each op's outcome from an apply report: ``op_id → (applied|failed|skipped, detail)``."""
    out: dict[str, tuple[str, str]] = {}
    for item in report.applied:
        out[item.op_id] = ("applied", unlinked_text(item.result))
    if report.failed is not None:
        out[report.failed.op_id] = ("failed", failure_text(report.failed))
    for op_id in report.skipped:
        out[op_id] = ("skipped", "")
    for op in plan.ops:
        out.setdefault(op.op_id, ("skipped", ""))
    return out


def created_records(plan: ChangePlan, report: ApplyReport) -> dict[str, RecordKey]:
    """``op_id → key`` of the records the apply created (or found)."""
    out = {}
    for op_id, section_id in report.created.items():
        op = plan.op(op_id)
        tipo = op.section_tipo if op is not None else None
        if tipo is not None:
            out[op_id] = RecordKey(tipo, section_id)
    return out
