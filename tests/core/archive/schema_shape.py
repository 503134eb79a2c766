"""The shape of an ``archive.db`` schema, read with sqlite-utils' introspection.

Two databases with the same shape have the same tables (virtual and FTS5 shadow tables too),
columns (type, ``NOT NULL``, default, primary key), foreign keys, indexes (name, uniqueness,
origin, columns in order), triggers (name and SQL, whitespace folded), ``WITHOUT ROWID`` and
``STRICT`` flags, and virtual-table definitions. How an index's ``CREATE INDEX`` is spelled
(quoted or not) is not part of the shape: it changes nothing SQLite does.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from app.core.archive.database import Database
from app.core.archive.migrations import MIGRATIONS, utils_database, without_rowid

SCHEMAS = Path(__file__).parent / "schemas"
"""``schema_vN.sql``: the schema at version N as Arxiu made it before sqlite-utils (e70e934)."""


def _squash(sql: str | None) -> str:
    return re.sub(r"\s+", " ", sql or "").strip()


def schema_shape(path: Path) -> dict[str, dict[str, Any]]:
    """Every table of the database at ``path``, described through sqlite-utils."""
    conn = sqlite3.connect(path)
    try:
        db = utils_database(conn)
        return {
            table.name: {
                "columns": [
                    (c.name, c.type, bool(c.notnull), c.default_value, c.is_pk)
                    for c in table.columns
                ],
                "foreign_keys": sorted(
                    (fk.columns, fk.other_table, fk.other_columns, fk.on_delete, fk.on_update)
                    for fk in table.foreign_keys
                ),
                "indexes": sorted(
                    (i.name, bool(i.unique), i.origin, bool(i.partial), tuple(i.columns))
                    for i in table.indexes
                ),
                "triggers": sorted((t.name, _squash(t.sql)) for t in table.triggers),
                "virtual": table.virtual_table_using and _squash(table.schema),
                "without_rowid": without_rowid(db, table.name),
                "strict": table.strict,
            }
            for table in db.tables
        }
    finally:
        conn.close()


def old_schema_statements(version: int) -> list[str]:
    """The statements, in creation order, that made schema ``version`` before sqlite-utils."""
    text = (SCHEMAS / f"schema_v{version}.sql").read_text(encoding="utf-8")
    return [s.strip() for s in text.split(";;\n") if s.strip()]


def make_old_archive(folder: Path, version: int) -> Path:
    """An ``archive.db`` at ``version`` exactly as an older Arxiu created it; returns its path."""
    folder.mkdir(parents=True)
    path = folder / "archive.db"
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for statement in old_schema_statements(version):
            conn.execute(statement)
        for migration in MIGRATIONS[:version]:
            conn.execute("INSERT INTO _migrations(name) VALUES (?)", (migration.name,))
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path


def migrate_to(path: Path, version: int) -> None:
    """Run today's first ``version`` migrations on ``path`` with the real runner."""
    import app.core.archive.database as database

    known = database.MIGRATIONS
    database.MIGRATIONS = MIGRATIONS[:version]
    try:
        db = Database(path)
        try:
            db.migrate()
        finally:
            db.close()
    finally:
        database.MIGRATIONS = known
