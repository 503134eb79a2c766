"""Per-user permission walls the API adds around the session façade.

Chats are walled inside the core (the session's ``write_allowed`` and ``can_read_restricted``
settings). An apply is walled here too, before the session sees it: a user without write
permission gets ``mcp.write_disabled``; a user who may not read restricted records cannot apply
a plan that names a restricted section, a field of one, or a restricted record, or whose ops
would touch one (``mcp.egress_restricted``) — the apply report would otherwise tell them about
it. Ids past SQLite's 64-bit range are ``archive.id_out_of_range``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.api.users import User
from app.core.agent.egress import record_locators
from app.core.archive.ids import check_ids
from app.core.errors import ArxiuError, ToolError
from app.core.tools.write_effects import guard_plan

if TYPE_CHECKING:
    from app.core.archive.store import Archive


def write_refused() -> ArxiuError:
    """``mcp.write_disabled`` for a user or server without writes."""
    return ToolError(
        "mcp.write_disabled",
        "Writing is not allowed for this user on this server.",
        hint="Ask the server's owner for --allow-writes and a user with --can-write.",
        category="permission",
    )


def restricted_refused() -> ArxiuError:
    """``mcp.egress_restricted`` for a plan that names restricted material."""
    return ToolError(
        "mcp.egress_restricted",
        "This plan refers to restricted material, which this user may not read.",
        hint="Ask a user allowed to read restricted records to review and apply it.",
        category="permission",
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value.strip()
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def plan_names_restricted(plan: Any, archive: Archive) -> bool:
    """Whether any op of ``plan`` names restricted material (sections, their fields, records)."""
    ops = plan.get("ops") if isinstance(plan, dict) else None
    if not isinstance(ops, list):
        return False
    sections = {s.tipo: s.restricted for s in archive.sections()}
    restricted = {tipo for tipo, flag in sections.items() if flag}
    fields = {
        f.tipo
        for f in archive.fields()
        if f.section_tipo in restricted or (f.target_section or "") in restricted
    }
    for text in _strings(ops):
        if text in restricted or text in fields:
            return True
    return any(
        key.section_tipo in sections and archive.is_restricted(key) for key in record_locators(ops)
    )


def check_apply(user: User, write_allowed: bool, plan: Any, archive: Archive) -> None:
    """Refuse an apply ``user`` may not make (raises the coded error).

    For a user without the restricted right, the plan's *effects* are checked too: an op that
    would change, unlink, delete or find a restricted record — named or not (a delete's
    linkers, a field's current links) — is refused with an error naming none of them
    (:func:`app.core.tools.write_effects.guard_plan`). Each op checks again when it runs.
    """
    if not write_allowed:
        raise write_refused()
    check_ids(plan)
    if user.can_read_restricted:
        return
    if plan_names_restricted(plan, archive):
        raise restricted_refused()
    guard_plan(archive, plan.get("ops") if isinstance(plan, dict) else None)
