"""Checks shared by the write tools and plan validation: labels to tipos, writability, values.

Each ``check_*`` function takes a write tool's (schema-valid) arguments and returns them
normalised — sections and fields as tipos, values keyed by field tipo — or raises a coded
:class:`~app.core.errors.ToolError`. It writes nothing, so a plan can be validated before a
person confirms it, and the tool runs the very same checks again when the plan is applied.

A ``{"ref": "op_id"}`` object may stand for a record created by an earlier op of a plan, as a
``target`` or a ``section_id``; checks then skip what cannot be known before the apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive.model import NEUTRAL_LANG, Field, RecordKey, Section
from app.core.errors import ToolError
from app.core.phrases import Phrase
from app.core.tools.resolve import resolve_field, resolve_section

if TYPE_CHECKING:
    from app.core.archive.store import Archive

Args = dict[str, Any]
Check = Callable[["Archive", Args, str], Args]


def is_ref(value: Any) -> bool:
    """Whether ``value`` is a plan reference ``{"ref": op_id}``."""
    return isinstance(value, dict) and set(value) == {"ref"}


def writable_section(archive: Archive, name: str, lang: str = "lg-eng") -> Section:
    """The section named ``name``, if the assistant may write in it.

    Raises:
        ToolError: ``mcp.section_unknown`` or ``mcp.section_not_writable``.
    """
    section = resolve_section(archive, name, lang)
    if not section.writable:
        raise ToolError(
            "mcp.section_not_writable",
            Phrase.of(
                "The assistant may not change records of {label} ({tipo}).",
                label=section.label(lang),
                tipo=section.tipo,
            ),
            hint="Only sections marked writable in the settings accept changes.",
            category="permission",
            details={"section_tipo": section.tipo},
        )
    return section


def existing(archive: Archive, section_tipo: str, section_id: Any) -> None:
    """Fail unless the record exists (references are checked when the plan is applied)."""
    if not is_ref(section_id):
        archive.get_record(RecordKey(section_tipo, int(section_id)))


def _locator(fld: Field, value: Any) -> dict[str, object]:
    if is_ref(value):
        return dict(value)  # replaced by the created record's locator when the plan is applied
    if isinstance(value, int) and not isinstance(value, bool) and fld.target_section:
        return {"section_tipo": fld.target_section, "section_id": value}
    if isinstance(value, dict) and {"section_tipo", "section_id"} <= set(value):
        return {"section_tipo": str(value["section_tipo"]), "section_id": int(value["section_id"])}
    raise ToolError(
        "mcp.invalid_value",
        Phrase.of(
            "{label} ({tipo}) is a relation: give {{section_tipo, section_id}} locators.",
            label=fld.label(),
            tipo=fld.tipo,
        ),
        hint='Find the record to link first (or, in a plan, use {"ref": op_id} of the op '
        "that finds or creates it).",
    )


def to_items(fld: Field, value: object, lang: str) -> list[dict[str, object]]:
    """A value given by the model as a field's items ``[{lang, value}]``.

    Accepts a scalar, ``{lang: value}`` for several languages, an item ``{lang?, value}``, a
    locator (relations), or a list of any of these; ``None`` clears the field.
    """
    if value is None:
        return []
    if isinstance(value, list):
        return [item for v in value for item in to_items(fld, v, lang)]
    default_lang = lang if fld.multilingual else NEUTRAL_LANG
    if fld.kind == "relation":
        inner = value.get("value") if isinstance(value, dict) and "value" in value else value
        return [{"lang": NEUTRAL_LANG, "value": _locator(fld, inner)}]
    if isinstance(value, dict) and "value" in value:
        return [{"lang": str(value.get("lang") or default_lang), "value": value["value"]}]
    if isinstance(value, dict) and value and all(str(k).startswith("lg-") for k in value):
        return [{"lang": str(k), "value": v} for k, v in value.items() if v is not None]
    return [{"lang": default_lang, "value": value}]


def resolve_values(
    archive: Archive, section_tipo: str, values: Mapping[str, object], lang: str
) -> dict[str, object]:
    """``{field name or tipo: value}`` keyed by field tipo, each value checked.

    A relation value must name existing records of the field's target section, exactly as a
    portal link's target must (references to a plan's ops are checked when it is applied).
    """
    out: dict[str, object] = {}
    for name, value in values.items():
        fld = resolve_field(archive, section_tipo, name, lang)
        check_value(archive, fld, value, lang)
        out[fld.tipo] = value
    return out


def check_value(archive: Archive, fld: Field, value: Any, lang: str) -> None:
    """A value fit for ``fld``; a relation's locators must be real records of its target."""
    items = to_items(fld, value, lang)  # fails early on a malformed value
    if fld.kind == "relation":
        for item in items:
            check_target(archive, fld, item["value"])


def relation_field(archive: Archive, section_tipo: str, name: str, lang: str) -> Field:
    """A relation (portal) field of ``section_tipo``."""
    fld = resolve_field(archive, section_tipo, name, lang)
    if fld.kind != "relation":
        raise ToolError(
            "mcp.field_not_relation",
            Phrase.of(
                "{label} ({tipo}) is not a relation field.", label=fld.label(lang), tipo=fld.tipo
            ),
            hint="Portal links go in relation fields; describe the section to find one.",
        )
    return fld


def check_target(archive: Archive, fld: Field, target: Any) -> None:
    """A portal target must be in the field's target section and exist."""
    if is_ref(target):
        return
    if not isinstance(target, dict) or not {"section_tipo", "section_id"} <= set(target):
        raise ToolError(
            "mcp.invalid_target",
            Phrase.of(
                "{label} ({tipo}) links records: give a {{section_tipo, section_id}} locator.",
                label=fld.label(),
                tipo=fld.tipo,
            ),
            hint="Find the record to link first.",
        )
    tipo = str(target.get("section_tipo"))
    if fld.target_section and tipo != fld.target_section:
        raise ToolError(
            "mcp.invalid_target",
            Phrase.of(
                "{label} ({tipo}) links to {target} records, not {given}.",
                label=fld.label(),
                tipo=fld.tipo,
                target=fld.target_section,
                given=tipo,
            ),
            hint=Phrase.of("Link a record of {target}.", target=fld.target_section),
        )
    archive.get_record(RecordKey(tipo, int(target["section_id"])))


# -- per tool -----------------------------------------------------------------------------------
def _record_args(archive: Archive, args: Args, lang: str) -> Args:
    section = writable_section(archive, args["section_tipo"], lang)
    existing(archive, section.tipo, args["section_id"])
    return {**args, "section_tipo": section.tipo}


def check_create(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_create_record``."""
    section = writable_section(archive, args["section_tipo"], lang)
    values = resolve_values(archive, section.tipo, args.get("values") or {}, lang)
    return {**args, "section_tipo": section.tipo, "values": values}


def check_field_write(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_set_field`` and ``dedalo_save_component``."""
    out = _record_args(archive, args, lang)
    fld = resolve_field(archive, out["section_tipo"], args["field"], lang)
    check_value(archive, fld, args.get("value", args.get("items")), lang)
    return {**out, "field": fld.tipo}


def check_portal(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_portal_link`` and ``dedalo_portal_unlink``."""
    out = _record_args(archive, args, lang)
    fld = relation_field(archive, out["section_tipo"], args["field"], lang)
    check_target(archive, fld, args["target"])
    return {**out, "field": fld.tipo}


def check_find_or_create(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_find_or_create``: at least one match key; scalar (or locator) match values."""
    section = writable_section(archive, args["section_tipo"], lang)
    if not args.get("match"):
        raise ToolError(
            "mcp.invalid_args",
            "find_or_create needs at least one match key.",
            hint="Give the fields that identify the record, e.g. its name.",
        )
    match = resolve_values(archive, section.tipo, args["match"], lang)
    for tipo, value in match.items():
        if not isinstance(value, str | int | float | bool | dict) or (
            isinstance(value, dict) and not {"section_tipo", "section_id"} <= set(value)
        ):
            raise ToolError(
                "mcp.invalid_args",
                Phrase.of(
                    "The match value of {tipo} must be a single text, number or locator.", tipo=tipo
                ),
                hint="Match on one value per field.",
            )
    values = resolve_values(archive, section.tipo, args.get("set") or {}, lang)
    if not any(refs_in_value(v) for v in match.values()):
        require_unambiguous(archive, section.tipo, match, lang)
    return {**args, "section_tipo": section.tipo, "match": match, "set": values}


def refs_in_value(value: Any) -> bool:
    """Whether a plan reference appears anywhere in ``value``."""
    if is_ref(value):
        return True
    if isinstance(value, dict):
        return any(refs_in_value(v) for v in value.values())
    if isinstance(value, list):
        return any(refs_in_value(v) for v in value)
    return False


def require_unambiguous(
    archive: Archive, section_tipo: str, match: Mapping[str, object], lang: str
) -> None:
    """Refuse a find_or_create whose match values fit more than one record (never a guess).

    Raises:
        ToolError: ``mcp.match_ambiguous`` with the candidates' labels and keys.
    """
    from app.core.tools.matching import ambiguous, find_matches

    found = find_matches(archive, section_tipo, match)
    if len(found) > 1:
        raise ambiguous(archive, section_tipo, found, lang)


def check_upload(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_upload_media``: a media field and a readable file."""
    out = _record_args(archive, args, lang)
    fld = resolve_field(archive, out["section_tipo"], args["field"], lang)
    if fld.kind != "media":
        raise ToolError(
            "mcp.field_not_media",
            Phrase.of(
                "{label} ({tipo}) is not a media field.", label=fld.label(lang), tipo=fld.tipo
            ),
            hint="Describe the section to find its media field.",
        )
    if not Path(args["path"]).expanduser().is_file():
        raise ToolError(
            "mcp.media_missing",
            Phrase.of("There is no file at {path}.", path=str(args["path"])),
            hint="Check the path.",
        )
    return {**out, "field": fld.tipo}


def check_record(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_duplicate_record``."""
    return _record_args(archive, args, lang)


def check_delete(archive: Archive, args: Args, lang: str) -> Args:
    """``dedalo_delete_record``: refused while other records link to it, unless ``unlink``."""
    from app.core.archive.records import record_linked

    out = _record_args(archive, args, lang)
    if is_ref(args["section_id"]) or args.get("unlink"):
        return out
    key = RecordKey(out["section_tipo"], int(args["section_id"]))
    incoming = [link for link in archive.links_to(key) if link.source != key]
    if incoming:
        raise record_linked(key, incoming)
    return out


CHECKS: dict[str, Check] = {
    "dedalo_create_record": check_create,
    "dedalo_duplicate_record": check_record,
    "dedalo_delete_record": check_delete,
    "dedalo_set_field": check_field_write,
    "dedalo_save_component": check_field_write,
    "dedalo_portal_link": check_portal,
    "dedalo_portal_unlink": check_portal,
    "dedalo_find_or_create": check_find_or_create,
    "dedalo_upload_media": check_upload,
}
