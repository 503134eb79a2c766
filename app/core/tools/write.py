"""Write tools (egress class ``write``): run only by applying a confirmed change plan.

Every write resolves field labels to tipos (candidates on failure, never a guess), refuses
sections that are not writable, and hands ``ctx.audit`` to the store so the audit row is written
in the same transaction as the change. Results report the record touched as
``{section_tipo, section_id, created}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from app.core.archive.media import add_media
from app.core.archive.model import NEUTRAL_LANG, Locator, RecordKey
from app.core.errors import ToolError
from app.core.phrases import Phrase
from app.core.tools.base import ToolContext, ToolLookup, ToolResult, tool
from app.core.tools.matching import find_or_create
from app.core.tools.write_checks import (
    CHECKS,
    check_create,
    check_delete,
    check_field_write,
    check_find_or_create,
    check_portal,
    check_record,
    check_upload,
    is_ref,
    to_items,
)
from app.core.tools.write_effects import guard_effects, guard_unlinks

if TYPE_CHECKING:
    from app.core.archive.store import Archive


class _ItemLang(TypedDict, total=False):
    lang: str


class Item(_ItemLang):
    """One value of a field.

    Args:
        lang: its language (lg-cat, lg-spa, lg-eng...; lg-nolan for language-neutral values).
        value: the value (text, number, or a locator in relation fields).
    """

    value: Any


def _done(key: RecordKey, created: bool, **extra: Any) -> ToolResult:
    data = {"section_tipo": key.section_tipo, "section_id": key.section_id, "created": created}
    return ToolResult(ok=True, data={**data, **extra}, records=(key,), sections=(key.section_tipo,))


def _guard(ctx: ToolContext, tool_name: str, args: Mapping[str, object]) -> None:
    """For a caller without the restricted right (``ctx.exclude_restricted``), refuse an op
    that would touch restricted records (see :mod:`app.core.tools.write_effects`)."""
    if ctx.exclude_restricted:
        guard_effects(ctx.archive, tool_name, args)


def _items_of(
    ctx: ToolContext, section_tipo: str, values: Mapping[str, object]
) -> dict[str, list[dict[str, object]]]:
    fields = {f.tipo: f for f in ctx.archive.fields(section_tipo)}
    return {tipo: to_items(fields[tipo], value, ctx.lang) for tipo, value in values.items()}


@tool("write", "Create a record in {section_tipo}")
async def dedalo_create_record(
    ctx: ToolContext, section_tipo: str, values: dict[str, object] | None = None
) -> ToolResult:
    """Create a new record. To avoid duplicates of people or places use dedalo_find_or_create.

    Args:
        section_tipo: the section of the new record.
        values: {field tipo or label: value}; a value is a text or number, {lang: text} for
            several languages, or a locator for a relation field.
    """
    given: dict[str, object] = {"section_tipo": section_tipo, "values": values}
    _guard(ctx, "dedalo_create_record", given)
    args = check_create(ctx.archive, given, ctx.lang)
    items = _items_of(ctx, args["section_tipo"], args["values"])
    key = ctx.archive.create_record(args["section_tipo"], items, audit=ctx.audit)
    return _done(key, True)


@tool("write", "Duplicate record {section_tipo}/{section_id}")
async def dedalo_duplicate_record(
    ctx: ToolContext, section_tipo: str, section_id: int
) -> ToolResult:
    """Copy a record into a new record of the same section.

    Args:
        section_tipo: the record's section tipo.
        section_id: the id of the record to copy.
    """
    given = {"section_tipo": section_tipo, "section_id": section_id}
    _guard(ctx, "dedalo_duplicate_record", given)
    args = check_record(ctx.archive, given, ctx.lang)
    key = RecordKey(args["section_tipo"], section_id)
    new = ctx.archive.duplicate_record(key, audit=ctx.audit)
    return _done(new, True, source=key.to_locator())


@tool("write", "Delete record {section_tipo}/{section_id}")
async def dedalo_delete_record(
    ctx: ToolContext, section_tipo: str, section_id: int, unlink: bool = False
) -> ToolResult:
    """Delete a record and its outgoing links. A record others link to is refused, unless unlink.

    Args:
        section_tipo: the record's section tipo.
        section_id: the id of the record to delete.
        unlink: first remove the links other records hold to it (each is reported).
    """
    given = {"section_tipo": section_tipo, "section_id": section_id, "unlink": unlink}
    _guard(ctx, "dedalo_delete_record", given)
    args = check_delete(ctx.archive, given, ctx.lang)
    key = RecordKey(args["section_tipo"], section_id)
    guard = partial(guard_unlinks, ctx.archive) if ctx.exclude_restricted else None
    _, removed = ctx.archive.delete_record_unlinking(
        key, unlink=unlink, audit=ctx.audit, guard=guard
    )
    unlinked = [{**link.source.to_locator(), "field": link.field_tipo} for link in removed]
    return _done(key, False, deleted=True, unlinked=unlinked)


@tool("write", "Set {field} of {section_tipo}/{section_id}")
async def dedalo_set_field(
    ctx: ToolContext,
    section_tipo: str,
    section_id: int,
    field: str,
    value: Any,
    lang: str | None = None,
) -> ToolResult:
    """Set one field of a record; a multilingual field's other languages are kept.

    Only the languages written change: with lang, that language's value; without, the
    languages of the value ({lang: text}, or the UI's for a plain text). Null clears the
    field (with lang, only that language).

    Args:
        section_tipo: the record's section tipo.
        section_id: the record's id.
        field: the field's tipo or label.
        value: the new value (text, number, {lang: text}, or a locator); null clears it.
        lang: the value's language: replace only the value in this language.
    """
    given = {"section_tipo": section_tipo, "section_id": section_id, "field": field}
    _guard(ctx, "dedalo_set_field", {**given, "value": value})
    args = check_field_write(ctx.archive, {**given, "value": value}, ctx.lang)
    key = RecordKey(args["section_tipo"], section_id)
    fld = ctx.archive.field(args["field"])
    items = to_items(fld, value, lang or ctx.lang)
    record = ctx.archive.get_record(key)
    if lang:
        items = [i for i in record.items(fld.tipo) if i.get("lang") != lang] + [
            {**i, "lang": lang} for i in items
        ]
    elif fld.multilingual and items:  # the languages written are replaced, no others
        written = {i["lang"] for i in items}
        items = [i for i in record.items(fld.tipo) if i.get("lang") not in written] + items
    ctx.archive.update_record(
        key, {fld.tipo: items}, expected_version=record.version, audit=ctx.audit
    )
    return _done(key, False, field=fld.tipo)


@tool("write", "Save {field} of {section_tipo}/{section_id}")
async def dedalo_save_component(
    ctx: ToolContext, section_tipo: str, section_id: int, field: str, items: list[Item]
) -> ToolResult:
    """Replace all the values of one field (component) with the given items.

    Args:
        section_tipo: the record's section tipo.
        section_id: the record's id.
        field: the field's tipo or label.
        items: the field's complete new values; an empty list clears it.
    """
    given = {"section_tipo": section_tipo, "section_id": section_id, "field": field}
    _guard(ctx, "dedalo_save_component", {**given, "items": items})
    args = check_field_write(ctx.archive, {**given, "items": items}, ctx.lang)
    key = RecordKey(args["section_tipo"], section_id)
    fld = ctx.archive.field(args["field"])
    ctx.archive.update_record(
        key, {fld.tipo: to_items(fld, list(items), ctx.lang)}, audit=ctx.audit
    )
    return _done(key, False, field=fld.tipo)


def _portal_args(
    ctx: ToolContext, section_tipo: str, section_id: int, field: str, target: Locator
) -> tuple[RecordKey, str, Locator]:
    if is_ref(target):
        raise ToolError(
            "mcp.invalid_target",
            "The target is an unresolved plan reference.",
            hint="References are replaced when a plan is applied; link a real record.",
        )
    args = check_portal(
        ctx.archive,
        {"section_tipo": section_tipo, "section_id": section_id, "field": field, "target": target},
        ctx.lang,
    )
    locator: Locator = {
        "section_tipo": target["section_tipo"],
        "section_id": int(target["section_id"]),
    }
    return RecordKey(args["section_tipo"], section_id), args["field"], locator


@tool("write", "Link {target} as {field} of {section_tipo}/{section_id}")
async def dedalo_portal_link(
    ctx: ToolContext, section_tipo: str, section_id: int, field: str, target: Locator
) -> ToolResult:
    """Link another record in a relation (portal) field; linking twice changes nothing.

    Args:
        section_tipo: the section of the record that holds the portal.
        section_id: the id of that record.
        field: the relation field's tipo or label (e.g. informant).
        target: the record to link.
    """
    given = {"section_tipo": section_tipo, "section_id": section_id, "target": target}
    _guard(ctx, "dedalo_portal_link", given)
    key, field_tipo, locator = _portal_args(ctx, section_tipo, section_id, field, target)
    record = ctx.archive.get_record(key)
    items = record.items(field_tipo)
    if any(i.get("value") == locator for i in items):
        return _done(key, False, field=field_tipo, linked=False, target=locator)
    items.append({"lang": NEUTRAL_LANG, "value": locator})
    ctx.archive.update_record(
        key, {field_tipo: items}, expected_version=record.version, audit=ctx.audit
    )
    return _done(key, False, field=field_tipo, linked=True, target=locator)


@tool("write", "Unlink {target} from {field} of {section_tipo}/{section_id}")
async def dedalo_portal_unlink(
    ctx: ToolContext, section_tipo: str, section_id: int, field: str, target: Locator
) -> ToolResult:
    """Remove a linked record from a relation (portal) field; the linked record itself stays.

    Args:
        section_tipo: the section of the record that holds the portal.
        section_id: the id of that record.
        field: the relation field's tipo or label.
        target: the linked record to remove from the portal.
    """
    given = {"section_tipo": section_tipo, "section_id": section_id, "target": target}
    _guard(ctx, "dedalo_portal_unlink", given)
    key, field_tipo, locator = _portal_args(ctx, section_tipo, section_id, field, target)
    record = ctx.archive.get_record(key)
    items = record.items(field_tipo)
    kept = [i for i in items if i.get("value") != locator]
    if len(kept) != len(items):
        ctx.archive.update_record(
            key, {field_tipo: kept}, expected_version=record.version, audit=ctx.audit
        )
    return _done(key, False, field=field_tipo, unlinked=len(kept) != len(items), target=locator)


@tool("write", "Find or create in {section_tipo}: {match}")
async def dedalo_find_or_create(
    ctx: ToolContext,
    section_tipo: str,
    match: dict[str, object],
    set: dict[str, object] | None = None,  # the seed's argument name
) -> ToolResult:
    """Find the record whose fields equal the match values, or create it; never creates twice.

    Use it for people, places and other records that may already exist. The set values are
    only written when the record is created.

    Args:
        section_tipo: the section searched and, if needed, written.
        match: {field tipo or label: value} identifying the record (e.g. the person's name).
        set: more {field: value} for a new record (e.g. birth date, birthplace).
    """
    given: dict[str, object] = {"section_tipo": section_tipo, "match": match, "set": set}
    _guard(ctx, "dedalo_find_or_create", given)
    args = check_find_or_create(ctx.archive, given, ctx.lang)
    tipo = args["section_tipo"]
    items = _items_of(ctx, tipo, {**args["set"], **args["match"]})
    key, created, matched = find_or_create(
        ctx.archive, tipo, args["match"], items, ctx.audit, ctx.lang
    )
    return _done(key, created, matched=matched)


@tool("write", "Attach {path} to {field} of {section_tipo}/{section_id}")
async def dedalo_upload_media(
    ctx: ToolContext, section_tipo: str, section_id: int, field: str, path: str
) -> ToolResult:
    """Attach a media file (image, audio, video, document) from this computer to a record.

    Args:
        section_tipo: the record's section tipo.
        section_id: the record's id.
        field: the media field's tipo or label.
        path: the file's path on this computer.
    """
    given = {"section_tipo": section_tipo, "section_id": section_id, "field": field}
    _guard(ctx, "dedalo_upload_media", given)
    args = check_upload(ctx.archive, {**given, "path": path}, ctx.lang)
    key = RecordKey(args["section_tipo"], section_id)
    media = add_media(ctx.archive, key, args["field"], Path(path).expanduser(), audit=ctx.audit)
    after = {
        "media_id": media.id,
        "field": media.field_tipo,
        "path": media.path,
        "sha256": media.sha256,
    }
    return _done(key, False, media={**after, "mime": media.mime, "size": media.size})


TOOLS = (
    dedalo_create_record,
    dedalo_duplicate_record,
    dedalo_delete_record,
    dedalo_set_field,
    dedalo_save_component,
    dedalo_portal_link,
    dedalo_portal_unlink,
    dedalo_find_or_create,
    dedalo_upload_media,
)

_REF_PLACEHOLDER_ID = 0


def _placeholders(args: Mapping[str, object]) -> dict[str, object]:
    """``args`` with plan references replaced by schema-valid stand-ins."""
    out = dict(args)
    if is_ref(out.get("section_id")):
        out["section_id"] = _REF_PLACEHOLDER_ID
    target = out.get("target")
    if is_ref(target):
        out["target"] = {"section_tipo": "", "section_id": _REF_PLACEHOLDER_ID}
    return out


def validate_write_args(
    registry: ToolLookup, tool_name: str, args: object, archive: Archive, lang: str = "lg-eng"
) -> dict[str, object]:
    """A write op's arguments checked and normalised, without writing anything.

    Checks the schema, resolves sections and field labels to tipos and refuses sections that are
    not writable; ``{"ref": op_id}`` is accepted as a ``target`` or a ``section_id`` (the plan
    validator checks that it names an earlier op).

    Raises:
        ArxiuError: ``mcp.tool_unknown``, ``mcp.not_write_tool``, ``mcp.invalid_args``,
            ``mcp.section_unknown``, ``mcp.section_not_writable``, ``mcp.field_unknown`` (with
            candidates), ``archive.record_not_found`` and the other checks' codes.
    """
    registered = registry.get(tool_name)
    if registered.egress != "write" or tool_name not in CHECKS:
        raise ToolError(
            "mcp.not_write_tool",
            Phrase.of(
                "{tool} is not a write tool and cannot be part of a change plan.", tool=tool_name
            ),
            hint="A change plan's ops use the write tools only.",
        )
    given = dict(args) if isinstance(args, dict) else args
    checked = registry.check_args(
        tool_name, _placeholders(given) if isinstance(given, dict) else given
    )
    for name in ("section_id", "target"):
        if isinstance(given, dict) and is_ref(given.get(name)):
            checked[name] = given[name]
    return CHECKS[tool_name](archive, checked, lang)
