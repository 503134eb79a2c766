"""What a write op changes, and the wall for a caller who may not read restricted records.

A change plan can reach a restricted record without naming it: deleting an open record with
``unlink`` rewrites every record that links to it, a ``save_component`` of a relation field
drops the links it held, a duplicate copies them, a find-or-create may find a record flagged
restricted. :func:`touched_records` lists every record an op changes, unlinks, links, deletes
or finds; :func:`guard_effects` refuses an op, for a caller without the restricted right,
when any of them is restricted — with an error that names no restricted record (no id,
label, section or count): ``mcp.egress_restricted`` without details, or, for a delete that
other records still link to, ``archive.record_linked`` listing only the open linkers.

The wall runs where a plan is proposed (the loop, for runs the egress gate guards as
external), where the API accepts an apply, and inside each write tool when its context says
``exclude_restricted`` (the apply of such a caller), so a link made between the proposal and
the apply is caught too. ``{"ref": op_id}`` arguments are skipped until they are resolved.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from app.core.archive.ids import check_ids, in_range
from app.core.archive.model import Link, RecordKey
from app.core.errors import ArchiveError, ArxiuError, ToolError
from app.core.phrases import Phrase
from app.core.tools.write_checks import refs_in_value

if TYPE_CHECKING:
    from app.core.archive.store import Archive

RECORD_TOOLS = frozenset(
    {
        "dedalo_duplicate_record",
        "dedalo_delete_record",
        "dedalo_set_field",
        "dedalo_save_component",
        "dedalo_portal_link",
        "dedalo_portal_unlink",
        "dedalo_upload_media",
    }
)
"""Tools whose ``section_tipo`` + ``section_id`` is a record they change."""
FIELD_TOOLS = frozenset({"dedalo_set_field", "dedalo_save_component"})


def effects_refused() -> ToolError:
    """The refusal of an op that would touch restricted records (it names none of them)."""
    return ToolError(
        "mcp.egress_restricted",
        "This change would touch records this user may not read.",
        hint="Ask a user allowed to read restricted records to make it.",
        category="permission",
    )


def linked_refused(key: RecordKey, open_linkers: list[Link]) -> ArchiveError:
    """``archive.record_linked`` as a caller without the restricted right sees it: the open
    linkers only, and words that count none."""
    return ArchiveError(
        "archive.record_linked",
        Phrase.of("Record {key} cannot be deleted: other records link to it.", key=str(key)),
        hint="Unlink it from those records first, or delete it with the unlink option.",
        category="conflict",
        details={
            "linked_from": [
                {**link.source.to_locator(), "field_tipo": link.field_tipo} for link in open_linkers
            ]
        },
    )


def _as_id(value: Any) -> int | None:
    """An id as the write checks read it (an integer, or a string of digits), if SQLite can
    hold it."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and in_range(value):
        return value
    return None


def _locators(value: Any) -> Iterator[RecordKey]:
    """Concrete ``{section_tipo, section_id}`` locators anywhere in ``value``."""
    if isinstance(value, dict):
        tipo, sid = value.get("section_tipo"), _as_id(value.get("section_id"))
        if isinstance(tipo, str) and sid is not None:
            yield RecordKey(tipo, sid)
        for item in value.values():
            yield from _locators(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _locators(item)


def _subject(args: Mapping[str, object]) -> RecordKey | None:
    tipo, sid = args.get("section_tipo"), _as_id(args.get("section_id"))
    return RecordKey(tipo, sid) if isinstance(tipo, str) and sid is not None else None


def _field_targets(archive: Archive, key: RecordKey, field: Any) -> list[RecordKey]:
    """The records ``key``'s field links now (a field write may drop them)."""
    from app.core.tools.resolve import resolve_field

    if not isinstance(field, str):
        return []
    try:
        tipo = resolve_field(archive, key.section_tipo, field).tipo
    except ArxiuError:
        return []  # the op's own checks refuse an unknown field
    return [link.target for link in archive.links_from(key) if link.field_tipo == tipo]


def _matched(archive: Archive, args: Mapping[str, object]) -> list[RecordKey]:
    from app.core.tools.matching import find_matches

    tipo, match = args.get("section_tipo"), args.get("match")
    if not isinstance(tipo, str) or not isinstance(match, dict) or not match:
        return []
    if refs_in_value(match) or not archive.has_section(tipo):
        return []
    try:
        return find_matches(archive, tipo, match)
    except ArxiuError:
        return []  # the op's own checks report a match that cannot be searched


def touched_records(archive: Archive, tool: str, args: Mapping[str, object]) -> list[RecordKey]:
    """Every record the op changes, deletes, unlinks, links or finds (references skipped).

    The linkers of a deleted record are included whether or not the op asks to unlink them.
    """
    found: list[RecordKey] = list(_locators({k: v for k, v in args.items() if k != "section_id"}))
    key = _subject(args) if tool in RECORD_TOOLS else None
    if key is not None and archive.find_record(key) is not None:
        found.append(key)
        if tool == "dedalo_delete_record":
            found += [link.source for link in archive.links_to(key)]
            found += [link.target for link in archive.links_from(key)]
        elif tool == "dedalo_duplicate_record":
            found += [link.target for link in archive.links_from(key)]
        elif tool in FIELD_TOOLS:
            found += _field_targets(archive, key, args.get("field"))
    if tool == "dedalo_find_or_create":
        found += _matched(archive, args)
    found += _value_targets(archive, tool, args)
    return list(dict.fromkeys(found))


def _value_targets(archive: Archive, tool: str, args: Mapping[str, object]) -> list[RecordKey]:
    """Records a relation value links as the write tools read it (a bare id counts as a record
    of the field's target section)."""
    from app.core.tools.resolve import resolve_field
    from app.core.tools.write_checks import to_items

    tipo = args.get("section_tipo")
    values: dict[object, object] = {}
    for part in ("values", "match", "set"):
        given = args.get(part)
        if isinstance(given, dict):
            values |= given
    field = args.get("field")
    if tool in FIELD_TOOLS and isinstance(field, str):
        values[field] = args.get("value", args.get("items"))
    found: list[RecordKey] = []
    for name, value in values.items():
        try:
            fld = resolve_field(archive, str(tipo), str(name))
            if fld.kind == "relation" and not refs_in_value(value):
                found += list(_locators(to_items(fld, value, "lg-eng")))
        except ArxiuError:
            continue  # the op's own checks refuse it
    return found


def restricted_among(archive: Archive, keys: Iterable[RecordKey]) -> bool:
    """Whether any of ``keys`` is a restricted record (or in a restricted section)."""
    flags = {s.tipo: s.restricted for s in archive.sections()}
    return any(key.section_tipo in flags and archive.is_restricted(key) for key in keys)


def guard_effects(archive: Archive, tool: str, args: Mapping[str, object]) -> None:
    """Refuse, for a caller without the restricted right, an op touching restricted records.

    Raises:
        ArchiveError: ``archive.id_out_of_range``; ``archive.record_linked`` (open linkers
            only) for a delete others link to, without ``unlink``.
        ToolError: ``mcp.egress_restricted`` (no details) when a touched record is restricted.
    """
    check_ids(args)
    key = _subject(args)
    if tool == "dedalo_delete_record" and key is not None and not args.get("unlink"):
        incoming = [link for link in archive.links_to(key) if link.source != key]
        if incoming:
            open_linkers = [i for i in incoming if not restricted_among(archive, (i.source,))]
            raise linked_refused(key, open_linkers)
    if restricted_among(archive, touched_records(archive, tool, args)):
        raise effects_refused()


def guard_unlinks(archive: Archive, links: list[Link]) -> None:
    """Refuse removing ``links`` (a delete's incoming links) when one comes from a restricted
    record; run inside the delete's transaction by a caller without the restricted right."""
    if restricted_among(archive, (link.source for link in links)):
        raise effects_refused()


def guard_plan(archive: Archive, ops: Any) -> None:
    """:func:`guard_effects` on every op of a plan (shapes it does not know are skipped: the
    plan validator refuses them)."""
    check_ids(ops)
    if not isinstance(ops, list):
        return
    for op in ops:
        if not isinstance(op, dict):
            continue
        tool, args = op.get("tool"), op.get("args")
        if isinstance(tool, str) and isinstance(args, dict):
            guard_effects(archive, tool, args)
