"""Change plans: the synthetic ``propose_change_plan`` tool, validation and the plan hash.

A plan is ``{plan_version, summary, ops: [{op_id, tool, args, summary}], plan_hash}``.
:func:`validate_plan` accepts only known write tools with schema-valid arguments (labels
resolved to tipos), writable sections, ``{"ref": op_id}`` pointing at an *earlier* op that
creates a record of the section the argument requires (:mod:`app.core.agent.plan_refs`), and at
most :data:`MAX_OPS` ops. ``plan_hash`` is the sha256 of the canonical
JSON (sorted keys, no spaces, UTF-8) of ``{plan_version, summary, ops}``. Nothing is written
here; :mod:`app.core.agent.apply` executes a confirmed plan.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from app.core.agent.plan_refs import check_slots, ref_invalid, refs_in
from app.core.agent.plan_types import ChangePlan, PlanOp
from app.core.errors import ArxiuError, ToolError
from app.core.json_types import JsonObject, as_object
from app.core.models.base import ToolSpec
from app.core.phrases import Phrase
from app.core.tools.value_langs import ValueLangs, with_value_langs

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.tools.registry import ToolRegistry

PLAN_VERSION = 1
MAX_OPS = 64
PROPOSE_TOOL = "propose_change_plan"
CREATING_TOOLS = frozenset(
    {"dedalo_create_record", "dedalo_find_or_create", "dedalo_duplicate_record"}
)
OP_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")

PROPOSE_SPEC = ToolSpec(
    name=PROPOSE_TOOL,
    description=(
        "Propose every change as one plan for a person to confirm. Nothing is written until "
        "they apply it. Each op names a write tool (dedalo_find_or_create, dedalo_portal_link, "
        'dedalo_set_field, ...) and its arguments; use {"ref": "<op_id>"} to point at the '
        "record an earlier create or find_or_create op makes."
    ),
    parameters={
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "One sentence: what the plan does."},
            "ops": {
                "type": "array",
                "maxItems": MAX_OPS,
                "items": {
                    "type": "object",
                    "properties": {
                        "op_id": {"type": "string", "description": "Short unique id: p1, l1."},
                        "tool": {"type": "string", "description": "A dedalo_* write tool."},
                        "args": {"type": "object", "description": "The tool's arguments."},
                        "summary": {"type": "string", "description": "What this op does."},
                    },
                    "required": ["op_id", "tool", "args", "summary"],
                },
            },
        },
        "required": ["summary", "ops"],
    },
)


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the bytes the plan hash is computed over."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def plan_hash(plan: JsonObject) -> str:
    """sha256 (hex) of the canonical JSON of ``{plan_version, summary, ops}``."""
    body: JsonObject = {key: plan.get(key) for key in ("plan_version", "summary", "ops")}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def plan_invalid(
    message: str | Phrase, *, op_id: str | None = None, code: str = "mcp.plan_invalid"
) -> ToolError:
    """A plan refused as a whole (the model gets it as the tool result and may re-propose)."""
    details = {"op_id": op_id} if op_id else None
    return ToolError(
        code,
        message,
        hint="Fix the plan and propose it again.",
        category="input",
        details=details,
    )


def validate_plan(
    raw: Any,
    archive: Archive,
    registry: ToolRegistry,
    lang: str = "lg-eng",
    *,
    done: frozenset[str] = frozenset(),
    question: str = "",
) -> ChangePlan:
    """The validated plan with its ``plan_hash``.

    ``done`` names ops an interrupted apply already carried out: their arguments were checked
    when the plan was confirmed and their records may since have changed (a deleted record),
    so only their shape and references are checked again. A text value of a multilingual
    field that names no language gets one, guessed from its text, else ``question``'s
    language, else ``lang`` (:mod:`~app.core.tools.value_langs`).

    Raises:
        ToolError: ``mcp.plan_invalid``, ``mcp.plan_too_large``, ``mcp.section_not_writable``,
            ``mcp.match_ambiguous``, or the write tool's own argument error, naming the op.
    """
    if not isinstance(raw, dict):
        raise plan_invalid("A change plan must be an object {summary, ops}.")
    summary, ops = raw.get("summary"), raw.get("ops")
    if not isinstance(summary, str) or not summary.strip():
        raise plan_invalid("The plan needs a one-sentence summary.")
    if not isinstance(ops, list) or not ops:
        raise plan_invalid("The plan needs at least one op.")
    if len(ops) > MAX_OPS:
        raise plan_invalid(
            Phrase.of(
                "The plan has {n} ops; at most {limit} are allowed.", n=len(ops), limit=MAX_OPS
            ),
            code="mcp.plan_too_large",
        )
    creators: dict[str, str] = {}
    clean_ops: list[PlanOp] = []
    langs = ValueLangs.of(question, lang)
    for op in ops:
        clean = _validate_op(op, creators, archive, registry, langs, done)
        creators[clean.op_id] = created_section(clean)
        clean_ops.append(clean)
    body = ChangePlan(summary.strip(), tuple(clean_ops), "", PLAN_VERSION)
    return dataclasses.replace(body, plan_hash=plan_hash(body.to_dict()))


def created_section(op: PlanOp) -> str:
    """The section of the record a creating op makes or finds (``""`` for other ops)."""
    tipo = op.args.get("section_tipo")
    return tipo if op.tool in CREATING_TOOLS and isinstance(tipo, str) else ""


def _op_parts(op: Any, seen: dict[str, str], registry: ToolRegistry) -> tuple[str, str, JsonObject]:
    """An op's id, write tool and args, each checked (the refs in the args name earlier ops).

    Raises:
        ToolError: ``mcp.plan_invalid``.
    """
    if not isinstance(op, dict) or set(op) - {"op_id", "tool", "args", "summary"}:
        raise plan_invalid("Each op must be {op_id, tool, args, summary}.")
    op_id, name, args = op.get("op_id"), op.get("tool"), op.get("args")
    if not isinstance(op_id, str) or not OP_ID_RE.match(op_id):
        raise plan_invalid(  # any JSON value: written as repr() writes it, quotes and all
            Phrase.of("Op id {op_id} must be 1–32 letters, digits, '-' or '_'.", op_id=repr(op_id))
        )
    if op_id in seen:
        raise plan_invalid(Phrase.of("Op id {op_id} is used twice.", op_id=op_id), op_id=op_id)
    if not isinstance(name, str) or name not in registry or registry.get(name).egress != "write":
        raise plan_invalid(
            Phrase.of("Op {op_id}: {tool} is not a write tool.", op_id=op_id, tool=repr(name)),
            op_id=op_id,
        )
    if not isinstance(args, dict):
        raise plan_invalid(
            Phrase.of("Op {op_id}: args must be an object.", op_id=op_id), op_id=op_id
        )
    for ref in refs_in(args):
        if not seen.get(ref):
            raise plan_invalid(
                Phrase.of(
                    "Op {op_id}: ref {ref!r} must name an earlier create or find_or_create op.",
                    op_id=op_id,
                    ref=ref,
                ),
                op_id=op_id,
            )
    return op_id, name, args


def _validate_op(
    op: Any,
    seen: dict[str, str],
    archive: Archive,
    registry: ToolRegistry,
    langs: ValueLangs,
    done: frozenset[str],
) -> PlanOp:
    op_id, name, args = _op_parts(op, seen, registry)
    checked = (
        args
        if op_id in done
        else with_value_langs(
            name, _checked_args(op_id, name, args, archive, registry, langs.ui_lang), archive, langs
        )
    )
    for slot in check_slots(op_id, name, checked, archive):
        if seen[slot.ref] != slot.section:
            raise ref_invalid(
                op_id,
                Phrase.of(
                    "Op {op_id}: {where} needs a record of {section}, but op {ref} makes a "
                    "record of {made}.",
                    op_id=op_id,
                    where=slot.where,
                    section=str(slot.section),
                    ref=slot.ref,
                    made=seen[slot.ref],
                ),
            )
    _require_writable(archive, checked, op_id)
    summary = op.get("summary")
    text = (
        summary.strip()
        if isinstance(summary, str) and summary.strip()
        else registry.summary(name, checked)
    )
    return PlanOp(op_id, name, checked, text)


def _checked_args(
    op_id: str,
    name: str,
    args: JsonObject,
    archive: Archive,
    registry: ToolRegistry,
    lang: str,
) -> JsonObject:
    try:
        return check_write_args(name, args, archive, registry, lang)
    except ArxiuError as error:
        raise ToolError(
            error.code,
            Phrase.of("Op {op_id}: {reason}", op_id=op_id, reason=error.message_words),
            hint=error.hint_words or "Fix the op and propose the plan again.",
            category=error.category,
            details={**error.details, "op_id": op_id},
        ) from error


def check_write_args(
    name: str, args: JsonObject, archive: Archive, registry: ToolRegistry, lang: str
) -> JsonObject:
    """The op's arguments (a tool call's JSON) checked by the write tools' validator (labels
    resolved to tipos): still a JSON object."""
    from app.core.tools.write import validate_write_args

    return as_object(validate_write_args(registry, name, args, archive, lang), "the arguments")


def _require_writable(archive: Archive, args: JsonObject, op_id: str) -> None:
    tipo = args.get("section_tipo")
    if not isinstance(tipo, str):
        raise plan_invalid(Phrase.of("Op {op_id} names no section_tipo.", op_id=op_id), op_id=op_id)
    if not archive.has_section(tipo) or not archive.section(tipo).writable:
        raise ToolError(
            "mcp.section_not_writable",
            Phrase.of(
                "Op {op_id}: the section {tipo} is not open to assistant writes.",
                op_id=op_id,
                tipo=tipo,
            ),
            hint="Only sections marked writable in the settings can be changed.",
            category="permission",
            details={"op_id": op_id, "section_tipo": tipo},
        )
