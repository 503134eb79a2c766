"""The archive store: sections, fields, records, links, media, audit and conversations.

An archive is a folder holding ``archive.db`` and ``media/``. Open one with :func:`open_archive`.
Every change to a record increments its ``version`` and notifies the change listeners (the
indexer listens) after the transaction commits.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.archive.bulk import BulkWriter
from app.core.archive.conversations import ConversationStore
from app.core.archive.database import Database
from app.core.archive.engine import Connection, Engine, Row
from app.core.archive.hierarchy_shape import TABLE_LAYOUTS, layout_roles, lead_with_code, shape_of
from app.core.archive.migrations import MIGRATIONS
from app.core.archive.model import AuditRow, Field, Link, Record, RecordKey, Section
from app.core.archive.records import RecordWriter, row_to_record
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

DB_NAME = "archive.db"
MEDIA_DIR = "media"

ChangeListener = Callable[[list[RecordKey]], None]


def now() -> str:
    """The current UTC time as ISO 8601 (seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class Archive(RecordWriter, BulkWriter, ConversationStore):
    """One open archive folder."""

    def __init__(self, folder: Path, db: Engine, *, location: str | None = None) -> None:
        """``folder``: the archive's folder (for a shared archive, the workstation's cache of
        it); ``location``: what opens it again, the folder or the ``postgresql://`` URL."""
        self.folder = folder
        self.db = db
        self.location = location or str(folder)
        self._listeners: list[ChangeListener] = []
        self._code_fields: dict[str, str | None] = {}
        """Per section, the reference-code field its labels lead with (see :meth:`label_of`)."""

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def media_dir(self) -> Path:
        """Where media files live."""
        return self.folder / MEDIA_DIR

    @property
    def sqlite(self) -> Database:
        """The SQLite engine of a folder archive, for what only SQLite holds (the local index's
        tables, its pragmas); a shared archive's index lives in its server
        (:mod:`app.core.index.postgres`).

        Raises:
            ArchiveError: ``archive.shared_not_local`` for a shared archive.
        """
        if isinstance(self.db, Database):
            return self.db
        raise ArchiveError(
            "archive.shared_not_local",
            "This is a shared archive on PostgreSQL: it has no local index file.",
            hint="Its index is searched in the server; use arxiu index --worker to fill it.",
            category="input",
        )

    @property
    def shared(self) -> bool:
        """Whether the archive is a shared one (PostgreSQL), not a folder."""
        return self.db.dialect != "sqlite"

    def database_role(self) -> str | None:
        """The server role a shared archive's connections log in as (the archivist, for the
        audit log), or ``None`` for a folder archive."""
        return self.db.role

    def media_path(self, path: str) -> Path:
        """The local file of media ``path`` (a media row's ``path`` or ``thumbnail``); a shared
        archive's file is fetched from the server into the workstation's cache first."""
        local = self.media_dir / path
        if not local.exists():
            self.db.fetch_file(path, local)
        return local

    def close(self) -> None:
        """Close the database connections."""
        self.db.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_listener(self, listener: ChangeListener) -> None:
        """Call ``listener(keys)`` after each committed change to records."""
        self._listeners.append(listener)

    def remove_listener(self, listener: ChangeListener) -> None:
        """Stop notifying ``listener``."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def notify_changed(self, keys: list[RecordKey]) -> None:
        """Tell the listeners that ``keys`` changed (for writes made outside this class)."""
        self._notify(keys)

    def _notify(self, keys: list[RecordKey]) -> None:
        for listener in list(self._listeners):
            listener(keys)

    # -- meta --------------------------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        """An archive-level setting (name, language, demo version...)."""
        with self.db.reading() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else default

    def set_meta(self, key: str, value: str) -> None:
        """Store an archive-level setting."""
        self.db.write(
            lambda c: c.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )

    # -- structure ---------------------------------------------------------------------------
    def put_section(self, section: Section) -> None:
        """Create or replace a section definition."""
        self.db.write(lambda c: _put_section(c, section))
        self._code_fields.clear()

    def put_field(self, field: Field) -> None:
        """Create or replace a field definition."""
        self.db.write(lambda c: _put_field(c, field))
        self._code_fields.clear()

    def sections(self) -> list[Section]:
        """Every section, ordered by tipo."""
        with self.db.reading() as conn:
            rows = conn.execute("SELECT * FROM sections ORDER BY tipo").fetchall()
        return [_row_to_section(r) for r in rows]

    def section(self, tipo: str) -> Section:
        """One section (``archive.section_unknown`` when missing)."""
        with self.db.reading() as conn:
            row = conn.execute("SELECT * FROM sections WHERE tipo = ?", (tipo,)).fetchone()
        if row is None:
            raise ArchiveError(
                "archive.section_unknown",
                Phrase.of("There is no section {tipo!r} in this archive.", tipo=tipo),
                hint="List the sections to find the right tipo.",
                category="input",
            )
        return _row_to_section(row)

    def has_section(self, tipo: str) -> bool:
        """Whether the section exists."""
        with self.db.reading() as conn:
            return (
                conn.execute("SELECT 1 FROM sections WHERE tipo = ?", (tipo,)).fetchone()
                is not None
            )

    def fields(self, section_tipo: str | None = None) -> list[Field]:
        """The fields of one section (or of all) in display order."""
        with self.db.reading() as conn:
            if section_tipo is None:
                rows = conn.execute(
                    "SELECT * FROM fields ORDER BY section_tipo, position"
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM fields WHERE section_tipo = ? ORDER BY position", (section_tipo,)
                ).fetchall()
        return [_row_to_field(r) for r in rows]

    def field(self, tipo: str) -> Field:
        """One field (``archive.field_unknown`` when missing)."""
        with self.db.reading() as conn:
            row = conn.execute("SELECT * FROM fields WHERE tipo = ?", (tipo,)).fetchone()
        if row is None:
            raise ArchiveError(
                "archive.field_unknown",
                Phrase.of("There is no field {tipo!r} in this archive.", tipo=tipo),
                hint="Describe the section to see its fields.",
                category="input",
            )
        return _row_to_field(row)

    # -- records (reads) ---------------------------------------------------------------------
    def get_record(self, key: RecordKey) -> Record:
        """One record (``archive.record_not_found`` when missing)."""
        record = self.find_record(key)
        if record is None:
            raise ArchiveError(
                "archive.record_not_found",
                Phrase.of("Record {key} does not exist.", key=str(key)),
                category="input",
            )
        return record

    def find_record(self, key: RecordKey) -> Record | None:
        """One record, or ``None``."""
        with self.db.reading() as conn:
            row = conn.execute(
                "SELECT * FROM records WHERE section_tipo = ? AND section_id = ?",
                (key.section_tipo, key.section_id),
            ).fetchone()
        return row_to_record(row) if row else None

    def count_records(self, section_tipo: str | None = None) -> int:
        """How many records a section (or the archive) holds."""
        with self.db.reading() as conn:
            if section_tipo is None:
                return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
            return int(
                conn.execute(
                    "SELECT count(*) FROM records WHERE section_tipo = ?", (section_tipo,)
                ).fetchone()[0]
            )

    def list_records(self, section_tipo: str, *, offset: int = 0, limit: int = 100) -> list[Record]:
        """A page of a section's records ordered by id."""
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM records WHERE section_tipo = ? ORDER BY section_id LIMIT ? OFFSET ?",
                (section_tipo, limit, offset),
            ).fetchall()
        return [row_to_record(r) for r in rows]

    def iter_records(self, section_tipo: str | None = None, batch: int = 500) -> Iterator[Record]:
        """Every record (of one section), streamed in batches."""
        last: tuple[str, int] = ("", -1)
        while True:
            with self.db.reading() as conn:
                sql = "SELECT * FROM records WHERE (section_tipo, section_id) > (?, ?)"
                args: list[Any] = [*last]
                if section_tipo is not None:
                    sql += " AND section_tipo = ?"
                    args.append(section_tipo)
                sql += " ORDER BY section_tipo, section_id LIMIT ?"
                rows = conn.execute(sql, (*args, batch)).fetchall()
            if not rows:
                return
            for row in rows:
                yield row_to_record(row)
            last = (rows[-1]["section_tipo"], rows[-1]["section_id"])

    def record_label(self, key: RecordKey, lang: str = "lg-eng") -> str:
        """A record's human label (its section's label field), or ``tipo/id``."""
        record = self.find_record(key)
        if record is None:
            return str(key)
        return self.label_of(record, lang)

    def label_of(self, record: Record, lang: str = "lg-eng") -> str:
        """The label of a record already read.

        In an archival hierarchy (a section whose records are "part of" one another, such as
        EAD's ``ead1``) the label leads with the reference code, as archivists cite a unit:
        ``572AP/1 · Copie de 157 lettres de Ludovic Vitet``.
        """
        code_field = self.code_field(record.section_tipo)
        code = record.text(code_field, lang) if code_field else None
        return lead_with_code(self.title_of(record, lang, fallback=False), code) or str(record.key)

    def title_of(self, record: Record, lang: str = "lg-eng", *, fallback: bool = True) -> str:
        """The record's title alone (its label field; the key when it has none and
        ``fallback``), for a view that shows the reference code beside it."""
        section = self.section(record.section_tipo)
        text = record.text(section.label_field, lang) if section.label_field else None
        return text or (str(record.key) if fallback else "")

    def code_field(self, tipo: str) -> str | None:
        """The reference-code field of section ``tipo`` when it is an archival hierarchy
        (labels and chunk labels lead with it), else ``None``."""
        if tipo not in self._code_fields:
            shape = None
            if self.has_section(tipo):
                with self.db.reading() as conn:
                    rows = conn.execute(
                        "SELECT value FROM meta WHERE key >= ? AND key < ?",
                        (TABLE_LAYOUTS, TABLE_LAYOUTS + "\uffff"),
                    ).fetchall()
                roles = layout_roles((str(row[0]) for row in rows), tipo)
                shape = shape_of(self.section(tipo), self.fields(tipo), roles)
            self._code_fields[tipo] = shape.reference_field if shape is not None else None
        return self._code_fields[tipo]

    def is_restricted(self, key: RecordKey) -> bool:
        """Whether a record may never reach an external model (record flag, else section's)."""
        record = self.find_record(key)
        if record is not None and record.restricted is not None:
            return record.restricted
        return (
            self.section(key.section_tipo).restricted
            if self.has_section(key.section_tipo)
            else True
        )

    # -- links -------------------------------------------------------------------------------
    def links_from(self, key: RecordKey) -> list[Link]:
        """Relations that start at ``key``."""
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM links WHERE from_section = ? AND from_id = ? "
                "ORDER BY field_tipo, to_section, to_id",
                (key.section_tipo, key.section_id),
            ).fetchall()
        return [_row_to_link(r) for r in rows]

    def links_to(self, key: RecordKey) -> list[Link]:
        """Relations that point at ``key`` (reverse lookup)."""
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM links WHERE to_section = ? AND to_id = ? "
                "ORDER BY from_section, from_id, field_tipo",
                (key.section_tipo, key.section_id),
            ).fetchall()
        return [_row_to_link(r) for r in rows]

    # -- audit -------------------------------------------------------------------------------
    def audit_rows(self, limit: int = 1000) -> list[AuditRow]:
        """The most recent audit rows, newest last."""
        with self.db.reading() as conn:
            rows = conn.execute(
                "SELECT * FROM (SELECT * FROM audit ORDER BY id DESC LIMIT ?) ORDER BY id", (limit,)
            ).fetchall()
        return [_row_to_audit(row) for row in rows]


def _row_to_audit(row: Row) -> AuditRow:
    def decoded(text: str | None) -> object:
        return json.loads(text) if text else None

    return AuditRow(
        id=row["id"],
        at=row["at"],
        action=row["action"],
        section_tipo=row["section_tipo"],
        section_id=row["section_id"],
        plan_hash=row["plan_hash"],
        op_id=row["op_id"],
        before=decoded(row["before"]),
        after=decoded(row["after"]),
        model=row["model"],
        egress=row["egress"],
        actor=row["actor"],
        plan_id=row["plan_id"],
    )


def _put_section(conn: Connection, s: Section) -> None:
    conn.execute(
        "INSERT INTO sections(tipo, labels, description, restricted, writable, label_field) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(tipo) DO UPDATE SET labels = excluded.labels, "
        "description = excluded.description, restricted = excluded.restricted, "
        "writable = excluded.writable, label_field = excluded.label_field",
        (
            s.tipo,
            json.dumps(s.labels, ensure_ascii=False),
            s.description,
            bool(s.restricted),
            bool(s.writable),
            s.label_field,
        ),
    )


def _put_field(conn: Connection, f: Field) -> None:
    conn.execute(
        "INSERT INTO fields(tipo, section_tipo, labels, kind, multilingual, target_section, "
        "position) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(tipo) DO UPDATE SET "
        "section_tipo = excluded.section_tipo, labels = excluded.labels, kind = excluded.kind, "
        "multilingual = excluded.multilingual, target_section = excluded.target_section, "
        "position = excluded.position",
        (
            f.tipo,
            f.section_tipo,
            json.dumps(f.labels, ensure_ascii=False),
            f.kind,
            bool(f.multilingual),
            f.target_section,
            f.position,
        ),
    )


def _row_to_section(row: Row) -> Section:
    return Section(
        tipo=row["tipo"],
        labels=json.loads(row["labels"]),
        description=row["description"],
        restricted=bool(row["restricted"]),
        writable=bool(row["writable"]),
        label_field=row["label_field"],
    )


def _row_to_field(row: Row) -> Field:
    return Field(
        tipo=row["tipo"],
        section_tipo=row["section_tipo"],
        labels=json.loads(row["labels"]),
        kind=row["kind"],
        multilingual=bool(row["multilingual"]),
        target_section=row["target_section"],
        position=row["position"],
    )


def _row_to_link(row: Row) -> Link:
    return Link(
        RecordKey(row["from_section"], row["from_id"]),
        row["field_tipo"],
        RecordKey(row["to_section"], row["to_id"]),
    )


def _create_or_refuse(folder: Path, *, create: bool, read_only: bool) -> None:
    """Create the archive ``folder`` holds none of, or refuse: ``archive.not_found`` without
    ``create``, or with ``read_only`` (nothing is made)."""
    if not create:
        raise ArchiveError(
            "archive.not_found",
            Phrase.of(
                "No archive at {folder} (there is no {file}).", folder=str(folder), file=DB_NAME
            ),
            hint="Check the path, or create an archive there.",
            category="input",
        )
    if read_only:
        raise ArchiveError(
            "archive.not_found",
            Phrase.of("No archive at {folder}.", folder=str(folder)),
            category="input",
        )
    _make_folder(folder)
    _create_database(folder / DB_NAME)


def open_archive(folder: Path | str, *, create: bool = False, read_only: bool = False) -> Archive:
    """Open (and with ``create=True`` create) the archive in ``folder``, migrating its schema.

    Only a missing folder or ``archive.db`` is a new archive: an empty (zero-byte) file is a
    damaged one. A new archive's database is built under a temporary name and renamed into place
    once its schema is complete, so a crash while creating it leaves no half-made archive.

    Raises:
        ArchiveError: ``archive.not_found``, ``archive.corrupt``, ``archive.schema_newer``,
            ``archive.read_only``, ``archive.locked``. The folder is left untouched on error.
    """
    if is_shared(str(folder)):
        return _open_shared(str(folder), create=create, read_only=read_only)
    folder = Path(folder).expanduser()
    db_path = folder / DB_NAME
    if db_path.exists():
        _check_header(db_path)
    else:
        _create_or_refuse(folder, create=create, read_only=read_only)
    db = Database(db_path, read_only=read_only)
    try:
        db.check_readable()
        version = db.schema_version()
        if read_only and version != len(MIGRATIONS):
            if version < len(MIGRATIONS):
                raise ArchiveError(
                    "archive.needs_upgrade",
                    Phrase.of(
                        "The archive {folder} needs a schema update and was opened read-only.",
                        folder=str(folder),
                    ),
                    hint="Open it once with write access to update it.",
                )
            db.migrate()  # raises archive.schema_newer, touching nothing
        if not read_only:
            if version < len(MIGRATIONS) and not os.access(folder, os.W_OK):
                raise ArchiveError(
                    "archive.read_only",
                    Phrase.of(
                        "The archive {folder} needs a schema update but its folder is read-only.",
                        folder=str(folder),
                    ),
                    hint="Open it from a writable location.",
                )
            db.migrate()
            db.enable_wal()
            (folder / MEDIA_DIR).mkdir(exist_ok=True)
    except BaseException:
        db.close()
        raise
    return Archive(folder, db)


SHARED_SCHEMES = ("postgresql://", "postgres://")


def is_shared(location: str) -> bool:
    """Whether ``location`` names a shared archive (a ``postgresql://`` URL), not a folder."""
    return location.startswith(SHARED_SCHEMES)


def _open_shared(url: str, *, create: bool, read_only: bool) -> Archive:
    """A shared archive on PostgreSQL (needs the ``postgres`` extra: psycopg, pgvector)."""
    try:
        from app.core.archive.postgres.shared import open_shared_engine
    except ImportError as exc:
        raise ArchiveError(
            "archive.pg_driver_missing",
            "Opening a shared archive needs the PostgreSQL driver, which is not installed.",
            hint='Install it with: pip install "arxiu[postgres]"',
        ) from exc
    folder, engine = open_shared_engine(url, create=create, read_only=read_only)
    try:
        (folder / MEDIA_DIR).mkdir(parents=True, exist_ok=True)
    except OSError:
        engine.close()
        raise
    return Archive(folder, engine, location=url)


SQLITE_MAGIC = b"SQLite format 3\x00"
MIN_PAGE_SIZE = 512


def _check_header(db_path: Path) -> None:
    """Fail with ``archive.corrupt`` for a file too short to hold one page, or not SQLite.

    SQLite itself opens an empty or very short file as a new, empty database: an archive
    emptied by a crash or a bad copy would then look like a new one.
    """
    try:
        with db_path.open("rb") as handle:
            head = handle.read(MIN_PAGE_SIZE)
    except OSError:
        return  # unreadable: SQLite reports it with its own code
    if len(head) < MIN_PAGE_SIZE or not head.startswith(SQLITE_MAGIC):
        message = (
            Phrase.of(
                "The archive database {path} is empty ({n} bytes): it holds no archive.",
                path=str(db_path),
                n=len(head),
            )
            if len(head) < MIN_PAGE_SIZE
            else Phrase.of(
                "The archive database {path} is not SQLite: it holds no archive.",
                path=str(db_path),
            )
        )
        raise ArchiveError(
            "archive.corrupt",
            message,
            hint="Restore the archive folder from a backup; the file was left as it is.",
            details={"path": str(db_path), "size": len(head)},
        )


def _create_database(db_path: Path) -> None:
    """Make a migrated, empty ``archive.db`` atomically (built aside, then renamed)."""
    temp = db_path.with_name(f".{DB_NAME}.creating")
    temp.unlink(missing_ok=True)
    db = Database(temp)
    try:
        db.migrate()
    finally:
        db.close()
    try:
        os.replace(temp, db_path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise ArchiveError(
            "archive.read_only",
            Phrase.of(
                "Cannot create the archive database {path}: {error}.",
                path=str(db_path),
                error=str(exc.strerror),
            ),
            hint="Choose a folder you can write to.",
        ) from exc


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MEDIA_DIR).mkdir(exist_ok=True)
    except OSError as exc:
        raise ArchiveError(
            "archive.read_only",
            Phrase.of(
                "Cannot create the archive folder {folder}: {error}.",
                folder=str(folder),
                error=str(exc.strerror),
            ),
            hint="Choose a folder you can write to.",
        ) from exc
