"""How read tools show records to the model: values by language, relations with labels, snippets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Required, TypedDict

from app.core.archive.model import NEUTRAL_LANG, Field, Record, RecordKey
from app.core.archive.records import locators
from app.core.tools.base import ToolContext
from app.core.tools.query import Compiled, restricted_sql, run_search
from app.core.tools.resolve import fold

MAX_TEXT_CHARS = 2000
MAX_LINKED_FROM = 50
SNIPPET_CHARS = 80


class LinkEntry(TypedDict):
    """A linked record as a view names it."""

    section_tipo: str
    section_id: int
    label: str


class FieldEntry(TypedDict, total=False):
    """One field of a record view: its relations' ``links``, or its ``values`` by language
    (``truncated`` when a long value was cut)."""

    tipo: Required[str]
    label: Required[str]
    kind: Required[str]
    links: list[LinkEntry]
    values: dict[str, object]
    truncated: bool


class LinkedFrom(TypedDict):
    """A record that links to the viewed one, and through which field."""

    section_tipo: str
    section_id: int
    label: str
    field: str
    field_label: str


class RecordView(TypedDict, total=False):
    """A record as the model sees it (``linked_from`` when every field was asked for)."""

    section_tipo: Required[str]
    section_id: Required[int]
    label: Required[str]
    version: Required[int]
    fields: Required[list[FieldEntry]]
    note: str
    linked_from: list[LinkedFrom]


class Snippet(TypedDict, total=False):
    """Where a text search matched a record (empty when no value holds the words)."""

    field: str
    field_label: str
    lang: str | None
    snippet: str


def _clip(value: object) -> tuple[object, bool]:
    if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        return value[:MAX_TEXT_CHARS] + "…", True
    return value, False


def values_by_lang(
    items: Iterable[Mapping[str, object]], lang: str | None
) -> tuple[dict[str, object], bool]:
    """A field's items as ``{lang: value}`` (a list where a language has several values)."""
    out: dict[str, object] = {}
    cut = False
    for item in items:
        item_lang = str(item.get("lang") or NEUTRAL_LANG)
        if lang and item_lang not in (lang, NEUTRAL_LANG):
            continue
        value, clipped = _clip(item.get("value"))
        cut = cut or clipped
        if item_lang in out:
            previous = out[item_lang]
            out[item_lang] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            out[item_lang] = value
    return out, cut


def _field_entry(
    ctx: ToolContext,
    fld: Field | None,
    tipo: str,
    items: Sequence[Mapping[str, object]],
    lang: str | None,
) -> tuple[FieldEntry, list[RecordKey]]:
    entry = FieldEntry(
        tipo=tipo, label=fld.label(ctx.lang) if fld else tipo, kind=fld.kind if fld else "text"
    )
    targets = locators(items) if fld is None or fld.kind == "relation" else []
    if targets:
        entry["links"] = [
            LinkEntry(
                section_tipo=t.section_tipo,
                section_id=t.section_id,
                label=ctx.archive.record_label(t, ctx.lang),
            )
            for t in targets
        ]
        return entry, targets
    entry["values"], cut = values_by_lang(items, lang)
    if cut:
        entry["truncated"] = True
    return entry, []


def record_view(
    ctx: ToolContext, record: Record, wanted: list[str] | None, lang: str | None
) -> tuple[RecordView, list[RecordKey]]:
    """A record as the model sees it, and every other record the view mentions."""
    defined = {f.tipo: f for f in ctx.archive.fields(record.section_tipo)}
    order = [t for t in defined if t in record.values] + [
        t for t in record.values if t not in defined
    ]
    related: list[RecordKey] = []
    fields = []
    for tipo in order:
        if wanted is not None and tipo not in wanted:
            continue
        entry, targets = _field_entry(ctx, defined.get(tipo), tipo, record.items(tipo), lang)
        fields.append(entry)
        related.extend(targets)
    data = RecordView(
        section_tipo=record.section_tipo,
        section_id=record.section_id,
        label=ctx.archive.label_of(record, ctx.lang),
        version=record.version,
        fields=fields,
    )
    if any(f.get("truncated") for f in fields):
        data["note"] = "Long values were cut; use dedalo_retrieve_passages to read them in parts."
    if wanted is None:
        data["linked_from"], sources = _linked_from(ctx, record.key)
        related.extend(sources)
    return data, list(dict.fromkeys(related))


def _linked_from(ctx: ToolContext, key: RecordKey) -> tuple[list[LinkedFrom], list[RecordKey]]:
    links = ctx.archive.links_to(key)[:MAX_LINKED_FROM]
    labels: dict[str, str] = {}
    out = []
    for link in links:
        if link.field_tipo not in labels:
            fields = ctx.archive.fields(link.source.section_tipo)
            labels.update({f.tipo: f.label(ctx.lang) for f in fields})
        out.append(
            LinkedFrom(
                section_tipo=link.source.section_tipo,
                section_id=link.source.section_id,
                label=ctx.archive.record_label(link.source, ctx.lang),
                field=link.field_tipo,
                field_label=labels.get(link.field_tipo, link.field_tipo),
            )
        )
    return out, [link.source for link in links]


def search_text(
    ctx: ToolContext, section_tipo: str, query: str, limit: int
) -> tuple[int, list[Record]]:
    """Records of ``section_tipo`` where every word of ``query`` appears in some value."""
    compiled = Compiled(sections={section_tipo}, dialect=ctx.archive.db.dialect)
    compiled.sql.append(f"r0.section_tipo = {compiled.param(section_tipo)}")
    if ctx.exclude_restricted:
        compiled.sql.append(f"NOT {restricted_sql('r0')}")
    for word in fold(query).split():
        pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        compiled.sql.append(compiled.text_anywhere(pattern))
    return run_search(ctx.archive, compiled, limit=limit, offset=0)


def _fold_same_length(text: str) -> str:
    """``fold`` one character at a time, so positions in the result match ``text``."""
    return "".join((fold(c) or " ")[:1] if not c.isspace() else " " for c in text)


def snippet_for(ctx: ToolContext, record: Record, query: str) -> Snippet:
    """The field and a snippet around the first word of ``query`` found in ``record``."""
    words = fold(query).split()
    labels = {f.tipo: f.label(ctx.lang) for f in ctx.archive.fields(record.section_tipo)}
    for tipo, items in record.values.items():
        for item in items:
            value = item.get("value")
            if not isinstance(value, str):
                continue
            folded = _fold_same_length(value)
            found = next((folded.find(w) for w in words if w in folded), -1)
            if found < 0:
                continue
            start = max(0, found - SNIPPET_CHARS)
            end = found + SNIPPET_CHARS
            snippet = ("…" if start else "") + value[start:end] + ("…" if end < len(value) else "")
            return Snippet(
                field=tipo,
                field_label=labels.get(tipo, tipo),
                lang=item.get("lang"),
                snippet=" ".join(snippet.split()),
            )
    return Snippet()
