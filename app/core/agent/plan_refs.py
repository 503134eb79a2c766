"""Typed plan references: where a ``{"ref": op_id}`` may stand, and which section it must name.

A reference stands for the record an earlier op creates (or finds). It is allowed only where a
record of a known section is expected, and the referenced op's record must be of that section:

* ``section_id`` — the op's own ``section_tipo``;
* a portal ``target`` — the relation field's target section;
* the value of a relation field (``values``, ``match``, ``set``, ``value``, ``items``) — that
  field's target section.

Anywhere else (a text field's value, a field name, a path...) a reference is refused. The same
slots are computed when a plan is proposed and again, against the records actually made, when
it is applied; a mismatch is ``mcp.plan_invalid`` naming the op.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.errors import ArxiuError, ToolError
from app.core.json_types import JsonObject
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.model import Field, RecordKey
    from app.core.archive.store import Archive

VALUE_MAPS = ("values", "match", "set")


@dataclass(frozen=True)
class RefSlot:
    """One reference in an op's arguments: the op it names, where, and the section required."""

    ref: str
    where: str
    section: str | None
    """The section the referenced record must belong to (``None``: no record expected here)."""


def ref_target(value: object) -> str | None:
    """The op a plan reference ``{"ref": op_id}`` names (``None``: ``value`` is none)."""
    if isinstance(value, dict) and set(value) == {"ref"}:
        return str(value["ref"])
    return None


def is_ref(value: object) -> bool:
    """Whether ``value`` is a plan reference ``{"ref": op_id}``."""
    return ref_target(value) is not None


def refs_in(value: object) -> Iterator[str]:
    """Every ``{"ref": op_id}`` target anywhere in ``value``."""
    ref = ref_target(value)
    if ref is not None:
        yield ref
    elif isinstance(value, dict):
        for item in value.values():
            yield from refs_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from refs_in(item)


def ref_slots(tool: str, args: JsonObject, archive: Archive) -> list[RefSlot]:
    """The references of a (validated, tipo-keyed) op where a record is expected."""
    slots: list[RefSlot] = []
    section_tipo = args.get("section_tipo")
    ref = ref_target(args.get("section_id"))
    if ref is not None:
        required = section_tipo if isinstance(section_tipo, str) else None
        slots.append(RefSlot(ref, "section_id", required))
    fld = _field(archive, args.get("field"))
    ref = ref_target(args.get("target"))
    if ref is not None:
        target = fld.target_section if fld is not None and fld.kind == "relation" else None
        slots.append(RefSlot(ref, "target", target))
    for name in ("value", "items"):
        if name in args and fld is not None:
            slots += _value_slots(fld, args[name], name)
    for name in VALUE_MAPS:
        mapping = args.get(name)
        if isinstance(mapping, dict):
            for tipo, value in mapping.items():
                inner = _field(archive, tipo)
                if inner is not None:
                    slots += _value_slots(inner, value, f"{name}.{tipo}")
    return slots


def check_slots(op_id: str, tool: str, args: JsonObject, archive: Archive) -> list[RefSlot]:
    """The op's reference slots, each in a place that takes a record of a known section.

    Raises:
        ToolError: ``mcp.plan_invalid`` naming the op for a reference anywhere else.
    """
    slots = ref_slots(tool, args, archive)
    if len(slots) != sum(1 for _ in refs_in(args)):
        raise ref_invalid(
            op_id,
            Phrase.of(
                'Op {op_id}: a {{"ref": op_id}} may stand only for a record (a section_id, a '
                "portal target, or a relation field's value).",
                op_id=op_id,
            ),
        )
    for slot in slots:
        if slot.section is None:
            raise ref_invalid(
                op_id,
                Phrase.of(
                    "Op {op_id}: {where} takes no record of a known section, so it cannot "
                    "refer to op {ref}.",
                    op_id=op_id,
                    where=slot.where,
                    ref=slot.ref,
                ),
            )
    return slots


def check_made(op_id: str, slots: list[RefSlot], made: dict[str, RecordKey]) -> None:
    """At apply: every referenced op made a record, of the section its slot requires.

    Raises:
        ToolError: ``mcp.plan_invalid`` naming the op.
    """
    for slot in slots:
        key = made.get(slot.ref)
        if key is None:
            raise ref_invalid(
                op_id,
                Phrase.of(
                    "Op {op_id}: op {ref} made no record to refer to.", op_id=op_id, ref=slot.ref
                ),
            )
        if key.section_tipo != slot.section:
            raise ref_invalid(
                op_id,
                Phrase.of(
                    "Op {op_id}: {where} needs a record of {section}, but op {ref} made {key}.",
                    op_id=op_id,
                    where=slot.where,
                    section=str(slot.section),
                    ref=slot.ref,
                    key=str(key),
                ),
            )


def ref_invalid(op_id: str, message: str | Phrase) -> ToolError:
    """A reference refused: ``mcp.plan_invalid`` naming the op."""
    return ToolError(
        "mcp.plan_invalid",
        message,
        hint="Refer only to an earlier op that creates a record of the section required there.",
        category="input",
        details={"op_id": op_id},
    )


def _field(archive: Archive, tipo: object) -> Field | None:
    if not isinstance(tipo, str):
        return None
    try:
        return archive.field(tipo)
    except ArxiuError:
        return None


def _value_slots(fld: Field, value: object, where: str) -> list[RefSlot]:
    """References in a field's value at the shapes a relation accepts (ref, item, list)."""
    if fld.kind != "relation":
        return []
    return [RefSlot(ref, f"{where} ({fld.tipo})", fld.target_section) for ref in _locators(value)]


def _locators(value: object) -> list[str]:
    ref = ref_target(value)
    if ref is not None:
        return [ref]
    if isinstance(value, list):
        return [ref for item in value for ref in _locators(item)]
    inner = ref_target(value.get("value")) if isinstance(value, dict) else None
    return [] if inner is None else [inner]
