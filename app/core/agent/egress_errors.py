"""What an external model may learn from a failure: nothing about restricted records or files.

A tool error or a plan-validation error can tell a model whether something exists: "Record
oh1/999 does not exist" against a refusal for a restricted record, or a media path check that
fails only for a missing file. On a run the egress gate guards as external, the loop passes every
failure through :func:`for_model` before the model sees it (the tool events keep the true code
for the person at the keyboard):

* failures about the *shape* of the call — unknown tool, invalid arguments, an unknown field or
  section tipo, a section not open to writes, a gate refusal of a restricted *section* named in
  the call — pass unchanged: they depend only on the call and the archive's structure, which
  external models may see;
* every other failure (a missing record, a restricted one, a refused result, a file path, a
  version conflict, anything not listed) becomes the same :data:`GENERIC_CODE` with the same
  words, naming at most the op of a plan.

And :func:`plan_refusal` refuses, on such a run, a plan op that names a restricted record or a
local file path *before* validation, with the very error a missing record gets — so accepted
and refused plans say nothing either — and an op that would touch a restricted record without
naming it (a delete's linkers, a field's current links: the rights are checked on what an op
changes) with the generic error of that op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.agent.egress import STRUCTURE_SCOPE
from app.core.archive.ids import check_ids
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError, ToolError
from app.core.phrases import Phrase
from app.core.tools.base import ToolResult
from app.core.tools.write_effects import guard_effects

if TYPE_CHECKING:
    from app.core.archive.store import Archive

GENERIC_CODE = "mcp.not_available"
GENERIC_MESSAGE = (
    "This is not available to this model: what it names may not exist, or may be restricted."
)
GENERIC_OP_MESSAGE = (
    "Op {op_id}: This is not available to this model: what it names may not exist, or may be "
    "restricted."
)
""":data:`GENERIC_MESSAGE` naming the op of a plan (a phrase's template)."""
GENERIC_HINT = "Switch to a model badged local / private and ask again."
SHAPE_CODES = frozenset(
    {
        "mcp.invalid_args",
        "mcp.tool_unknown",
        "mcp.write_requires_plan",
        "mcp.invalid_filter",
        "mcp.section_unknown",
        "archive.section_unknown",
        "mcp.field_unknown",
        "archive.field_unknown",
        "mcp.node_unknown",
        "mcp.path_invalid",
        "mcp.field_not_relation",
        "mcp.field_not_media",
        "mcp.not_write_tool",
        "mcp.plan_too_large",
        "mcp.section_not_writable",
        "index.unavailable",
        "archive.id_out_of_range",
    }
)
"""Failures that depend only on the call's shape and the archive's structure."""
PATH_KEYS = frozenset({"path", "file", "filename", "source"})
"""Op argument names that hold a local file path."""
MISSING_ID = 999_999_999_999
MISSING_DIR = Path("/nonexistent-arxiu-egress")


def generic(op_id: str | None = None) -> ToolError:
    """The one failure an external model gets for anything existence-revealing."""
    message = Phrase.of(GENERIC_OP_MESSAGE, op_id=op_id) if op_id else GENERIC_MESSAGE
    return ToolError(
        GENERIC_CODE,
        message,
        hint=GENERIC_HINT,
        category="permission",
        details={"op_id": op_id} if op_id else None,
    )


def for_model(result: ToolResult) -> ToolResult:
    """``result`` as an external model may see it (successes and shape errors unchanged)."""
    if result.ok or _passes(result.code, result.details):
        return result
    op_id = result.details.get("op_id") if isinstance(result.details, dict) else None
    error = generic(op_id if isinstance(op_id, str) else None)
    return ToolResult(
        ok=False, code=error.code, message=error.message, hint=error.hint, details=error.details
    )


def error_for_model(error: ArxiuError) -> ArxiuError:
    """A plan-validation error as an external model may see it."""
    if _passes(error.code, error.details):
        return error
    op_id = error.details.get("op_id")
    return generic(op_id if isinstance(op_id, str) else None)


def plan_refusal(
    raw: Any, archive: Archive, validate: Callable[[Any], object]
) -> ArxiuError | None:
    """On an external run, the refusal for a plan naming a restricted record or a file path.

    The first such op is refused with what the same plan would get if that record were missing
    and that file absent: ``validate`` (the plan validator) runs on the ops up to it with the
    record's id and the path replaced by missing ones, and its error — converted by
    :func:`error_for_model` — or else the generic error for that op is the answer. ``None``
    when no op names either (validate the plan as usual then).
    """
    ops = raw.get("ops") if isinstance(raw, dict) else None
    if not isinstance(ops, list):
        return None
    try:
        check_ids(ops)
    except ArxiuError as error:
        return error
    for number, op in enumerate(ops):
        args = op.get("args") if isinstance(op, dict) else None
        restricted = {key for key in _keys_in(args) if _restricted(archive, key)}
        touches = not restricted and _touches_restricted(archive, op)
        if not restricted and not touches and not _names_path(args):
            continue
        assert isinstance(op, dict)
        masked = {**op, "args": _masked(args, restricted, archive)}
        checked = [*ops[:number]] if touches else [*ops[:number], masked]
        try:
            if checked:
                validate({**raw, "ops": checked})
        except ArxiuError as error:
            return error_for_model(error)
        op_id = op.get("op_id")
        return generic(op_id if isinstance(op_id, str) else None)
    return None


def _touches_restricted(archive: Archive, op: Any) -> bool:
    """Whether ``op`` would change, unlink, delete or find a restricted record it does not name
    (a delete's linkers, a field's current links: :mod:`app.core.tools.write_effects`)."""
    tool, args = (op.get("tool"), op.get("args")) if isinstance(op, dict) else (None, None)
    if not isinstance(tool, str) or not isinstance(args, dict):
        return False
    try:
        guard_effects(archive, tool, args)
    except ArxiuError as error:
        return error.code != "archive.id_out_of_range"
    return False


def _masked(value: Any, restricted: set[RecordKey], archive: Archive) -> Any:
    """``value`` with restricted record ids replaced by missing ones and paths by absent files."""
    if isinstance(value, dict):
        out = {k: _masked(v, restricted, archive) for k, v in value.items()}
        for key in _keys_in({k: v for k, v in value.items() if not isinstance(v, dict | list)}):
            if key in restricted:
                out["section_id"] = _missing_id(archive, key.section_tipo)
        for name, item in value.items():
            if name in PATH_KEYS and isinstance(item, str):
                out[name] = str(MISSING_DIR / Path(item).name)
        return out
    if isinstance(value, list | tuple):
        return [_masked(item, restricted, archive) for item in value]
    return value


def _missing_id(archive: Archive, section_tipo: str) -> int:
    sid = MISSING_ID
    while archive.find_record(RecordKey(section_tipo, sid)) is not None:
        sid -= 1
    return sid


def _passes(code: str | None, details: Any) -> bool:
    if code in SHAPE_CODES:
        return True
    scope = details.get("scope") if isinstance(details, dict) else None
    return code == "mcp.egress_restricted" and scope == STRUCTURE_SCOPE


def _restricted(archive: Archive, key: RecordKey) -> bool:
    return archive.find_record(key) is not None and archive.is_restricted(key)


def _keys_in(value: Any) -> Iterator[RecordKey]:
    """Records an op's arguments name: locators, and ``section_tipo`` + ``section_id`` pairs."""
    if isinstance(value, dict):
        tipo = value.get("section_tipo") or value.get("target_section")
        sid = value.get("section_id")
        if isinstance(tipo, str) and isinstance(sid, int) and not isinstance(sid, bool):
            yield RecordKey(tipo, sid)
        for item in value.values():
            yield from _keys_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _keys_in(item)


def _names_path(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            (key in PATH_KEYS and isinstance(item, str)) or _names_path(item)
            for key, item in value.items()
        )
    if isinstance(value, list | tuple):
        return any(_names_path(item) for item in value)
    return False
