"""What a confirm card shows for each op: tool, real arguments, before/after of a field.

Pure functions over the plan and the archive, so the card shows exactly what Apply will send
and the tests can check it without widgets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.core.agent.plan_types import ApplyReport, ChangePlan, OpFailure, unlinked_text
from app.core.archive import Archive, RecordKey
from app.core.errors import ArxiuError

FIELD_TOOLS = frozenset({"dedalo_set_field", "dedalo_save_component"})
FIELD_ARGS = ("field_tipo", "component_tipo", "field")
VALUE_ARGS = ("value", "items", "values", "text")
MAX_ARGS_CHARS = 600


@dataclass(frozen=True)
class FieldChange:
    """A field's value before the op and the value the op writes."""

    field_label: str
    before: str
    after: str


def format_args(args: dict[str, Any]) -> str:
    """The op's arguments as compact, readable JSON (long values cut)."""
    text = json.dumps(args, ensure_ascii=False, indent=1, sort_keys=False)
    lines = [line.strip() for line in text.splitlines()]
    compact = " ".join(lines).replace("{ ", "{").replace(" }", "}").replace("[ ", "[")
    compact = compact.replace(" ]", "]")
    return compact if len(compact) <= MAX_ARGS_CHARS else compact[: MAX_ARGS_CHARS - 1] + "…"


def field_change(archive: Archive, op: dict[str, Any], lang: str = "lg-eng") -> FieldChange | None:
    """Before and after of a field-changing op on an existing record, else ``None``."""
    args = op.get("args") or {}
    if op.get("tool") not in FIELD_TOOLS:
        return None
    tipo, sid = args.get("section_tipo"), args.get("section_id")
    field_tipo = next((args[k] for k in FIELD_ARGS if isinstance(args.get(k), str)), None)
    if not isinstance(tipo, str) or not isinstance(sid, int) or field_tipo is None:
        return None
    after = next((args[k] for k in VALUE_ARGS if k in args), None)
    try:
        record = archive.find_record(RecordKey(tipo, sid))
        label = archive.field(field_tipo).label(lang)
    except ArxiuError:
        return None
    before = ""
    if record is not None:
        before = _items_text(record.items(field_tipo), lang)
    return FieldChange(label, before or "—", _value_text(after, lang) or "—")


def _items_text(items: list[dict[str, Any]], lang: str) -> str:
    chosen = [i for i in items if i.get("lang") in (lang, "lg-nolan")] or items
    return " · ".join(_value_text(i.get("value"), lang) for i in chosen)


def _value_text(value: Any, lang: str) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return _items_text(
            [v if isinstance(v, dict) and "value" in v else {"value": v} for v in value], lang
        )
    if isinstance(value, dict):
        if "section_tipo" in value and "section_id" in value:
            return f"{value['section_tipo']}/{value['section_id']}"
        if "value" in value:
            return _value_text(value["value"], lang)
        return json.dumps(value, ensure_ascii=False)
    return str(value)


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
        tipo = op.args.get("section_tipo") if op is not None else None
        if isinstance(tipo, str):
            out[op_id] = RecordKey(tipo, section_id)
    return out
