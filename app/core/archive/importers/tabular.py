"""Importer of tables: CSV, TSV and XLSX files with a column mapping (KIND ``csv``).

PATH is a ``.csv``, ``.tsv`` or ``.txt`` file, or an ``.xlsx`` workbook (first sheet, or
:attr:`~.base.ImportOptions.sheet`). The file is read whole (:mod:`.table_read`, :mod:`.xlsx`), its
header mapped (:mod:`.csv_mapping`: the mapping saved for this layout, else a guess, with the
edits of a ``--mapping`` file on top), and each row becomes one record of the layout's section:

* one section per layout, ``csv1``, ``csv2``... labelled with the file's stem, its fields made
  from the mapped columns (``csvN001``, ``csvN002``... in column order) labelled with their
  headers (in English, Catalan and Spanish for a known header); columns that only differ by a
  ``[lg-xxx]`` tag share one field, one language each;
* idempotent under the source ``csv:LAYOUT`` (or :attr:`~.base.ImportOptions.source`) by the
  identifier column; a row without one is matched by a hash of its cells, so an edited row
  without an identifier becomes a new record (the limit of content matching), and an identical
  row is a duplicate;
* ``creator``/``subject``/``place`` cells become linked authority records (``agent1``,
  ``subject1``, ``place1``) through :func:`~.authorities.ensure_authorities`; a ``parent`` cell
  links to the record of the same layout with that identifier ("part of"); a closed ``access``
  cell makes the record restricted;
* cells are split at ``|`` (AtoM's convention; ``\\|`` is a literal bar); text values take the
  column's ``[lg-xxx]`` tag, else the row's ``culture`` language, else a guessed language
  (marked ``lang_guessed``; not in an Arxiu export, whose columns say every language).

Skips: ``import.bad_row`` (ragged or unparsable rows, NUL bytes), ``import.encoding``,
``import.cell_too_large``, ``import.duplicate_id``, each with its line (its sheet row for XLSX).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.authorities import (
    AGENTS,
    PLACES,
    SUBJECTS,
    Mention,
    ensure_authorities,
    ensure_authority_schema,
)
from app.core.archive.importers.base import (
    DUPLICATE,
    PROGRESS_EVERY,
    Built,
    ImportOptions,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    Values,
    reserve_keys,
)
from app.core.archive.importers.csv_mapping import (
    MAX_MAPPING_BYTES,
    NO_FIELD,
    TEXT_ROLES,
    ColumnMapping,
    ColumnRule,
    compact,
    fold,
    guess_mapping,
    load_mapping_file,
    save_mapping,
    saved_mapping,
)
from app.core.archive.importers.dates import is_day
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.table_read import Table, TableRow, read_bytes, read_csv
from app.core.archive.importers.xlsx import read_xlsx
from app.core.archive.language import guess_import_lang
from app.core.archive.model import NEUTRAL_LANG, Field, RecordKey, Section
from app.core.errors import ImportFailed
from app.core.json_types import JsonObject
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

KIND = "csv"
SECTION_PREFIX = "csv"
XLSX_SUFFIXES = (".xlsx", ".xlsm")
MIN_GUESS_WORDS = 4
"""Rows whose texts hold fewer words are not guessed (names, short labels: no evidence)."""
CONTINUE_JOIN = ", "
"""Spill-over columns (``Column 4``...) were split from their cell at commas."""

AUTHORITY_OF = {"creator": AGENTS, "subject": SUBJECTS, "place": PLACES}
CLOSED_WORDS = frozenset(
    {
        *("closed", "restricted", "confidential", "embargoed"),
        *("tancat", "tancada", "restringit", "restringida", "reservat", "confidencial"),
        *("cerrado", "cerrada", "restringido", "reservado"),
    }
)
TRUE_WORDS = frozenset({"true", "yes", "1", "restricted", "si", "sí", "cert", "verdadero"})
FALSE_WORDS = frozenset({"false", "no", "0", "open", "fals", "falso"})
_BAR = re.compile(r"(?<!\\)\|")
_DATE_DMY = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$")
_DATE_ISO = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
_CORPORATE = re.compile(
    r"\b(inc|ltd|co|company|corporation|association|union|council|committee|society|"
    r"department|library|university|college|school|church|party|league|federation|records|"
    r"club|institute|foundation|office|board|commission|museum|archives?|ajuntament|"
    r"associació|asociación|sindicat|sindicato|fundació|fundación|universitat|universidad)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PreviewCell:
    """One mapped cell of a preview row: its column, role and values as they would be stored."""

    column: str
    role: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class PreviewRow:
    """A row as it would be imported."""

    line: int
    external_id: str
    restricted: bool | None
    cells: tuple[PreviewCell, ...]


@dataclass(frozen=True)
class TablePreview:
    """What :func:`preview` shows before an import: how the file reads, the mapping, rows."""

    file: str
    encoding: str
    delimiter: str
    header: tuple[str, ...]
    mapping: ColumnMapping
    rows: tuple[PreviewRow, ...]
    total_rows: int
    skipped: tuple[Skip, ...]

    def to_dict(self) -> JsonObject:
        """The preview as JSON-ready data (the mapping in the ``--mapping`` file's form)."""
        return {
            "file": self.file,
            "encoding": self.encoding,
            "delimiter": self.delimiter,
            "header": list(self.header),
            "mapping": self.mapping.to_json(),
            "total_rows": self.total_rows,
            "rows": [
                {
                    "line": r.line,
                    "external_id": r.external_id,
                    "restricted": r.restricted,
                    "cells": [
                        {"column": c.column, "role": c.role, "values": list(c.values)}
                        for c in r.cells
                    ],
                }
                for r in self.rows
            ],
            "skipped": [s.to_dict() for s in self.skipped],
        }


@dataclass
class _Plan:
    """A mapping bound to a section: the field of each column and the resolved keys."""

    mapping: ColumnMapping
    section: str
    fields: dict[int, str] = field(default_factory=dict)
    keys: dict[str, RecordKey] = field(default_factory=dict)
    authorities: dict[str, RecordKey] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    imported: dict[str, RecordKey] = field(default_factory=dict)
    """Keys ``tipo/id`` that earlier table imports stored as identifiers (Arxiu exports)."""


def read_table(path: Path, sheet: str | None = None) -> Table:
    """The table in ``path``: a workbook by its suffix or zip signature, else CSV."""
    path = Path(path).expanduser()
    if path.suffix.lower() in XLSX_SUFFIXES or _is_zip(path):
        return read_xlsx(path, sheet)
    return read_csv(path)


def _is_zip(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def mapping_for(
    archive: Archive | None, header: list[str], options: ImportOptions
) -> ColumnMapping:
    """The mapping to use: saved for this layout (else guessed), with the file's edits."""
    base = (saved_mapping(archive, header) if archive is not None else None) or guess_mapping(
        header
    )
    if options.mapping_file is None:
        return base
    data = read_bytes(Path(options.mapping_file).expanduser(), MAX_MAPPING_BYTES)
    edited = load_mapping_file(data, header)
    rules = tuple(
        replace(new, field=old.field if new.role == old.role else new.field)
        for old, new in zip(base.columns, edited.columns, strict=True)
    )
    return ColumnMapping(rules, base.layout, base.section)


def import_csv(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import a table with its saved or guessed mapping (KIND ``csv`` without options)."""
    return import_table(archive, path, progress, ImportOptions())


def import_table(
    archive: Archive,
    path: Path,
    progress: ProgressFn | None = None,
    options: ImportOptions | None = None,
) -> ImportSummary:
    """Import the table at ``path`` (see the module doc); the mapping is saved for next time.

    Raises:
        ImportFailed: a file that cannot be read as a table (nothing is written then).
    """
    options = options or ImportOptions()
    table = read_table(path, options.sheet)
    summary = ImportSummary(kind=KIND, path=str(path), read_unit="rows")
    summary.skipped.extend(table.skipped)
    summary.error = table.error
    if not table.header:
        raise ImportFailed(
            "import.unreadable",
            Phrase.of("{file} holds no table: it has no header row.", file=table.file),
            hint="The first non-empty row of a table names its columns.",
            details={"path": str(path)},
        )
    mapping = mapping_for(archive, table.header, options)
    rows = _unique_rows(table, mapping, summary)
    plan = _bind(archive, mapping, Path(path).stem)
    source = options.source or f"{KIND}:{mapping.layout}"
    plan.authorities = ensure_authorities(
        archive, _mentions(rows, plan), table.file, summary=summary
    )
    plan.keys = reserve_keys(archive, source, plan.section, [ext for ext, _ in rows])
    plan.origins = _origins(rows, mapping)
    if mapping.role_columns("link"):
        plan.imported = exported_keys(archive)
    run = ImportRun(archive, summary, source)
    for number, (external_id, row) in enumerate(rows, start=1):
        run.add(build_row(row, external_id, plan), row.line, table.file)
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(number, len(rows))
    run.flush()
    save_mapping(archive, plan.mapping)
    if progress is not None:
        progress(len(rows), len(rows))
    return summary


def row_id(row: TableRow, mapping: ColumnMapping) -> str:
    """A row's external id: its identifier cell, else ``row:`` and a hash of its cells."""
    for index in mapping.role_columns("external_id") + mapping.role_columns("identifier"):
        value = row.cells[index].strip()
        if value:
            return value
    digest = hashlib.sha1("\x1f".join(row.cells).encode("utf-8", "surrogatepass")).hexdigest()
    return f"row:{digest[:20]}"


def _unique_rows(
    table: Table, mapping: ColumnMapping, summary: ImportSummary
) -> list[tuple[str, TableRow]]:
    """The rows with their external ids, later duplicates skipped."""
    summary.read = len(table.rows) + len(table.skipped)
    seen: dict[str, int] = {}
    rows = []
    for row in table.rows:
        external_id = row_id(row, mapping)
        first = seen.get(external_id)
        if first is not None:
            reason = "duplicate id {id!r} (first on line {first})"
            skip = Skip.said(row.line, table.file, DUPLICATE, reason, id=external_id, first=first)
            summary.skipped.append(skip)
            continue
        seen[external_id] = row.line
        rows.append((external_id, row))
    summary.skipped.sort(key=lambda skip: skip.line)
    return rows


# -- the section and its fields -----------------------------------------------------------------


def _bind(archive: Archive, mapping: ColumnMapping, stem: str) -> _Plan:
    """Make (or find) the layout's section and fields; the mapping with its tipos."""
    section = mapping.section if mapping.section and archive.has_section(mapping.section) else None
    if section is None:
        section = _new_section_tipo(archive)
    created = _ensure_section(archive, section, mapping, stem)
    if any(rule.role in AUTHORITY_OF for rule in mapping.columns):
        ensure_authority_schema(archive)
    existing = {f.tipo: f for f in archive.fields(section)}
    number = int(section[len(SECTION_PREFIX) :])
    used = {int(t[len(section) :]) for t in existing if t[len(section) :].isdigit()}
    by_group: dict[tuple[str, str], str] = {}
    rules = list(mapping.columns)
    for index, rule in enumerate(rules):
        if rule.role in NO_FIELD:
            continue
        group = (compact(rule.label), rule.kind)
        tipo = by_group.get(group)
        if tipo is None:
            tipo = _field_tipo(rule, existing, used, number)
            by_group[group] = tipo
            if tipo not in existing:
                archive.put_field(_field(rule, tipo, section))
                existing[tipo] = archive.field(tipo)
        rules[index] = replace(rule, field=tipo)
    bound = ColumnMapping(tuple(rules), mapping.layout, section)
    titles = [r.field for r in bound.columns if r.role == "title" and r.field]
    if created and titles:
        archive.put_section(replace(archive.section(section), label_field=titles[0]))
    plan = _Plan(bound, section)
    plan.fields = {i: r.field for i, r in enumerate(bound.columns) if r.field}
    return plan


def _new_section_tipo(archive: Archive) -> str:
    numbers = [
        int(s.tipo[len(SECTION_PREFIX) :])
        for s in archive.sections()
        if s.tipo.startswith(SECTION_PREFIX) and s.tipo[len(SECTION_PREFIX) :].isdigit()
    ]
    return f"{SECTION_PREFIX}{max(numbers, default=0) + 1}"


def _field_tipo(rule: ColumnRule, existing: dict[str, Field], used: set[int], number: int) -> str:
    if rule.field and rule.field in existing and existing[rule.field].kind == rule.kind:
        return rule.field
    position = 1
    while position in used:
        position += 1
    used.add(position)
    return f"{SECTION_PREFIX}{number * 1000 + position}"


def _field(rule: ColumnRule, tipo: str, section: str) -> Field:
    target = AUTHORITY_OF.get(rule.role) or (section if rule.role in ("parent", "link") else None)
    position = int(tipo[len(SECTION_PREFIX) :]) % 1000
    multilingual = rule.role in TEXT_ROLES
    return Field(tipo, section, dict(rule.labels), rule.kind, multilingual, target, position)


def _ensure_section(archive: Archive, section: str, mapping: ColumnMapping, stem: str) -> bool:
    """Create the layout's section unless it exists; whether it was created."""
    if archive.has_section(section):
        return False
    columns = ", ".join(r.column for r in mapping.columns)
    description = f"Imported from a table {stem!r} (columns: {columns})."
    archive.put_section(Section(section, {"lg-nolan": stem}, description[:2000]))
    return True


# -- rows to records ----------------------------------------------------------------------------


def split_cell(value: str, multi: bool = True) -> list[str]:
    """A cell's values: split at ``|`` (not ``\\|``), trimmed, empty ones dropped."""
    parts = _BAR.split(value) if multi else [value]
    return [p.replace("\\|", "|").strip() for p in parts if p.replace("\\|", "|").strip()]


def _cell(row: TableRow, index: int, mapping: ColumnMapping) -> str:
    """The cell with the spill-over (``continue``) cells after it appended."""
    parts = [row.cells[index]]
    for later in range(index + 1, len(mapping.columns)):
        if mapping.columns[later].role != "continue":
            break
        parts.append(row.cells[later])
    return CONTINUE_JOIN.join(p for p in parts if p.strip())


def _mentions(rows: list[tuple[str, TableRow]], plan: _Plan) -> Iterable[Mention]:
    for _, row in rows:
        for index, rule in enumerate(plan.mapping.columns):
            section = AUTHORITY_OF.get(rule.role)
            if section is None:
                continue
            for name in split_cell(_cell(row, index, plan.mapping), rule.multi):
                yield _mention(section, name)


def _mention(section: str, name: str) -> Mention:
    if section == AGENTS:
        return Mention(AGENTS, agent_kind(name), name)
    return Mention(section, "place" if section == PLACES else "subject", name)


def agent_kind(name: str) -> str:
    """``person``, ``family`` or ``corporateBody`` told from the form of a name."""
    folded = fold(name)
    if re.search(r"\b(family|familia|famille)\b", folded):
        return "family"
    if _CORPORATE.search(name) or (re.search(r"\w\.\s+\w", name) and "," not in name):
        return "corporateBody"
    return "person"


def exported_keys(archive: Archive) -> dict[str, RecordKey]:
    """Every ``tipo/id`` identifier imported from a table: the records of earlier imports of
    Arxiu CSV exports, which ``[link]`` cells of another export's rows point at."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT e.external_id, e.section_tipo, e.section_id FROM external_ids e "
            "JOIN records r ON r.section_tipo = e.section_tipo AND r.section_id = e.section_id "
            "WHERE substr(e.source, 1, 4) = ? AND e.external_id LIKE ?",
            ("csv:", "%/%"),
        ).fetchall()
    return {str(row[0]): RecordKey(row[1], row[2]) for row in rows}


def _origins(rows: list[tuple[str, TableRow]], mapping: ColumnMapping) -> dict[str, str]:
    """The ``origin`` cell (an Arxiu export's ``section_id``) → the row's external id."""
    columns = mapping.role_columns("origin")
    if not columns:
        return {}
    return {row.cells[columns[0]].strip(): ext for ext, row in rows if row.cells[columns[0]]}


def _row_lang(row: TableRow, mapping: ColumnMapping) -> tuple[str, bool]:
    """The language of the row's untagged texts and whether it was guessed."""
    for index in mapping.role_columns("culture"):
        if row.cells[index].strip():
            return archive_lang(row.cells[index]), False
    if mapping.role_columns("origin"):
        return NEUTRAL_LANG, False  # an Arxiu export: every language is in its column's tag
    texts = [
        row.cells[i]
        for i, rule in enumerate(mapping.columns)
        if rule.role in TEXT_ROLES and rule.lang is None
    ]
    joined = " ".join(t for t in texts if t)
    if len(joined.split(None, MIN_GUESS_WORDS)) < MIN_GUESS_WORDS:
        return NEUTRAL_LANG, False  # a name or a short label: no evidence to guess from
    guess = guess_import_lang(joined)
    return (guess, True) if guess else (NEUTRAL_LANG, False)


def build_row(row: TableRow, external_id: str, plan: _Plan) -> Built:
    """One row as a record of the plan's section, with its links."""
    mapping = plan.mapping
    lang, guessed = _row_lang(row, mapping)
    values: Values = {}
    links: set[RecordKey] = set()
    unresolved: list[str] = []
    restricted: bool | None = None
    for index, rule in enumerate(mapping.columns):
        if rule.role == "restricted":
            restricted = _flag(row.cells[index], restricted)
        tipo = plan.fields.get(index)
        if tipo is None:
            continue
        for text in split_cell(_cell(row, index, mapping), rule.multi):
            item = _item(rule, text, lang, guessed, plan, unresolved)
            if item is None:
                continue
            target = item.value if isinstance(item.value, RecordKey) else None
            stored: dict[str, Any] = {
                "lang": item.lang,
                "value": target.to_locator() if target is not None else item.value,
            }
            if item.guessed:
                stored["lang_guessed"] = True
            values.setdefault(tipo, []).append(stored)
            if target is not None:
                links.add(target)
            if rule.role == "access" and _closed(text):
                restricted = True
    key = plan.keys[external_id]
    record = NewRecord(plan.section, values, external_id, key.section_id, restricted)
    return Built(record, len(links), tuple(unresolved))


@dataclass(frozen=True)
class _Item:
    """One value a cell gives its field: a text, or the record a relation names."""

    value: str | RecordKey
    lang: str = NEUTRAL_LANG
    guessed: bool = False
    """Whether ``lang`` was guessed from the row's texts."""


def _item(
    rule: ColumnRule, text: str, lang: str, guessed: bool, plan: _Plan, unresolved: list[str]
) -> _Item | None:
    if rule.kind == "relation":
        target = _target(rule, text, plan)
        if target is None:
            unresolved.append(f"{rule.role} {text}")
            return None
        return _Item(target)
    if rule.role in ("date_from", "date_to"):
        return _Item(normal_date(text))
    if rule.role not in TEXT_ROLES:
        return _Item(text)
    if rule.lang:
        return _Item(text, rule.lang)
    return _Item(text, lang, guessed)


def _target(rule: ColumnRule, text: str, plan: _Plan) -> RecordKey | None:
    section = AUTHORITY_OF.get(rule.role)
    if section is not None:
        return plan.authorities.get(_mention(section, text).external_id)
    if rule.role == "link":
        external = plan.origins.get(text)
        return plan.keys.get(external) if external is not None else plan.imported.get(text)
    return plan.keys.get(text)  # parent: an identifier of this layout


def _closed(text: str) -> bool:
    return bool(CLOSED_WORDS & set(re.findall(r"\w+", fold(text))))


def _flag(text: str, current: bool | None) -> bool | None:
    word = fold(text)
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return current


def normal_date(text: str) -> str:
    """An ISO date (``1936``, ``1936-07``, ``1936-07-18``) for ``18/07/1936`` and the like;
    other text is kept as written."""
    value = text.strip()
    if _DATE_ISO.match(value):
        return value
    match = _DATE_DMY.match(value)
    if match:
        day, month, year = (int(g) for g in match.groups())
        if is_day(year, month, day):  # not 31/02/1936
            return f"{year:04d}-{month:02d}-{day:02d}"
    return value


# -- preview ------------------------------------------------------------------------------------


def preview(
    path: Path | str,
    mapping: ColumnMapping | None = None,
    rows: int = 5,
    *,
    sheet: str | None = None,
    archive: Archive | None = None,
    mapping_file: str | None = None,
) -> TablePreview:
    """How ``path`` would import: the mapping (given, else saved in ``archive`` or guessed, with
    ``mapping_file``'s edits) and its first ``rows`` rows as typed values; nothing is written."""
    table = read_table(Path(path), sheet)
    if mapping is None:
        options = ImportOptions(sheet=sheet, mapping_file=mapping_file)
        mapping = mapping_for(archive, table.header, options)
    shown = tuple(_preview_row(row, mapping) for row in table.rows[:rows])
    return TablePreview(
        table.file,
        table.encoding,
        table.delimiter,
        tuple(table.header),
        mapping,
        shown,
        len(table.rows),
        tuple(table.skipped),
    )


def _preview_row(row: TableRow, mapping: ColumnMapping) -> PreviewRow:
    cells = []
    restricted: bool | None = None
    for index, rule in enumerate(mapping.columns):
        if rule.role == "restricted":
            restricted = _flag(row.cells[index], restricted)
        if rule.role in NO_FIELD:
            continue
        values = split_cell(_cell(row, index, mapping), rule.multi)
        if rule.role in ("date_from", "date_to"):
            values = [normal_date(v) for v in values]
        if rule.role == "access" and any(_closed(v) for v in values):
            restricted = True
        cells.append(PreviewCell(rule.column, rule.role, tuple(values)))
    return PreviewRow(row.line, row_id(row, mapping), restricted, tuple(cells))


def preview_lines(shown: TablePreview) -> list[str]:
    """A preview as lines for a person: how the file reads, each column's role, the rows."""
    separator = {"\t": "tab", "": "(workbook)"}.get(shown.delimiter, shown.delimiter)
    lines = [
        f"{shown.file}: {shown.total_rows:,} rows, {shown.encoding}, separator {separator}",
        "columns:",
    ]
    for rule in shown.mapping.columns:
        lang = f" [{rule.lang}]" if rule.lang else ""
        lines.append(f"  {rule.column!r:32} -> {rule.role}{lang}")
    for row in shown.rows:
        lines.append(f"line {row.line} ({row.external_id}):")
        lines += [f"  {c.role:12} {' | '.join(c.values)[:100]}" for c in row.cells if c.values]
    lines += [f"skipped {s.file}:{s.line} [{s.code}] {s.reason}" for s in shown.skipped[:10]]
    lines.append('edit: arxiu import csv PATH --mapping FILE (JSON {"columns": [...]})')
    return lines
