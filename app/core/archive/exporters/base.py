"""What every exporter shares: the request, the summary, and choosing the records to write."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.model import Record, RecordKey
from app.core.errors import ArxiuError
from app.core.json_types import JsonObject
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

RESTRICTED_NOTICE = (
    "This export includes restricted records, which must not leave the institution "
    "without permission."
)
"""Said on the first line or element of an export made with restricted records included."""


@dataclass(frozen=True)
class ExportRequest:
    """What to export: a section, or one record and everything under it, to ``out``."""

    section: str
    out: Path
    record: RecordKey | None = None
    include_restricted: bool = False
    lang: str = "lg-eng"
    """The language of headings and labels the format itself needs (CSV headers)."""


@dataclass
class ExportSummary:
    """What one export wrote."""

    format: str
    path: str
    records: int = 0
    restricted_left_out: int = 0
    restricted_included: int = 0
    seconds: float = 0.0
    notes: list[Phrase] = field(default_factory=list)
    """What else a person should know of the export (the notice of restricted records, where
    several finding aids went), as phrases the CLI says in its language; English in JSON."""

    def admit(self, restricted: bool, include_restricted: bool) -> bool:
        """Count one record an export meets; ``False`` when it is left out (with its subtree)."""
        if restricted:
            if not include_restricted:
                self.restricted_left_out += 1
                return False
            self.restricted_included += 1
        self.records += 1
        return True

    def to_dict(self) -> JsonObject:
        """The summary as JSON-ready data."""
        return {
            "format": self.format,
            "path": self.path,
            "records": self.records,
            "restricted_left_out": self.restricted_left_out,
            "restricted_included": self.restricted_included,
            "notes": [note.english() for note in self.notes],
            "seconds": round(self.seconds, 3),
        }


Exporter = Callable[["Archive", ExportRequest], ExportSummary]
ChildrenFn = Callable[[RecordKey], list[RecordKey]]
"""``children(key)``: the records directly under ``key``, in order (a hierarchy's exporter)."""


def require_section(archive: Archive, tipo: str) -> None:
    """Raise ``export.section_unknown`` unless the archive has section ``tipo``."""
    if not archive.has_section(tipo):
        raise ArxiuError(
            "export.section_unknown",
            Phrase.of("The archive has no section {tipo!r}.", tipo=tipo),
            hint="`arxiu archive info` lists the sections.",
            category="input",
        )


def require_record(archive: Archive, key: RecordKey) -> Record:
    """The record ``key``, or ``export.record_unknown``."""
    record = archive.find_record(key)
    if record is None:
        raise ArxiuError(
            "export.record_unknown",
            Phrase.of("There is no record {key}.", key=str(key)),
            category="input",
        )
    return record


def selected(
    archive: Archive,
    request: ExportRequest,
    summary: ExportSummary,
    children: ChildrenFn | None = None,
) -> Iterator[Record]:
    """The records ``request`` selects, restricted ones left out unless asked for (counted).

    A section: every record of it, in id order. A record: that record, then (with
    ``children``) everything under it, depth first in order. A restricted record that is left
    out takes its subtree with it.
    """
    require_section(archive, request.section)
    if request.record is None:
        roots: Iterator[Record] = archive.iter_records(request.section)
    else:
        roots = iter([require_record(archive, request.record)])
    for record in roots:
        yield from _walk(archive, record, request, summary, children)


def _walk(
    archive: Archive,
    record: Record,
    request: ExportRequest,
    summary: ExportSummary,
    children: ChildrenFn | None,
) -> Iterator[Record]:
    stack = [record]
    while stack:
        current = stack.pop()
        if not summary.admit(archive.is_restricted(current.key), request.include_restricted):
            continue
        yield current
        if children is not None and request.record is not None:
            below = [archive.find_record(k) for k in children(current.key)]
            stack.extend(r for r in reversed(below) if r is not None)


def one_file_each(out: Path, count: int) -> None:
    """Refuse (``export.one_file_named``) to write ``count`` documents, one file each, when
    ``out`` names a single XML file rather than a folder: before anything is written, rather
    than make a folder called ``….xml``."""
    if count > 1 and out.suffix.lower() == ".xml" and not out.expanduser().is_dir():
        raise ArxiuError(
            "export.one_file_named",
            Phrase.of(
                "This export makes {n:,} documents, one file each, and {out} names one file.",
                n=count,
                out=str(out),
            ),
            hint=Phrase.of(
                "Give a folder to write them into (made if it is not there), or --record for "
                "one record's document."
            ),
            category="input",
        )


def writable(out: Path) -> Path:
    """``out`` with its folder created, or ``export.unwritable``."""
    out = Path(out).expanduser()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unwritable(out, exc) from exc
    return out


def unwritable(out: Path, exc: OSError) -> ArxiuError:
    """The ``export.unwritable`` error for ``out``, which ``exc`` kept from being written."""
    return ArxiuError(
        "export.unwritable",
        Phrase.of("Cannot write to {out}: {why}.", out=str(out), why=exc.strerror or str(exc)),
        category="environment",
    )
