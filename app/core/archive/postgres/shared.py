"""Opening a shared archive: the :class:`~app.core.archive.store.Archive` of a ``postgresql://``
URL, on the PostgreSQL engine (:class:`~.database.PgDatabase`).

The archive's data lives in the server, media files included (``media_files``/``media_parts``).
What the workstation keeps is a cache folder per archive (``shared/HOST_PORT/DATABASE`` in
Arxiu's data folder), where media files are written when read; its name is the database's, so
the API and the window name a shared archive as they name a folder.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from app.core.archive.plan_seal import PLAN_SECRET
from app.core.archive.postgres.connect import connect, database_name, ensure_vector
from app.core.archive.postgres.database import PgDatabase
from app.core.archive.postgres.roles import (
    create_policies,
    create_roles,
    group_roles,
    has_own_conversations,
    own_conversations,
)
from app.core.archive.postgres.schema import (
    create_fold,
    create_tables,
    has_fold,
    has_schema,
    owns_archive,
    user_tables,
)
from app.core.errors import ArchiveError
from app.core.paths import home
from app.core.phrases import Phrase


def cache_folder(url: str) -> Path:
    """The workstation's folder for the shared archive at ``url`` (its media cache)."""
    import psycopg

    info = psycopg.conninfo.conninfo_to_dict(url)
    host = str(info.get("host") or "local").replace("/", "_")
    port = str(info.get("port") or "5432")
    return home() / "shared" / f"{host}_{port}" / database_name(url)


def open_shared_engine(
    url: str, *, create: bool = False, read_only: bool = False
) -> tuple[Path, PgDatabase]:
    """The workstation's cache folder and the PostgreSQL engine of the archive at ``url``
    (:func:`app.core.archive.store.open_archive` makes the archive of them); with ``create``,
    an empty database gets the archive's schema, roles, row-level security and plan key first
    (the owner's right).

    Raises:
        ArchiveError: ``archive.not_found`` (the database holds no archive and ``create`` is
            off), ``archive.copy_destination_not_empty`` (it holds other tables), the
            connection's coded errors (:func:`~.connect.connect`).
    """
    _ensure_schema(url, create=create)
    return cache_folder(url), PgDatabase(url, read_only=read_only)


def _ensure_schema(url: str, *, create: bool) -> None:
    """Give ``url`` the archive's schema when it is empty and ``create`` is on, and add
    ``arxiu_fold`` to an archive copied before it existed when this role owns the archive (for
    another role the assistant's field filters then say ``archive.pg_no_fold`` until the owner
    has opened it once), and each archivist's own conversations to an archive made before them
    (until the owner opens it, the others read none, as before)."""
    conn = connect(url, vector=False, autocommit=True)
    try:
        if has_schema(conn):
            if not has_fold(conn) and owns_archive(conn):
                with conn.transaction():  # an archive copied before arxiu_fold existed
                    create_fold(conn)
            if not has_own_conversations(conn) and owns_archive(conn):
                with conn.transaction():  # made when conversations had no owner
                    own_conversations(conn, group_roles(database_name(url)))
            return
        if not create:
            raise ArchiveError(
                "archive.not_found",
                Phrase.of("The database {where} holds no Arxiu archive.", where=database_name(url)),
                hint="Copy an archive into it (arxiu archive copy) or import into it.",
                category="input",
            )
        if user_tables(conn):
            raise ArchiveError(
                "archive.copy_destination_not_empty",
                Phrase.of(
                    "The database {where} holds tables that are not an archive.",
                    where=database_name(url),
                ),
                hint="Use an empty database.",
                category="input",
            )
        with conn.transaction():
            ensure_vector(conn)
            create_tables(conn)
            create_policies(conn, create_roles(conn, database_name(url)))
            conn.execute(  # the plan key a new folder archive gets from its migration
                "INSERT INTO archive_secrets(name, value) VALUES (%s, %s)",
                (PLAN_SECRET, secrets.token_bytes(32)),
            )
    finally:
        conn.close()
