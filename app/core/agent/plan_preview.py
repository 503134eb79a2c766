"""What a confirm card shows of a field-changing op: the field's value before and after.

Read from the archive by the core (on a read thread, in a front end), so a card renders exactly
what Apply will change without reading the archive itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError

if TYPE_CHECKING:
    from app.core.agent.plan_types import ChangePlan, PlanOp
    from app.core.archive.store import Archive

FIELD_TOOLS = frozenset({"dedalo_set_field", "dedalo_save_component"})
FIELD_ARGS = ("field_tipo", "component_tipo", "field")
VALUE_ARGS = ("value", "items", "values", "text")


@dataclass(frozen=True)
class FieldChange:
    """A field's value before the op and the value the op writes."""

    field_label: str
    before: str
    after: str


def field_changes(
    archive: Archive, plan: ChangePlan, lang: str = "lg-eng"
) -> dict[str, FieldChange]:
    """``op_id → change`` for each op of ``plan`` that changes a field of an existing record."""
    out = {}
    for op in plan.ops:
        change = field_change(archive, op, lang)
        if change is not None:
            out[op.op_id] = change
    return out


def field_change(archive: Archive, op: PlanOp, lang: str = "lg-eng") -> FieldChange | None:
    """Before and after of a field-changing op on an existing record, else ``None``."""
    args = op.args
    if op.tool not in FIELD_TOOLS:
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
