"""What every importer shares: the summary, batched idempotent writes, the schema, the row loop.

An importer turns each row of a dataset into a :class:`Built` record; :func:`import_rows`
reads the file, skips (and reports) the bad lines and duplicates, and hands the records to an
:class:`ImportRun`, which writes them in batches through
:meth:`~app.core.archive.store.Archive.upsert_records` under one ``source`` so that importing
the same file again updates records instead of creating them twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from app.core.archive import records
from app.core.archive.bulk import NewRecord, UpsertResult
from app.core.archive.importers.reading import BadRow, JsonlReader, count_lines
from app.core.archive.model import NEUTRAL_LANG, Field, RecordKey, Section
from app.core.errors import ArxiuError, ImportFailed
from app.core.json_types import JsonObject
from app.core.phrases import Phrase, PhraseParam

if TYPE_CHECKING:
    from app.core.archive.store import Archive

ProgressFn = Callable[[int, int], None]
"""``progress(done, total)``: lines handled so far and lines in the file(s)."""


@runtime_checkable
class FileProgress(Protocol):
    """A progress callback that also wants the name of each file as its reading starts (the
    app's progress dialog shows it); importers of many files tell it through
    :func:`report_file`."""

    def __call__(self, done: int, total: int) -> None: ...

    def reading(self, name: str) -> None:
        """``name`` (a file of the import) is being read now."""


def report_file(progress: ProgressFn | None, name: str) -> None:
    """Tell ``progress`` that ``name`` is being read, when it is a :class:`FileProgress`."""
    if isinstance(progress, FileProgress):
        progress.reading(name)


BATCH_SIZE = 500
"""Records a bulk upsert writes in one transaction, by default: the size of the importers whose
batches other writes come between (an EAD file's authority stubs, a batch's media), kept so
that they write the same rows in the same order (chunk ids included) as before."""
ROWS_BATCH_SIZE = 5000
"""The batch of a JSON Lines import (:func:`import_file`), where nothing is written between
batches. Measured on the whole Tate set (72,736 records, ``import_dataset``): 11.0-11.5 s CPU
at 500, 10.1-10.4 s at 2,000, 9.7-9.8 s at 5,000 (fewer statements, commits and FTS5 segments
to merge); the same records, links and chunks."""
PROGRESS_EVERY = 500
"""Lines between two progress reports of a JSON Lines import."""
MAX_UNRESOLVED_SHOWN = 10


BAD_LINE = "import.bad_line"
"""A line that is not a JSON object (bad JSON, not UTF-8, nested too deeply, too long...)."""
BAD_ROW = "import.bad_row"
"""A JSON object lacking a required key or holding a value of the wrong type."""
DUPLICATE = "import.duplicate_id"
ROW_FAILED = "import.row_failed"
"""A record the archive could not store (its batch's other records are kept)."""


@dataclass(frozen=True)
class Skip:
    """A line that was not imported, why, and the code of the reason.

    ``reason`` is English. ``phrase``, when the importer made the skip with :meth:`said`, is the
    same reason as a template and its parameters, which the app and the CLI say in their
    language (:func:`app.core.import_report.skip_reason`).
    """

    line: int
    reason: str
    file: str = ""
    code: str = BAD_LINE
    phrase: Phrase | None = None

    @classmethod
    def said(cls, line: int, file: str, code: str, template: str, /, **params: PhraseParam) -> Skip:
        """A skip of ``file``'s ``line`` whose reason is ``template`` filled with ``params``."""
        phrase = Phrase.of(template, **params)
        return cls(line, phrase.english(), file, code, phrase)

    @classmethod
    def of_error(cls, line: int, file: str, error: ArxiuError) -> Skip:
        """A skip of ``file``'s ``line`` for a coded error: its code, its message as the reason
        (its phrase too, where it was raised with one, so the reason is said in the person's
        language)."""
        words = error.message_words
        phrase = words if isinstance(words, Phrase) else None
        return cls(line, error.message, file, error.code, phrase)

    def to_dict(self) -> JsonObject:
        """The skip as JSON: line, reason, file and code, and the reason's template and
        parameters when it has them (so that a client can translate it)."""
        out: JsonObject = {
            "line": self.line,
            "reason": self.reason,
            "file": self.file,
            "code": self.code,
        }
        if self.phrase is not None:
            out["template"] = self.phrase.template
            out["params"] = self.phrase.params_json()
        return out


ReadUnit = Literal["lines", "rows", "records", "files"]
"""What an import counts as read (:attr:`ImportSummary.read_unit`)."""


@dataclass
class ImportSummary:
    """What one import did: records, links, media, skipped lines and a possible stream error."""

    kind: str
    path: str
    read: int = 0
    read_unit: ReadUnit = "lines"
    """What ``read`` counts: the lines of a JSONL file, a table's rows, the records of an XML
    or JSON file or of a harvest, or a folder's files."""
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    named: int = 0
    """Of the records, those written for the persons, places and subjects the imported
    records name (one authority record each: :mod:`.authorities`)."""
    deleted: int = 0
    """Records removed because their source withdrew them (OAI-PMH deleted records)."""
    links: int = 0
    unresolved: int = 0
    unresolved_targets: Counter[str] = field(default_factory=Counter)
    media: int = 0
    """Media files copied into the archive."""
    media_missing: int = 0
    """Media files the source names but that were not found."""
    media_linked: int = 0
    """Digital objects recorded by their address only (EAD ``dao``: nothing is downloaded)."""
    sections: Counter[str] = field(default_factory=Counter)
    skipped: list[Skip] = field(default_factory=list)
    error: ImportFailed | None = None
    seconds: float = 0.0

    @property
    def records(self) -> int:
        """Records written or confirmed by this import."""
        return self.created + self.updated + self.unchanged

    def to_dict(self) -> JsonObject:
        """The summary as JSON-ready data."""
        return {
            "kind": self.kind,
            "path": self.path,
            "read": self.read,
            "read_unit": self.read_unit,
            "records": self.records,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "named": self.named,
            "deleted": self.deleted,
            "sections": dict(sorted(self.sections.items())),
            "links": self.links,
            "unresolved": self.unresolved,
            "unresolved_targets": dict(self.unresolved_targets.most_common(MAX_UNRESOLVED_SHOWN)),
            "media": self.media,
            "media_missing": self.media_missing,
            "media_linked": self.media_linked,
            "skipped": [s.to_dict() for s in self.skipped],
            "error": self.error.to_dict() if self.error else None,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class ImportOptions:
    """Options of an import that reads from a service rather than a path (``arxiu import oai``),
    or of a table import (``arxiu import csv``)."""

    set_spec: str | None = None
    """OAI-PMH: harvest only this set."""
    from_date: str | None = None
    """OAI-PMH: only records changed since this date (default: since the last harvest)."""
    metadata_prefix: str | None = None
    """OAI-PMH: the metadata format asked for (default ``oai_dc``)."""
    mapping_file: str | None = None
    """csv: a JSON column mapping to apply (see :mod:`.csv_mapping`)."""
    sheet: str | None = None
    """csv: the sheet of an XLSX workbook (default: the first)."""
    source: str | None = None
    """csv: the source records are matched under (default ``csv:LAYOUT``)."""


@dataclass(frozen=True)
class Built:
    """A record made from one row, with its resolved link count and unresolved targets."""

    record: NewRecord
    links: int = 0
    unresolved: tuple[str, ...] = ()


AfterFlush = Callable[[list[tuple[NewRecord, RecordKey]]], None]
BuildFn = Callable[[JsonObject], Built]
"""``build(row)``: the record made from one row (raises ``BadRow`` for an unusable one)."""


class ImportRun:
    """Buffers built records and writes them ``batch_size`` at a time, counting what happened."""

    def __init__(
        self,
        archive: Archive,
        summary: ImportSummary,
        source: str,
        *,
        batch_size: int = BATCH_SIZE,
        after_flush: AfterFlush | None = None,
    ) -> None:
        self.archive = archive
        self.summary = summary
        self.source = source
        self.batch_size = batch_size
        self.after_flush = after_flush
        self._batch: list[NewRecord] = []
        self._origins: list[tuple[int, str, Built]] = []
        self._pending: (
            tuple[list[NewRecord], list[tuple[int, str, Built]], Future[UpsertResult]] | None
        ) = None

    def add(self, built: Built, line: int = 0, file: str = "") -> None:
        """Queue one record made from ``file``'s ``line`` (written when the batch is full)."""
        self._batch.append(built.record)
        self._origins.append((line, file, built))
        self.summary.links += built.links
        if built.unresolved:  # most rows have none: no Counter update for them
            self.summary.unresolved += len(built.unresolved)
            self.summary.unresolved_targets.update(built.unresolved)
        if len(self._batch) >= self.batch_size:
            self.flush(wait=False)

    def flush(self, *, wait: bool = True) -> None:
        """Write the queued records in one transaction.

        With ``wait=False`` the batch is committed by the writer thread while the caller builds
        the next one (at most one batch in flight).
        """
        self._drain()
        if self._batch:
            batch, self._batch = self._batch, []
            origins, self._origins = self._origins, []
            future = self.archive.submit_upsert(batch, source=self.source, per_row=True)
            self._pending = (batch, origins, future)
        if wait:
            self._drain()

    def _drain(self) -> None:
        if self._pending is None:
            return
        batch, origins, future = self._pending
        self._pending = None
        result = future.result()
        if result.failed:
            batch = self._left_out(batch, origins, result.failed)
        self.summary.created += result.created
        self.summary.updated += result.updated
        self.summary.unchanged += result.unchanged
        self.summary.sections.update(r.section_tipo for r in batch)
        if self.after_flush is not None:
            self.after_flush(list(zip(batch, result.keys, strict=True)))

    def _left_out(
        self,
        batch: list[NewRecord],
        origins: list[tuple[int, str, Built]],
        failed: tuple[tuple[int, str], ...],
    ) -> list[NewRecord]:
        """Report the records the archive could not store; the batch's stored records."""
        reasons = dict(failed)
        for position in sorted(reasons):
            line, file, built = origins[position]
            self.summary.skipped.append(
                Skip.said(line, file, ROW_FAILED, "not stored: {why}", why=reasons[position])
            )
            self.summary.links -= built.links
            self.summary.unresolved -= len(built.unresolved)
            self.summary.unresolved_targets.subtract(built.unresolved)
        targets = self.summary.unresolved_targets
        for target in [t for t, n in targets.items() if n <= 0]:
            del targets[target]
        files: dict[str, int] = {}
        for skip in self.summary.skipped:
            files.setdefault(skip.file, len(files))
        self.summary.skipped.sort(key=lambda skip: (files[skip.file], skip.line))
        return [record for i, record in enumerate(batch) if i not in reasons]


def import_rows(
    run: ImportRun,
    path: Path,
    build: BuildFn,
    *,
    progress: ProgressFn | None = None,
    offset: int = 0,
    total: int | None = None,
) -> None:
    """Read ``path`` and import every usable row through ``build`` (which may raise BadRow).

    ``offset``/``total`` place this file's progress inside a larger import (several files).
    """
    total = total if total is not None else count_lines(path)
    reader = JsonlReader(path)
    seen: dict[str, int] = {}
    summary = run.summary
    for number, row in reader:
        summary.read += 1
        built = _build(row, build, number, path.name)
        if isinstance(built, Skip):
            summary.skipped.append(built)
        elif (first := seen.get(built.record.external_id or "")) is not None:
            summary.skipped.append(
                Skip.said(
                    number,
                    path.name,
                    DUPLICATE,
                    "duplicate id {id!r} (first on line {first})",
                    id=built.record.external_id or "",
                    first=first,
                )
            )
        else:
            seen[built.record.external_id or ""] = number
            run.add(built, number, path.name)
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(offset + number, max(total, offset + number))
    run.flush()
    if reader.error is not None and summary.error is None:
        summary.error = reader.error
    if progress is not None:
        progress(offset + reader.last_line, max(total, offset + reader.last_line))


def import_file(
    archive: Archive,
    summary: ImportSummary,
    file: Path,
    source: str,
    build: BuildFn,
    *,
    progress: ProgressFn | None = None,
    after_flush: AfterFlush | None = None,
    offset: int = 0,
    total: int | None = None,
    batch_size: int = ROWS_BATCH_SIZE,
) -> ImportSummary:
    """Import every usable row of ``file`` under ``source``, counting into ``summary``,
    ``batch_size`` records a transaction (an ``after_flush`` that writes gives
    :data:`BATCH_SIZE`, so that its writes come where they came before).

    Records only: the lexical index is brought current by the caller's layer
    (:func:`app.core.importing.import_dataset`), since the archive never imports the index.

    Returns:
        ``summary``, for the importer to return.
    """
    run = ImportRun(archive, summary, source, batch_size=batch_size, after_flush=after_flush)
    import_rows(run, file, build, progress=progress, offset=offset, total=total)
    return summary


def _build(row: JsonObject | Phrase, build: BuildFn, line: int, file: str) -> Built | Skip:
    """The built record, or the skip of ``file``'s ``line`` when it cannot become one (its
    reason a phrase, said in the app's and the CLI's language, where the reader or the
    :class:`BadRow` gave one)."""
    if isinstance(row, Phrase):
        return Skip(line, row.english(), file, BAD_LINE, row)
    try:
        return build(row)
    except BadRow as exc:
        return Skip(line, str(exc), file, BAD_ROW, exc.phrase)
    except RecursionError:
        return Skip.said(line, file, BAD_LINE, "nested too deeply")


# -- schema ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schema:
    """The sections and fields one importer needs."""

    sections: tuple[Section, ...]
    fields: tuple[Field, ...]


def labels(en: str, ca: str, es: str) -> dict[str, str]:
    """Labels in English, Catalan and Spanish."""
    return {"lg-eng": en, "lg-cat": ca, "lg-spa": es}


def section_schema(
    section: str,
    names: tuple[str, str, str],
    description: str,
    *,
    label_field: str,
    fields: tuple[Field, ...],
) -> Schema:
    """The schema of an importer that fills one section: ``section`` labelled ``names``
    (en, ca, es), its records named by ``label_field``, with ``fields``."""
    return Schema(
        sections=(Section(section, labels(*names), description, label_field=label_field),),
        fields=fields,
    )


def schema_field(
    section: str, tipo: str, names: tuple[str, str, str], kind: str = "text", **extra: Any
) -> Field:
    """A field of ``section`` labelled ``names`` (en, ca, es), placed by its tipo's number.

    Importers bind their section: ``_f = functools.partial(schema_field, SECTION)``.
    """
    position = int(tipo[len(tipo.rstrip("0123456789")) :])
    return Field(tipo, section, labels(*names), kind, position=position, **extra)


def ensure_schema(archive: Archive, schema: Schema) -> None:
    """Create the sections and fields that are missing; existing ones are left as they are.

    A person may have changed a section's flags (``restricted``, ``writable``) since the last
    import; a re-import must not undo that.
    """
    for section in schema.sections:
        if not archive.has_section(section.tipo):
            archive.put_section(section)
    known = {f.tipo for s in schema.sections for f in archive.fields(s.tipo)}
    for item in schema.fields:
        if item.tipo not in known:
            archive.put_field(item)


def external_keys(archive: Archive, source: str) -> dict[str, RecordKey]:
    """Every ``external_id → record key`` imported under ``source`` (records that still exist)."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT e.external_id, e.section_tipo, e.section_id FROM external_ids e "
            "JOIN records r ON r.section_tipo = e.section_tipo AND r.section_id = e.section_id "
            "WHERE e.source = ?",
            (source,),
        ).fetchall()
    return {row[0]: RecordKey(row[1], row[2]) for row in rows}


def reserve_keys(
    archive: Archive, source: str, section_tipo: str, ids: Iterable[str]
) -> dict[str, RecordKey]:
    """Keys for ``ids``: the existing record of each, else a new id after the section's last.

    Importers whose rows link to rows later in the same file reserve every key first, so that
    the links can be written with the records in one pass.
    """
    keys = external_keys(archive, source)
    with archive.db.reading() as conn:
        next_id = records.next_id(conn, section_tipo)  # above deleted ids too: never reused
    for external_id in ids:
        if external_id not in keys:
            keys[external_id] = RecordKey(section_tipo, next_id)
            next_id += 1
    return keys


# -- values --------------------------------------------------------------------------------------


Values = dict[str, list[dict[str, Any]]]


def put(values: Values, field_tipo: str, value: Any, lang: str = NEUTRAL_LANG) -> None:
    """Add one item to ``values[field_tipo]`` unless ``value`` is ``None``."""
    if value is not None:
        values.setdefault(field_tipo, []).append({"lang": lang, "value": value})


def put_many(
    values: Values, field_tipo: str, items: Iterable[Any], lang: str = NEUTRAL_LANG
) -> None:
    """Add several items (``None`` ones are left out)."""
    new = [{"lang": lang, "value": value} for value in items if value is not None]
    if new:
        values.setdefault(field_tipo, []).extend(new)


def geo(lat: float | None, lon: float | None) -> dict[str, float] | None:
    """A ``geo`` field value ``{"lat", "lon"}``, or ``None`` when either is missing."""
    if lat is None or lon is None:
        return None
    return {"lat": lat, "lon": lon}
