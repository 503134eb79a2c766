"""JSON export: the selected records with every value, their links and media, and the schema.

One document, UTF-8::

    {"arxiu_export": 1,
     "notice": null | RESTRICTED_NOTICE,
     "exported_at": "2026-12-02T01:00:00+00:00",
     "sections": [{"tipo", "labels", "description", "restricted", "writable", "label_field"}],
     "fields": [{"tipo", "section_tipo", "labels", "kind", "multilingual", "target_section",
                 "position"}],
     "records": [{"section_tipo", "section_id", "restricted", "external_ids": [[source, id]],
                  "values": {field: [{"id", "lang"[, "lang_guessed"], "value"}]},
                  "links": [{"field", "target": "tipo/id"}],
                  "media": [{"field", "path", "mime", "size", "sha256", "width", "height",
                             "duration_s"}][, "linked": true]}],
     "csv_layouts": {meta key: saved column mapping}}

``sections`` holds the exported section and the sections its relations point at (their
definitions); ``fields`` the fields of all of them. After the selected records come the records
of *other* sections they link to (the people, places and subjects of a fonds), each marked
``"linked": true``, so that a section or a subtree exported alone keeps its links when it is
imported into another archive (restricted ones left out unless asked for, and counted; a link
within the exported section, such as the "part of" of an exported subtree's top, brings nothing).
An import of several exports together takes a record once, its own export's entry first.

Values are written as stored (every item with its language), so
:mod:`~app.core.archive.importers.json_import` puts back the same records, fields and links.
Media are described, not copied. ``csv_layouts`` are the column mappings saved by CSV imports
into the exported section, so that the importing archive recognises the same table again.

The document is the same whichever engine holds the archive: objects read from the archive
(labels, values, saved mappings) are written with their keys in code point order, a record's
fields in their sections' order (PostgreSQL's ``jsonb`` keeps no key order), and external ids
sorted here rather than in a server's collation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.exporters.base import (
    RESTRICTED_NOTICE,
    ExportRequest,
    ExportSummary,
    selected,
    writable,
)
from app.core.archive.exporters.csv_export import children_of
from app.core.archive.importers.csv_mapping import META_PREFIX
from app.core.archive.media import media_of
from app.core.archive.model import Field, Link, Record, RecordKey, Section
from app.core.archive.store import now
from app.core.counted import Counted
from app.core.json_types import JsonObject, JsonValue
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

FORMAT = "json"
VERSION = 1
LINKED = Counted(
    "with 1 record of another section that the records link to, so the links hold",
    "with {n:,} records of other sections that the records link to, so the links hold",
)
"""The note of an export that carries the records its records link to."""


def section_data(section: Section) -> JsonObject:
    """A section definition as JSON-ready data."""
    return {
        "tipo": section.tipo,
        "labels": dict(sorted(section.labels.items())),
        "description": section.description,
        "restricted": section.restricted,
        "writable": section.writable,
        "label_field": section.label_field,
    }


def field_data(item: Field) -> JsonObject:
    """A field definition as JSON-ready data."""
    return {
        "tipo": item.tipo,
        "section_tipo": item.section_tipo,
        "labels": dict(sorted(item.labels.items())),
        "kind": item.kind,
        "multilingual": item.multilingual,
        "target_section": item.target_section,
        "position": item.position,
    }


def _external_ids(archive: Archive, section: str) -> dict[int, list[list[str]]]:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT section_id, source, external_id FROM external_ids WHERE section_tipo = ?",
            (section,),
        ).fetchall()
    out: dict[int, list[list[str]]] = {}
    # sorted here, in code point order on both engines (a server's collation may differ)
    for sid, source, ext in sorted((int(r[0]), str(r[1]), str(r[2])) for r in rows):
        out.setdefault(sid, []).append([source, ext])
    return out


def key_ordered(value: object) -> JsonValue:
    """``value`` (parsed JSON) with the keys of every object in it in code point order (the
    same JSON from either engine)."""
    if isinstance(value, dict):
        return {str(key): key_ordered(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [key_ordered(item) for item in value]
    if value is None or isinstance(value, str | int | float):  # bool is an int
        return value
    raise TypeError(f"{type(value).__name__} is not JSON")


def record_data(
    archive: Archive,
    record: Record,
    ids: list[list[str]],
    order: dict[str, int] | None = None,
    links: list[Link] | None = None,
) -> JsonObject:
    """One record as JSON-ready data; its fields in the ``order`` given (field tipo → rank;
    others after, by tipo); ``links``: its links, when already read."""
    rank = order or {}
    tipos = sorted(record.values, key=lambda tipo: (rank.get(tipo, len(rank)), tipo))
    return {
        "section_tipo": record.section_tipo,
        "section_id": record.section_id,
        "restricted": record.restricted,
        "external_ids": [list(pair) for pair in ids],
        "values": {tipo: key_ordered(record.values[tipo]) for tipo in tipos},
        "links": [
            {"field": link.field_tipo, "target": str(link.target)}
            for link in (archive.links_from(record.key) if links is None else links)
        ],
        "media": [
            {
                "field": m.field_tipo,
                "path": m.path,
                "mime": m.mime,
                "size": m.size,
                "sha256": m.sha256,
                "width": m.width,
                "height": m.height,
                "duration_s": m.duration_s,
            }
            for m in media_of(archive, record.key)
        ],
    }


def csv_layouts(archive: Archive, section: str) -> JsonObject:
    """The column mappings saved in the archive's meta for tables imported into ``section``."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT key, value FROM meta WHERE key LIKE ?", (META_PREFIX + "%",)
        ).fetchall()
    out: JsonObject = {}
    for key, value in sorted((str(r[0]), str(r[1])) for r in rows):  # code point order
        try:
            data = json.loads(value)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("section") == section:
            out[str(key)] = key_ordered(data)
    return out


def linked_records(
    archive: Archive,
    links: dict[RecordKey, list[Link]],
    request: ExportRequest,
    summary: ExportSummary,
) -> list[Record]:
    """The records of other sections that the exported records link to (``links``: each
    one's), in key order; restricted ones (by their own flag or their section's) only with
    ``include_restricted``, the others counted as left out (and a note says how many came
    along)."""
    targets = sorted(
        {
            link.target
            for record_links in links.values()
            for link in record_links
            if link.target.section_tipo != request.section
        },
        key=lambda key: (key.section_tipo, key.section_id),
    )
    found: list[Record] = []
    for key in targets:
        record = archive.find_record(key)
        if record is None:
            continue
        if archive.is_restricted(key):
            if not request.include_restricted:
                summary.restricted_left_out += 1
                continue
            summary.restricted_included += 1
        found.append(record)
    if found:
        summary.notes.append(Phrase.of(LINKED.template(len(found)), n=len(found)))
    return found


def document(archive: Archive, request: ExportRequest, summary: ExportSummary) -> JsonObject:
    """The export document for ``request`` (counting into ``summary``)."""
    records = list(selected(archive, request, summary, lambda k: children_of(archive, k)))
    links = {record.key: archive.links_from(record.key) for record in records}
    linked = linked_records(archive, links, request, summary)
    fields = archive.fields(request.section)
    tipos = [request.section]
    for item in fields:
        target = item.target_section
        if target and target not in tipos and archive.has_section(target):
            tipos.append(target)
    for record in linked:  # a link outside the relation fields' targets (a portal's)
        if record.section_tipo not in tipos:
            tipos.append(record.section_tipo)
    ids = {tipo: _external_ids(archive, tipo) for tipo in tipos}
    all_fields = [f for t in tipos for f in archive.fields(t)]
    order = {f.tipo: rank for rank, f in enumerate(all_fields)}

    def data(record: Record) -> JsonObject:
        own_ids = ids[record.section_tipo].get(record.section_id, [])
        return record_data(archive, record, own_ids, order, links.get(record.key))

    return {
        "arxiu_export": VERSION,
        "notice": RESTRICTED_NOTICE if summary.restricted_included else None,
        "exported_at": now(),
        "sections": [section_data(archive.section(t)) for t in tipos],
        "fields": [field_data(f) for f in all_fields],
        "records": [*(data(r) for r in records), *({**data(r), "linked": True} for r in linked)],
        "csv_layouts": csv_layouts(archive, request.section),
    }


def export(archive: Archive, request: ExportRequest) -> ExportSummary:
    """Write the records ``request`` selects as one JSON document (see the module doc)."""
    out = writable(Path(request.out))
    summary = ExportSummary(FORMAT, str(out))
    data = document(archive, request, summary)
    with out.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
    return summary
