"""CSV export: one row per record of a section (or of a record's subtree), one column per field.

The file is UTF-8 with a byte-order mark (Excel reads it as UTF-8), comma-separated, quoted as
RFC 4180, CRLF line ends. With restricted records included, the first line is the comment
``# `` + :data:`~.base.RESTRICTED_NOTICE` (the CSV importer skips such lines). Columns:

=========================  ========================================================================
column                     values
=========================  ========================================================================
``section_id``             the record's key ``tipo/id`` (the importer's ``origin`` role)
``external_id``            the id it was imported under (its first), else its key
``restricted``             ``true`` / ``false`` / empty (the section decides)
``Label``                  a field's language-neutral values (label in :attr:`ExportRequest.lang`;
                           ``Label (tipo)`` when two fields share a label)
``Label [lg-cat]``         the same field's values in one language, a column per language present
``Label [agent1]``         a relation to ``agent1``/``place1``/``subject1``: the targets' names
``Label [link]``           any other relation: the targets' keys ``tipo/id``
=========================  ========================================================================

Several values of a cell are joined with ``|`` (a ``|`` inside a value is written ``\\|``);
numbers as written, dates as text, other structured values (``geo``) as JSON. A cell that starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's advice
against formula injection; the importer removes it). A subtree is the record and the records of
its section that point at it, recursively ("part of").
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive.access_points import AUTHORITY_SECTIONS
from app.core.archive.exporters.base import (
    RESTRICTED_NOTICE,
    ExportRequest,
    ExportSummary,
    selected,
    writable,
)
from app.core.archive.model import NEUTRAL_LANG, Field, Record, RecordKey

if TYPE_CHECKING:
    from app.core.archive.store import Archive

FORMAT = "csv"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
BAR = "|"


def escape_cell(value: str) -> str:
    """``value`` with a leading ``'`` when a spreadsheet would read it as a formula."""
    if value[:1] in FORMULA_START or (value[:1] == "'" and value[1:2] in (*FORMULA_START, "'")):
        return "'" + value
    return value


def value_text(value: Any) -> str:
    """One stored value as cell text (``|`` escaped)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text.replace(BAR, "\\" + BAR)


def children_of(archive: Archive, key: RecordKey) -> list[RecordKey]:
    """The records of ``key``'s section that point at it ("part of"), in id order."""
    return sorted(
        {
            link.source
            for link in archive.links_to(key)
            if link.source.section_tipo == key.section_tipo
        }
    )


def external_ids(archive: Archive, section: str) -> dict[int, str]:
    """Each record's first external id (by source, then id) in ``section``."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT section_id, source, external_id FROM external_ids WHERE section_tipo = ?",
            (section,),
        ).fetchall()
    # last wins: the first by source, then id, in code point order on both engines
    ordered = sorted(((str(r[1]), str(r[2]), int(r[0])) for r in rows), reverse=True)
    return {sid: ext for _, ext, sid in ordered}


class _Columns:
    """The export's columns: each a header and the function that fills it from a record."""

    def __init__(self, archive: Archive, fields: list[Field], records: list[Record], lang: str):
        self.archive = archive
        self.lang = lang
        self.columns: list[tuple[str, Field, str | None]] = []
        self._labels: dict[RecordKey, str] = {}
        seen = Counter(f.label(lang) for f in fields)
        for item in fields:
            label = item.label(lang)
            if seen[label] > 1:
                label = f"{label} ({item.tipo})"  # two fields of one name stay two columns
            if item.kind == "relation":
                tag = item.target_section if item.target_section in AUTHORITY_SECTIONS else "link"
                self.columns.append((f"{label} [{tag}]", item, None))
                continue
            for value_lang in _langs(records, item.tipo):
                header = label if value_lang == NEUTRAL_LANG else f"{label} [{value_lang}]"
                self.columns.append((header, item, value_lang))

    def header(self) -> list[str]:
        """The field columns' headers."""
        return [header for header, _, _ in self.columns]

    def cells(self, record: Record) -> list[str]:
        """The field columns' cells for ``record``."""
        out = []
        for _, item, value_lang in self.columns:
            items = record.items(item.tipo)
            if item.kind == "relation":
                texts = [self._target(i.get("value"), item) for i in items]
            else:
                texts = [value_text(i.get("value")) for i in items if i.get("lang") == value_lang]
            out.append(escape_cell(BAR.join(t for t in texts if t)))
        return out

    def _target(self, value: Any, item: Field) -> str:
        if not isinstance(value, dict) or "section_tipo" not in value:
            return ""
        key = RecordKey(str(value["section_tipo"]), int(value["section_id"]))
        if item.target_section not in AUTHORITY_SECTIONS:
            return str(key)
        if key not in self._labels:
            self._labels[key] = self.archive.record_label(key, self.lang)
        return value_text(self._labels[key])


def _langs(records: Iterable[Record], tipo: str) -> list[str]:
    found = {str(i.get("lang")) for r in records for i in r.values.get(tipo, [])}
    return sorted(found, key=lambda lang: (lang != NEUTRAL_LANG, lang))


def export(archive: Archive, request: ExportRequest) -> ExportSummary:
    """Write the records ``request`` selects as CSV (see the module doc)."""
    out = writable(Path(request.out))
    summary = ExportSummary(FORMAT, str(out))
    records = list(selected(archive, request, summary, lambda k: children_of(archive, k)))
    ids = external_ids(archive, request.section)
    columns = _Columns(archive, archive.fields(request.section), records, request.lang)
    with out.open("w", encoding="utf-8-sig", newline="") as handle:
        if summary.restricted_included:
            handle.write(f"# {RESTRICTED_NOTICE}\r\n")
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(["section_id", "external_id", "restricted", *columns.header()])
        for record in records:
            flag = "" if record.restricted is None else str(record.restricted).lower()
            external = ids.get(record.section_id, str(record.key))
            writer.writerow([str(record.key), escape_cell(external), flag, *columns.cells(record)])
    return summary
