"""Importer of Arxiu's own JSON export (KIND ``json``): the records back with their links.

PATH is one export (:mod:`~app.core.archive.exporters.json_export`) or a folder of them
(``*.json``, imported together, so the links between them resolve whatever the order). The
sections and fields the archive lacks are created as exported; existing ones are kept. Each
record keeps its key when that key is free (a fresh archive gets the same keys, hence the same
links); a key already used by another record gets the section's next id, and the relations that
point at it are rewritten. A relation to a record that is neither in the export(s) nor in the
archive is dropped and counted as unresolved. Media files are not carried (only described); the
saved CSV column mappings (``csv_layouts``) are kept where the archive has none for the layout.

The records an export carries for its links (``"linked": true``) are imported like the others,
each once however many of the exports imported together carry it. Records are matched under
their first external id's source (so a record imported from a CSV and exported keeps matching
that CSV), else under the source ``json`` by their original key: importing the same export
again creates nothing. Skips: ``import.json_malformed`` (a file in a
folder that is not an export; a single such file raises it), ``import.bad_row`` (a record entry
without a section or values, or whose values are not lists of item objects; ``line`` is the
record's position in ``records``); their reasons are phrases (:meth:`Skip.said`), said in the
app's and the CLI's language.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive import records as record_rows
from app.core.archive.bulk import NewRecord
from app.core.archive.importers.base import (
    BAD_ROW,
    Built,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    Values,
    external_keys,
)
from app.core.archive.importers.csv_mapping import META_PREFIX
from app.core.archive.importers.table_read import read_bytes
from app.core.archive.model import Field, RecordKey, Section
from app.core.errors import ImportFailed
from app.core.json_types import (
    JsonList,
    JsonObject,
    JsonShapeError,
    JsonValue,
    as_list,
    as_object,
    object_or_empty,
    opt_str,
)
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

KIND = "json"
SOURCE = "json"
MAX_JSON_BYTES = 512 * 1024 * 1024
MALFORMED = "import.json_malformed"


@dataclass
class _Entry:
    """One exported record: where it came from, where it goes, how it is matched."""

    origin: RecordKey
    values: JsonObject
    restricted: bool | None
    source: str
    external_id: str
    position: int
    file: str
    target: RecordKey | None = None
    linked: bool = False
    """Carried by an export of another section for the links of its records."""


@dataclass
class _Docs:
    """What the export files hold together."""

    sections: dict[str, Section] = field(default_factory=dict)
    fields: dict[str, Field] = field(default_factory=dict)
    entries: list[_Entry] = field(default_factory=list)
    layouts: JsonObject = field(default_factory=dict)


def _malformed(file: str, why: str | Phrase) -> ImportFailed:
    return ImportFailed(
        MALFORMED,
        Phrase.of("{file} is not an Arxiu JSON export: {why}.", file=file, why=why),
        hint='An export starts {"arxiu_export": 1, ...} (arxiu export json).',
        details={"file": file},
    )


def load_document(path: Path) -> JsonObject:
    """The export in ``path``, checked at the top level (``import.json_malformed``)."""
    data = read_bytes(path, MAX_JSON_BYTES)
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _malformed(path.name, Phrase.of("not JSON ({why})", why=str(exc)[:200])) from exc
    if not isinstance(doc, dict) or doc.get("arxiu_export") != 1:
        raise _malformed(path.name, Phrase.of("no 'arxiu_export': 1"))
    for key in ("sections", "fields", "records"):
        if not isinstance(doc.get(key), list):
            raise _malformed(path.name, Phrase.of("'{key}' is not a list", key=key))
    return doc


def _integer(value: JsonValue) -> int:
    """``int(value)`` for a number or a numeric string (``TypeError`` for anything else)."""
    if isinstance(value, str | int | float):
        return int(value)
    raise TypeError(f"expected an integer, not {type(value).__name__}")


def _labels(data: JsonObject) -> dict[str, str]:
    labels = object_or_empty(data, "labels")
    if not all(isinstance(text, str) for text in labels.values()):
        raise JsonShapeError("'labels' must map languages to strings")
    return {lang: text for lang, text in labels.items() if isinstance(text, str)}


def _section(value: JsonValue) -> Section:
    data = as_object(value, "a section")
    return Section(
        str(data["tipo"]),
        _labels(data),
        str(data.get("description") or ""),
        bool(data.get("restricted")),
        bool(data.get("writable")),
        opt_str(data, "label_field"),
    )


def _field(value: JsonValue) -> Field:
    data = as_object(value, "a field")
    position = data.get("position")
    return Field(
        str(data["tipo"]),
        str(data["section_tipo"]),
        _labels(data),
        str(data.get("kind") or "text"),
        bool(data.get("multilingual")),
        opt_str(data, "target_section"),
        _integer(position) if position else 0,
    )


def _read(doc: JsonObject, file: str, docs: _Docs, summary: ImportSummary) -> None:
    """Add one document's sections, fields and records to ``docs``."""
    try:
        for item in as_list(doc["sections"]):
            section = _section(item)
            docs.sections.setdefault(section.tipo, section)
        for item in as_list(doc["fields"]):
            definition = _field(item)
            docs.fields.setdefault(definition.tipo, definition)
    except (KeyError, TypeError, ValueError) as exc:
        raise _malformed(
            file, Phrase.of("a section or field definition lacks {what}", what=str(exc))
        ) from exc
    layouts = doc.get("csv_layouts")
    if isinstance(layouts, dict):
        docs.layouts.update((k, v) for k, v in layouts.items() if str(k).startswith(META_PREFIX))
    for position, item in enumerate(as_list(doc["records"]), start=1):
        summary.read += 1
        entry = _entry(item, position, file)
        if isinstance(entry, Skip):
            summary.skipped.append(entry)
        else:
            docs.entries.append(entry)


def _entry(item: JsonValue, position: int, file: str) -> _Entry | Skip:
    """The record at ``position`` of ``file``'s ``records``, or the skip that says why it is
    not one."""
    given = item.get("values") if isinstance(item, dict) else None
    if not isinstance(item, dict) or not isinstance(given, dict):
        reason = "a record needs 'section_tipo', 'section_id' and 'values'"
        return Skip.said(position, file, BAD_ROW, reason)
    try:
        origin = RecordKey(str(item["section_tipo"]), _integer(item["section_id"]))
    except (KeyError, TypeError, ValueError):
        reason = "a record needs 'section_tipo' and an integer 'section_id'"
        return Skip.said(position, file, BAD_ROW, reason)
    ids = item.get("external_ids")
    first = ids[0] if isinstance(ids, list) and ids else None
    pair = first if isinstance(first, list) and len(first) == 2 else None
    source, external = (str(pair[0]), str(pair[1])) if pair else (SOURCE, str(origin))
    restricted = item.get("restricted")
    flag = restricted if isinstance(restricted, bool) else None
    linked = item.get("linked") is True
    return _Entry(origin, given, flag, source, external, position, file, linked=linked)


def _once(entries: list[_Entry], summary: ImportSummary) -> list[_Entry]:
    """Each exported record once: several exports imported together may each carry a record
    their records link to; its own section's export is taken (else the first), and the other
    copies are not counted as read."""
    chosen: dict[RecordKey, _Entry] = {}
    for entry in entries:
        kept = chosen.get(entry.origin)
        if kept is None or (kept.linked and not entry.linked):
            chosen[entry.origin] = entry
    if len(chosen) < len(entries):
        summary.read -= len(entries) - len(chosen)
    first = {id(entry) for entry in chosen.values()}
    return [entry for entry in entries if id(entry) in first]


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.json") if p.is_file())
        if not files:
            raise ImportFailed(
                "import.file_missing",
                Phrase.of("There is no *.json file in {path}.", path=str(path)),
            )
        return files
    return [path]


def import_json(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import one Arxiu JSON export, or a folder of them (see the module doc)."""
    path = Path(path).expanduser()
    files = _files(path)
    summary = ImportSummary(kind=KIND, path=str(path), read_unit="records")
    docs = _Docs()
    for file in files:
        try:
            doc = load_document(file)
        except ImportFailed as exc:
            if len(files) == 1:
                raise
            summary.skipped.append(Skip.of_error(0, file.name, exc))
            continue
        _read(doc, file.name, docs, summary)
    docs.entries = _once(docs.entries, summary)
    _ensure_schema(archive, docs)
    _place(archive, docs)
    relations = {f.tipo for f in archive.fields() if f.kind == "relation"}
    moved: dict[RecordKey, RecordKey | None] = {
        e.origin: e.target for e in docs.entries if e.target is not None
    }
    runs: dict[str, ImportRun] = {}
    for number, entry in enumerate(docs.entries, start=1):
        run = runs.setdefault(entry.source, ImportRun(archive, summary, entry.source))
        built = _built(archive, entry, relations, moved)
        if isinstance(built, Skip):
            summary.skipped.append(built)
        else:
            run.add(built, entry.position, entry.file)
        if progress is not None and number % 500 == 0:
            progress(number, len(docs.entries))
    for run in runs.values():
        run.flush()
    for key, mapping in docs.layouts.items():
        if archive.meta(key) is None:
            archive.set_meta(key, json.dumps(mapping, ensure_ascii=False))
    return summary


def _ensure_schema(archive: Archive, docs: _Docs) -> None:
    known_fields = {f.tipo for f in archive.fields()}
    new_sections = [s for s in docs.sections.values() if not archive.has_section(s.tipo)]
    for section in new_sections:
        archive.put_section(
            Section(
                section.tipo,
                section.labels,
                section.description,
                section.restricted,
                section.writable,
            )
        )
    for item in docs.fields.values():
        if item.tipo not in known_fields and archive.has_section(item.section_tipo):
            archive.put_field(item)
    for section in new_sections:
        if section.label_field:
            archive.put_section(section)


def _place(archive: Archive, docs: _Docs) -> None:
    """Give every entry its key: the one it was imported under, its own, or a new one."""
    known: dict[str, dict[str, RecordKey]] = {}
    used: dict[str, set[int]] = {}
    for tipo in {e.origin.section_tipo for e in docs.entries}:
        with archive.db.reading() as conn:
            rows = conn.execute(
                "SELECT section_id FROM records WHERE section_tipo = ?", (tipo,)
            ).fetchall()
            used[tipo] = {int(r[0]) for r in rows}
            used[tipo].add(record_rows.next_id(conn, tipo) - 1)
    pending: list[_Entry] = []
    for entry in docs.entries:
        keys = known.setdefault(entry.source, external_keys(archive, entry.source))
        tipo = entry.origin.section_tipo
        if entry.external_id in keys:
            entry.target = keys[entry.external_id]
        elif entry.origin.section_id not in used[tipo]:
            entry.target = entry.origin
            used[tipo].add(entry.origin.section_id)
        else:
            pending.append(entry)
    for entry in pending:
        tipo = entry.origin.section_tipo
        entry.target = RecordKey(tipo, max(used[tipo]) + 1)
        used[tipo].add(entry.target.section_id)


def _built(
    archive: Archive, entry: _Entry, relations: set[str], moved: dict[RecordKey, RecordKey | None]
) -> Built | Skip:
    """The record of one entry, its relations pointed at their new keys (``moved``; a target
    outside the export that the archive holds is kept and remembered there), or the skip that
    says its values are not lists of item objects."""
    values: Values = {}
    links: set[RecordKey] = set()
    unresolved: list[str] = []
    for tipo, given in entry.values.items():
        if given is None:
            continue  # an empty field
        if not isinstance(given, list):
            reason = "field {field}: values must be a list of {{lang, value}} items"
            return Skip.said(entry.position, entry.file, BAD_ROW, reason, field=tipo)
        if tipo in relations:
            kept, found, missed = _relinked(archive, tipo, given, moved)
            links.update(found)
            unresolved.extend(missed)
            if kept:
                values[tipo] = kept
            continue
        items = [item for item in given if isinstance(item, dict)]
        if len(items) != len(given):
            reason = "field {field}: every item must be a {{lang, value}} object"
            return Skip.said(entry.position, entry.file, BAD_ROW, reason, field=tipo)
        values[tipo] = items
    assert entry.target is not None
    record = NewRecord(
        entry.target.section_tipo,
        values,
        entry.external_id,
        entry.target.section_id,
        entry.restricted,
    )
    return Built(record, len(links), tuple(unresolved))


def _relinked(
    archive: Archive, tipo: str, items: JsonList, moved: dict[RecordKey, RecordKey | None]
) -> tuple[list[JsonObject], set[RecordKey], list[str]]:
    """A relation field's items pointed at their targets' new keys, the records they link to,
    and the targets found nowhere (their items are dropped)."""
    kept: list[JsonObject] = []
    links: set[RecordKey] = set()
    unresolved: list[str] = []
    for item in items:
        value = item.get("value") if isinstance(item, dict) else None
        target = _locator(value)
        new = None
        if target is not None:
            if target not in moved:
                moved[target] = target if archive.find_record(target) else None
            new = moved[target]
        if new is None or not isinstance(item, dict) or not isinstance(value, dict):
            unresolved.append(str(target) if target else f"{tipo} value")
            continue
        moved_to: JsonObject = {"section_tipo": new.section_tipo, "section_id": new.section_id}
        kept.append({**item, "value": {**value, **moved_to}})
        links.add(new)
    return kept, links, unresolved


def _locator(value: JsonValue) -> RecordKey | None:
    """The record a relation item's value names, if it names one."""
    if isinstance(value, dict) and "section_tipo" in value and "section_id" in value:
        try:
            return RecordKey(str(value["section_tipo"]), _integer(value["section_id"]))
        except (TypeError, ValueError):
            return None
    return None
