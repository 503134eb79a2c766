"""Named, ordered schema migrations of ``archive.db``.

``PRAGMA user_version`` holds how many migrations have been applied; each one runs in its own
transaction and is recorded in ``_migrations``. A database whose version is higher than the list
below was written by a newer Arxiu and is refused (``archive.schema_newer``), untouched.

Each migration is a step on a :class:`sqlite_utils.Database` wrapping the writer's connection,
inside the runner's ``BEGIN IMMEDIATE`` (sqlite-utils then works in savepoints and never
commits): indexes are made with ``create_index``, carried-over rows written with
``insert_all``, and a change SQLite's ``ALTER TABLE`` cannot make (drop, retype or reorder a
column; change a primary key, a default or ``NOT NULL``) goes through :func:`transform`.
Tables, triggers and the FTS5 table stay the SQL they were first written in: sqlite-utils'
``create_table`` cannot make a ``WITHOUT ROWID`` table, and ``enable_fts`` names its table
``<table>_fts``, fills it and adds an update trigger, none of which an existing archive has.

sqlite-utils is imported only when a migration runs (it loads numpy and click: about a second on
a busy machine), so opening an up-to-date archive never loads it.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.archive import lexical_table
from app.core.archive.answer_ledger import LEDGER_SQL
from app.core.archive.plan_seal import PLAN_SECRET, seal
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    import sqlite_utils


@dataclass(frozen=True)
class Migration:
    """One schema step: a unique name and the function that performs it on a connection."""

    name: str
    apply: Callable[[sqlite3.Connection], None]


Step = Callable[["sqlite_utils.Database"], None]


@dataclass(frozen=True)
class IndexSpec:
    """An index a migration creates: its name, its table and its columns in order."""

    name: str
    table: str
    columns: tuple[str, ...]


def utils_database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """``conn`` as a :class:`sqlite_utils.Database`, its settings left as they are.

    ``recursive_triggers=False``: sqlite-utils would otherwise switch that pragma on for the
    connection's lifetime, and the writer would then fire delete triggers on every
    ``INSERT OR REPLACE``. ``execute_plugins=False``: plugins belong to the command line.
    """
    import sqlite_utils

    return sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)


def _on_utils(step: Step) -> Callable[[sqlite3.Connection], None]:
    def run(conn: sqlite3.Connection) -> None:
        step(utils_database(conn))

    return run


def _statements(script: str) -> Iterator[str]:
    return (s.strip() for s in script.split(";\n") if s.strip())


def _run_sql(db: sqlite_utils.Database, script: str) -> None:
    for statement in _statements(script):
        db.execute(statement)


def create_indexes(db: sqlite_utils.Database, specs: tuple[IndexSpec, ...]) -> None:
    """Create each index with sqlite-utils' ``create_index`` (quoted names, same effect)."""
    for spec in specs:
        db.table(spec.table).create_index(spec.columns, index_name=spec.name)


def without_rowid(db: sqlite_utils.Database, table: str) -> bool:
    """Whether ``table`` was created ``WITHOUT ROWID`` (``PRAGMA table_list``, SQLite 3.37+)."""
    row = db.execute("SELECT wr FROM pragma_table_list WHERE name = ?", [table]).fetchone()
    return bool(row and row[0])


def transform(db: sqlite_utils.Database, table: str, **changes: Any) -> None:
    """``db[table].transform(**changes)`` for a migration, keeping what it would lose.

    sqlite-utils rebuilds the table (create, copy with ``rowid``, drop, rename; its indexes are
    re-created). The table's triggers go with the old table, so they are re-created from their
    SQL here (the audit log's append-only guard is one). A ``WITHOUT ROWID`` table cannot be
    copied through ``rowid`` and is refused before anything changes.

    Raises:
        ArchiveError: ``archive.migration_invalid`` for a ``WITHOUT ROWID`` table.
    """
    if without_rowid(db, table):
        raise ArchiveError(
            "archive.migration_invalid",
            Phrase.of(
                "The table {table!r} is WITHOUT ROWID: sqlite-utils' transform cannot rebuild it.",
                table=table,
            ),
            hint="Rebuild it in the migration with CREATE TABLE, INSERT ... SELECT, DROP, RENAME.",
            category="internal",
        )
    target = db.table(table)
    triggers = [trigger.sql for trigger in target.triggers]
    target.transform(**changes)
    for sql in triggers:
        db.execute(sql)


_BASE = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sections (
    tipo TEXT PRIMARY KEY,
    labels TEXT NOT NULL DEFAULT '{}',
    description TEXT NOT NULL DEFAULT '',
    restricted INTEGER NOT NULL DEFAULT 0,
    writable INTEGER NOT NULL DEFAULT 0,
    label_field TEXT
);
CREATE TABLE fields (
    tipo TEXT PRIMARY KEY,
    section_tipo TEXT NOT NULL REFERENCES sections(tipo),
    labels TEXT NOT NULL DEFAULT '{}',
    kind TEXT NOT NULL DEFAULT 'text',
    multilingual INTEGER NOT NULL DEFAULT 0,
    target_section TEXT,
    position INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE records (
    section_tipo TEXT NOT NULL REFERENCES sections(tipo),
    section_id INTEGER NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    version INTEGER NOT NULL DEFAULT 1,
    restricted INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (section_tipo, section_id)
) WITHOUT ROWID;
CREATE TABLE links (
    from_section TEXT NOT NULL,
    from_id INTEGER NOT NULL,
    field_tipo TEXT NOT NULL,
    to_section TEXT NOT NULL,
    to_id INTEGER NOT NULL,
    PRIMARY KEY (from_section, from_id, field_tipo, to_section, to_id)
) WITHOUT ROWID;
CREATE TABLE media (
    id INTEGER PRIMARY KEY,
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    field_tipo TEXT NOT NULL,
    path TEXT NOT NULL,
    mime TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    width INTEGER,
    height INTEGER,
    duration_s REAL,
    thumbnail TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    section_tipo TEXT,
    section_id INTEGER,
    plan_hash TEXT,
    op_id TEXT,
    before TEXT,
    after TEXT,
    model TEXT,
    egress TEXT,
    actor TEXT
);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    model TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    history TEXT NOT NULL DEFAULT '[]',
    transcript TEXT NOT NULL DEFAULT '[]',
    pending_plan TEXT
);
CREATE TABLE external_ids (
    source TEXT NOT NULL,
    external_id TEXT NOT NULL,
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    PRIMARY KEY (source, external_id)
) WITHOUT ROWID
"""

_INDEX = """
CREATE TABLE index_chunks (
    id INTEGER PRIMARY KEY,
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    field_tipo TEXT NOT NULL,
    lang TEXT NOT NULL,
    position INTEGER NOT NULL,
    timecode TEXT,
    page TEXT,
    label TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    restricted INTEGER
);
CREATE TABLE index_vectors (
    content_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (content_hash, model)
) WITHOUT ROWID;
CREATE TABLE index_records (
    section_tipo TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (section_tipo, section_id)
) WITHOUT ROWID;
CREATE TABLE index_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)
"""

_BASE_INDEXES = (
    IndexSpec("fields_by_section", "fields", ("section_tipo", "position")),
    IndexSpec("links_reverse", "links", ("to_section", "to_id")),
    IndexSpec("media_by_record", "media", ("section_tipo", "section_id")),
)

_INDEX_INDEXES = (
    IndexSpec("index_chunks_by_record", "index_chunks", ("section_tipo", "section_id")),
    IndexSpec("index_chunks_by_hash", "index_chunks", ("content_hash",)),
)

CHUNK_FTS = """
CREATE VIRTUAL TABLE index_fts USING fts5(
    label, text, content='index_chunks', content_rowid='id',
    tokenize="unicode61 remove_diacritics 2"
);
CREATE TRIGGER index_chunks_ai AFTER INSERT ON index_chunks BEGIN
    INSERT INTO index_fts(rowid, label, text) VALUES (new.id, new.label, new.text); END;
CREATE TRIGGER index_chunks_ad AFTER DELETE ON index_chunks BEGIN
    INSERT INTO index_fts(index_fts, rowid, label, text)
    VALUES ('delete', old.id, old.label, old.text); END
"""
"""The chunks' full-text table (external content: ``index_chunks``, its ``id`` as rowid; accents
folded) and the triggers that keep it in step. Chunks are only inserted and deleted, never
updated, so there is no update trigger (``enable_fts`` would add one)."""

_PLAN_BOOK = """
CREATE TABLE plans (
    id TEXT PRIMARY KEY,
    plan_hash TEXT NOT NULL,
    plan TEXT NOT NULL,
    conversation_id TEXT,
    model_id TEXT NOT NULL DEFAULT '',
    egress TEXT NOT NULL DEFAULT 'local',
    tainted INTEGER NOT NULL DEFAULT 0,
    restricted_text INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending',
    owner TEXT,
    report TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE id_marks (
    section_tipo TEXT PRIMARY KEY,
    high INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO id_marks(section_tipo, high)
    SELECT section_tipo, max(section_id) FROM audit
    WHERE action = 'delete' AND section_tipo IS NOT NULL GROUP BY section_tipo
"""

_PLAN_BOOK_INDEXES = (
    IndexSpec("plans_by_conversation", "plans", ("conversation_id", "status")),
    IndexSpec("plans_by_hash", "plans", ("plan_hash",)),
    IndexSpec("audit_by_plan", "audit", ("plan_hash", "op_id")),
)


def _base(db: sqlite_utils.Database) -> None:
    """Sections, fields, records, links, media, audit (append-only), conversations."""
    _run_sql(db, _BASE)
    create_indexes(db, _BASE_INDEXES)


def _index(db: sqlite_utils.Database) -> None:
    """The search index: chunks, vectors, their full-text table, indexed versions, state."""
    _run_sql(db, _INDEX)
    create_indexes(db, _INDEX_INDEXES)
    _run_sql(db, CHUNK_FTS)


def _plan_book(db: sqlite_utils.Database) -> None:
    """The plan book (plan status in its own table), ids never reused, plans carried over.

    Plans recorded in conversations by earlier versions (``pending_plan`` and the transcript
    turns that proposed one) move into the book with the status they had; the first record of
    an id wins.
    """
    _run_sql(db, _PLAN_BOOK)
    create_indexes(db, _PLAN_BOOK_INDEXES)
    rows = db.execute("SELECT id, pending_plan, transcript, updated_at FROM conversations")
    carried = [
        _book_row(conversation_id, item, stamp)
        for conversation_id, pending_text, transcript_text, stamp in rows.fetchall()
        for item in _stored_plans(pending_text, transcript_text)
    ]
    if carried:
        db.table("plans").insert_all(carried, ignore=True)


@dataclass(frozen=True)
class _StoredPlan:
    """A plan an earlier version kept in a conversation (``pending_plan`` or a turn)."""

    id: str
    plan: Mapping[str, object]
    status: str
    model_id: str
    egress: str = "local"


def _book_row(conversation_id: str, item: _StoredPlan, stamp: str) -> dict[str, str]:
    return {
        "id": item.id,
        "plan_hash": str(item.plan.get("plan_hash", "")),
        "plan": json.dumps(item.plan, ensure_ascii=False),
        "conversation_id": conversation_id,
        "model_id": item.model_id,
        "egress": item.egress,
        "status": item.status,
        "created_at": stamp,
        "updated_at": stamp,
    }


def _stored_plans(pending_text: str | None, transcript_text: str | None) -> list[_StoredPlan]:
    """The plans an earlier version kept in a conversation, latest record first."""
    found: list[_StoredPlan] = []
    try:
        pending = json.loads(pending_text) if pending_text else None
        transcript = json.loads(transcript_text) if transcript_text else []
    except ValueError:
        return found
    if isinstance(pending, dict) and isinstance(pending.get("plan"), dict) and pending.get("id"):
        found.append(
            _StoredPlan(
                id=str(pending["id"]),
                plan=pending["plan"],
                status=str(pending.get("status", "superseded")),
                model_id=str(pending.get("model_id", "")),
                egress=str(pending.get("egress", "local")),
            )
        )
    for turn in transcript if isinstance(transcript, list) else []:
        plan = turn.get("change_plan") if isinstance(turn, dict) else None
        if isinstance(plan, dict) and plan.get("pending_id"):
            body = {k: v for k, v in plan.items() if k != "pending_id"}
            status = str(turn.get("plan_status", "superseded"))
            model_id = str(turn.get("model", ""))
            found.append(_StoredPlan(str(plan["pending_id"]), body, status, model_id))
    return found


_PLAN_BINDING = """
ALTER TABLE plans ADD COLUMN proposer TEXT;
ALTER TABLE plans ADD COLUMN bound_hash TEXT;
ALTER TABLE audit ADD COLUMN plan_id TEXT;
CREATE TABLE archive_secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
) WITHOUT ROWID
"""

_PLAN_BINDING_INDEXES = (
    IndexSpec("plans_by_bound_hash", "plans", ("bound_hash",)),
    IndexSpec("audit_by_plan_id", "audit", ("plan_id", "op_id")),
)


def _plan_binding(db: sqlite_utils.Database) -> None:
    """Plans bound to the book: who proposed each, the hash clients see (an HMAC keyed by a
    per-archive secret), and the plan-book id on each audit row (so a resume finds its own).

    Plans and audit rows already there keep ``NULL`` in the new columns (a plan with no
    proposer is the local person's); each plan's bound hash is filled in.
    """
    _run_sql(db, _PLAN_BINDING)
    create_indexes(db, _PLAN_BINDING_INDEXES)
    key = secrets.token_bytes(32)
    db.execute("INSERT INTO archive_secrets(name, value) VALUES (?, ?)", (PLAN_SECRET, key))
    rows = db.execute("SELECT id, plan_hash FROM plans").fetchall()
    for plan_id, content_hash in rows:
        db.execute(
            "UPDATE plans SET bound_hash = ? WHERE id = ?",
            (seal(key, str(plan_id), str(content_hash)), plan_id),
        )


def _answer_ledger(db: sqlite_utils.Database) -> None:
    """The answer ledger: digests of what the server answered and was asked per API user, and
    of tainted answers' shingles (see :mod:`app.core.archive.answer_ledger`); empty at first."""
    _run_sql(db, LEDGER_SQL)


def _conversation_owner(db: sqlite_utils.Database) -> None:
    """Whose each conversation is: the ``owner`` column a shared archive fills with the
    archivist's server role. A folder archive is one person's, so its rows keep ``NULL``; the
    column is there so that a copy between engines carries it both ways."""
    _run_sql(db, "ALTER TABLE conversations ADD COLUMN owner TEXT")


MIGRATIONS: list[Migration] = [
    Migration("0001_base", _on_utils(_base)),
    # The index (app/core/index) appends its own named migrations after this line.
    Migration("0002_index", _on_utils(_index)),
    Migration("0003_plan_book", _on_utils(_plan_book)),
    Migration("0004_plan_binding", _on_utils(_plan_binding)),
    Migration("0005_answer_ledger", _on_utils(_answer_ledger)),
    Migration("0006_conversation_owner", _on_utils(_conversation_owner)),
    Migration("0007_lexemes", lexical_table.recreate),
]
