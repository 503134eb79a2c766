"""What a confirm card shows of each op, in the archive's words: sections, fields and records
by their labels, values as text, and a field's value before and after.

Read from the archive by the core (on a read thread, in a front end), so a card renders exactly
what Apply will change without reading the archive itself. Every label is in the language the
card is shown in (``lang``); the front end only puts the pieces into its own sentences.

A plan reference ``{"ref": op_id}`` is a record an earlier op of the plan makes (or finds): it
is named by that op's step (:attr:`RecordName.step`), with the label the record will have when
the referenced op gives it one, and by its key once an apply report says which record it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.agent.citations import langs_text
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.errors import ArxiuError

if TYPE_CHECKING:
    from app.core.agent.plan_types import ChangePlan, PlanOp
    from app.core.archive.model import Field
    from app.core.archive.store import Archive

FIELD_TOOLS = frozenset({"dedalo_set_field", "dedalo_save_component"})
FIELD_ARGS = ("field_tipo", "component_tipo", "field")
VALUE_ARGS = ("value", "items", "values", "text")
CREATING_TOOLS = frozenset({"dedalo_create_record", "dedalo_duplicate_record"})
"""Tools whose referenced record is always new (``dedalo_find_or_create`` may find one)."""
MAKING_TOOLS = CREATING_TOOLS | {"dedalo_find_or_create"}
"""Tools whose op a later op may reference (the record it makes or finds)."""


@dataclass(frozen=True)
class FieldChange:
    """A field's value before the op and the value the op writes."""

    field_label: str
    before: str
    after: str
    langs: tuple[str, ...] = ()
    """The languages the new value is stored in (a multilingual field's; ``()`` otherwise)."""


@dataclass(frozen=True)
class RecordName:
    """A record an op names, as a person knows it: its label and key, or, for a record an
    earlier step of the plan makes, that step."""

    key: RecordKey | None
    """``None`` for a plan reference (the record does not exist before the apply)."""
    label: str = ""
    """The record's label (for a reference, the label its step gives it; ``""`` if none)."""
    step: int | None = None
    """For a plan reference: the 1-based number of the op that makes or finds the record."""
    ref: str | None = None
    """For a plan reference: that op's id (its key is in the apply report's ``created``)."""
    created: bool = True
    """For a plan reference: whether that step always creates it (else it may find it)."""

    def applied(self, created: Mapping[str, RecordKey]) -> RecordName:
        """This name once an apply made the referenced records (``op_id → key``)."""
        if self.ref is None or self.ref not in created:
            return self
        return RecordName(created[self.ref], self.label)


@dataclass(frozen=True)
class FieldValue:
    """A value an op writes into a field: as text, and the records it links."""

    field_label: str
    text: str = ""
    records: tuple[RecordName, ...] = ()
    langs: tuple[str, ...] = ()
    """The languages the value is stored in (a multilingual field's; ``()`` otherwise): the
    text names them too (``ca: Mestra``)."""


@dataclass(frozen=True)
class OpPreview:
    """One op in words: what it does (its ``tool``), where, and with which values."""

    step: int
    tool: str
    section: str = ""
    """The label of the section the op writes in."""
    record: RecordName | None = None
    """The record the op changes (``None`` for an op that makes a new one)."""
    field_label: str = ""
    values: tuple[FieldValue, ...] = ()
    """The values written (a new record's, a match's, a field's new value)."""
    only_if_created: tuple[FieldValue, ...] = ()
    """``dedalo_find_or_create``'s ``set``: written only when the record is created."""
    target: RecordName | None = None
    """The record a portal link or unlink names."""
    path: str = ""
    unlink: bool = False
    change: FieldChange | None = None
    makes: RecordName | None = None
    """The record the op makes (or finds), named as a later op's reference names it."""


def plan_previews(archive: Archive, plan: ChangePlan, lang: str = "lg-eng") -> dict[str, OpPreview]:
    """``op_id → preview`` of every op of ``plan``, labels in ``lang``."""
    steps = {op.op_id: number for number, op in enumerate(plan.ops, start=1)}
    reader = _Reader(archive, plan, steps, lang)
    return {op.op_id: reader.preview(op) for op in plan.ops}


class _Reader:
    """Reads the labels one plan's previews need (each section, field and record once)."""

    def __init__(
        self, archive: Archive, plan: ChangePlan, steps: Mapping[str, int], lang: str
    ) -> None:
        self.archive, self.plan, self.steps, self.lang = archive, plan, steps, lang

    def preview(self, op: PlanOp) -> OpPreview:
        args = op.args
        tipo = args.get("section_tipo")
        section = tipo if isinstance(tipo, str) else ""
        field_tipo = _field_arg(args)
        value_name = next((k for k in VALUE_ARGS if k in args), None)
        values: tuple[FieldValue, ...] = ()
        if field_tipo is not None and value_name is not None:
            values = (self.value(field_tipo, args[value_name]),)
        elif op.tool in ("dedalo_create_record", "dedalo_find_or_create"):
            values = self.values(args.get("values") or args.get("match"))
        unlink = args.get("unlink")
        path = args.get("path")
        return OpPreview(
            step=self.steps.get(op.op_id, 0),
            tool=op.tool,
            section=self.section_label(section),
            record=self.record(section, args.get("section_id")),
            field_label=self.field_label(field_tipo) if field_tipo else "",
            values=values,
            only_if_created=self.values(args.get("set")),
            target=self.name(args.get("target")),
            path=path if isinstance(path, str) else "",
            unlink=unlink is True,
            change=self.change(op, section, field_tipo),
            makes=self.referenced(op.op_id) if op.tool in MAKING_TOOLS else None,
        )

    def change(self, op: PlanOp, tipo: str, field_tipo: str | None) -> FieldChange | None:
        """Before and after of a field-changing op on an existing record, else ``None`` (a
        relation's records by ``label (key)``; a reference has no text: see ``values``).

        ``before`` is every value the op replaces: in a multilingual field only the languages
        written (a ``lang`` argument's, a ``{lang: text}`` value's), else all of them, each
        language named when there are several; ``after`` names the language it is stored in.
        """
        sid = op.args.get("section_id")
        if op.tool not in FIELD_TOOLS or not tipo or not isinstance(sid, int) or not field_tipo:
            return None
        found = self.field(field_tipo)
        if found is None:
            return None
        record = self.archive.find_record(RecordKey(tipo, sid))
        value = next((op.args[k] for k in VALUE_ARGS if k in op.args), None)
        langs = _stored_langs(found, value, op.args.get("lang"))
        items = record.items(field_tipo) if record is not None else []
        if langs and op.tool == "dedalo_set_field":
            items = [i for i in items if i.get("lang") in langs]
        if found.kind == "relation":
            after = " · ".join(_named(self.name(_inner(v))) for v in _listed(value))
        else:
            after = _lang_named(_value_text(value, self.lang), langs, value)
        before = self.items_text(items) or "—"
        return FieldChange(found.label(self.lang), before, after or "—", langs)

    def items_text(self, items: Sequence[Mapping[str, object]]) -> str:
        """Stored items as text (records by ``label (key)``), each prefixed with its language
        when they are in more than one."""
        langs = {i.get("lang") for i in items} - {NEUTRAL_LANG, None}
        texts = []
        for item in items:
            name = self.name(item.get("value"))
            text = _named(name) if name is not None else _value_text(item.get("value"), self.lang)
            texts.append(_lang_prefix(item.get("lang"), len(langs) > 1) + text)
        return " · ".join(texts)

    def section_label(self, tipo: str) -> str:
        if not tipo or not self.archive.has_section(tipo):
            return tipo
        return self.archive.section(tipo).label(self.lang)

    def field(self, tipo: str) -> Field | None:
        try:
            return self.archive.field(tipo)
        except ArxiuError:
            return None

    def field_label(self, tipo: str) -> str:
        found = self.field(tipo)
        return found.label(self.lang) if found is not None else tipo

    def values(self, mapping: object) -> tuple[FieldValue, ...]:
        if not isinstance(mapping, Mapping):
            return ()
        return tuple(self.value(str(tipo), value) for tipo, value in mapping.items())

    def value(self, field_tipo: str, value: object) -> FieldValue:
        """A value for a field: a relation's records by name, anything else as text."""
        found = self.field(field_tipo)
        label = found.label(self.lang) if found is not None else field_tipo
        if found is not None and found.kind == "relation":
            names = tuple(n for v in _listed(value) if (n := self.name(_inner(v))) is not None)
            return FieldValue(label, records=names)
        langs = _stored_langs(found, value, None) if found is not None else ()
        text = _lang_named(_value_text(value, self.lang), langs, value)
        return FieldValue(label, text=text, langs=langs)

    def record(self, tipo: str, section_id: object) -> RecordName | None:
        if section_id is None:
            return None
        return self.name({"section_tipo": tipo, "section_id": section_id})

    def name(self, value: object) -> RecordName | None:
        """A locator or a plan reference as a record's name (``None`` for anything else)."""
        if not isinstance(value, Mapping):
            return None
        if set(value) == {"ref"}:
            return self.referenced(str(value["ref"]))
        inner = value.get("section_id")
        if isinstance(inner, Mapping) and set(inner) == {"ref"}:
            return self.referenced(str(inner["ref"]))
        tipo, sid = value.get("section_tipo"), value.get("section_id")
        if not isinstance(tipo, str) or not isinstance(sid, int) or isinstance(sid, bool):
            return None
        key = RecordKey(tipo, sid)
        label = self.archive.record_label(key, self.lang)
        return RecordName(key, "" if label == str(key) else label)

    def referenced(self, op_id: str) -> RecordName:
        """The record an earlier op makes, by its step and the label that op gives it."""
        op = self.plan.op(op_id)
        tool = op.tool if op is not None else ""
        label = self.future_label(op) if op is not None else ""
        return RecordName(None, label, self.steps.get(op_id), op_id, created=tool in CREATING_TOOLS)

    def future_label(self, op: PlanOp) -> str:
        """The label the record ``op`` makes will have: its section's label field among the
        values the op writes, or (a copy) the copied record's; else the text values that
        identify a record found or created (its ``match``)."""
        tipo = op.section_tipo
        if tipo is None or not self.archive.has_section(tipo):
            return ""
        if op.tool == "dedalo_duplicate_record":
            copied = self.record(tipo, op.args.get("section_id"))
            return copied.label if copied is not None else ""
        label_field = self.archive.section(tipo).label_field
        for name in ("match", "values", "set"):
            mapping = op.args.get(name)
            if isinstance(mapping, Mapping) and label_field in mapping:
                return _value_text(mapping[label_field], self.lang)
        match = op.args.get("match")  # what identifies the record, when it has no label yet
        if isinstance(match, Mapping):
            return " ".join(v for v in match.values() if isinstance(v, str) and v)
        return ""


def _stored_langs(fld: Field, value: object, lang: object) -> tuple[str, ...]:
    """The languages a value of ``fld`` is stored in (``()``: a language-neutral field, or a
    plain value whose language the op does not name)."""
    if not fld.multilingual:
        return ()
    if isinstance(lang, str) and lang:
        return (lang,)
    if isinstance(value, Mapping) and isinstance(value.get("lang"), str):
        return (str(value["lang"]),)
    if isinstance(value, Mapping) and value and all(str(k).startswith("lg-") for k in value):
        return tuple(str(k) for k in value)
    return ()


def _lang_named(text: str, langs: tuple[str, ...], value: object) -> str:
    """``text`` led by its one language (``ca: Mestra``); a ``{lang: text}`` value's text
    already names each of its languages."""
    if len(langs) != 1 or not text or (isinstance(value, Mapping) and langs[0] in value):
        return text
    return f"{langs_text(langs)}: {text}"


def _named(name: RecordName | None) -> str:
    """A record's ``label (key)`` (``""`` for a reference: it has no key yet)."""
    if name is None or name.key is None:
        return ""
    return f"{name.label} ({name.key})" if name.label else str(name.key)


def _field_arg(args: Mapping[str, object]) -> str | None:
    return next((v for k in FIELD_ARGS if isinstance(v := args.get(k), str)), None)


def _listed(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else [value]


def _inner(value: object) -> object:
    """An item's value (``{lang?, value}``), else the value itself."""
    if isinstance(value, Mapping) and "value" in value and "section_tipo" not in value:
        return value["value"]
    return value


def _items_text(items: Sequence[Mapping[str, object]], lang: str) -> str:
    """Items ``{lang?, value}`` as text, each language named when there are several."""
    langs = {i.get("lang") for i in items} - {NEUTRAL_LANG, None}
    return " · ".join(
        _lang_prefix(i.get("lang"), len(langs) > 1) + _value_text(i.get("value"), lang)
        for i in items
    )


def _lang_prefix(lang: object, several: bool) -> str:
    return (
        f"{langs_text([lang])}: "
        if several and isinstance(lang, str) and lang != NEUTRAL_LANG
        else ""
    )


def _value_text(value: object, lang: str) -> str:
    """A value as text: a list's items joined, ``{lang: text}`` with each language named."""
    if value is None:
        return ""
    if isinstance(value, list):
        items = [v if isinstance(v, Mapping) and "value" in v else {"value": v} for v in value]
        return _items_text(items, lang)
    if isinstance(value, Mapping):
        if "section_tipo" in value and "section_id" in value:
            return f"{value['section_tipo']}/{value['section_id']}"
        if "value" in value:
            return _value_text(value["value"], lang)
        if value and all(str(k).startswith("lg-") for k in value):
            return " · ".join(
                f"{langs_text([str(k)])}: {_value_text(v, lang)}" for k, v in value.items()
            )
        return json.dumps(dict(value), ensure_ascii=False)
    return str(value)
