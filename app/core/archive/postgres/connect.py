"""Opening a PostgreSQL archive from a ``postgresql://`` URL: a checked connection, a pool.

The URL goes to libpq as it is, so every libpq parameter works, ``sslmode`` (and
``sslrootcert``...) included: ``postgresql://ana@archive.example.org/arxiu?sslmode=verify-full``.
Every session runs in UTC with the pgvector adapter registered. A connection that fails becomes
a coded :class:`~app.core.errors.ArchiveError`: the server unreachable, the password refused,
no such database, a TLS failure, or a database without pgvector. A password never appears in a
message (:func:`redact`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from app.core.archive.postgres.credentials import password_for
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

Conn = psycopg.Connection[tuple[object, ...]]
CONNECT_TIMEOUT_S = 10
SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL archive (not a folder)."""
    return location.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def database_name(url: str) -> str:
    """The database a URL names (libpq's own parse, so ``?dbname=`` counts too)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise invalid_url(url, str(exc)) from exc
    name = info.get("dbname") or info.get("user")
    if not name:
        raise invalid_url(url, Phrase.of("it names no database"))
    return str(name)


def invalid_url(url: str, why: str | Phrase) -> ArchiveError:
    """The ``archive.pg_url_invalid`` error (``why`` a phrase, or the driver's own text)."""
    return ArchiveError(
        "archive.pg_url_invalid",
        Phrase.of("{url} is not a usable PostgreSQL URL: {why}.", url=redact(url), why=why),
        hint="Write it as postgresql://USER@HOST:PORT/DATABASE (add ?sslmode=... if needed).",
        category="input",
    )


def translate(exc: psycopg.Error, url: str) -> ArchiveError:
    """A psycopg error as a coded archive error (what a person can act on)."""
    text = str(exc)
    lower = text.lower()
    where = redact(url)
    state = getattr(exc, "sqlstate", None)
    refused = ("password authentication failed", "no password supplied")
    if any(words in lower for words in refused) or state in ("28P01", "28000"):
        return ArchiveError(
            "archive.pg_auth_failed",
            Phrase.of(
                "The server refused the login for {where}: wrong user or password.", where=where
            ),
            hint="Check the user and the password (the PGPASSWORD variable or ~/.pgpass).",
            category="permission",
        )
    if (state == "3D000") or ("database" in lower and "does not exist" in lower):
        return ArchiveError(
            "archive.pg_no_database",
            Phrase.of("There is no such database on the server: {where}.", where=where),
            hint="Create it first (createdb), see docs/shared-archive.md.",
            category="input",
        )
    if "ssl" in lower:
        return ArchiveError(
            "archive.pg_ssl",
            Phrase.of(
                "The TLS connection to {where} failed: {why}", where=where, why=first_line(text)
            ),
            hint="Check sslmode and the certificates (sslrootcert) in the URL.",
        )
    if state == "42501" or "permission denied" in lower or "row-level security" in lower:
        return ArchiveError(
            "archive.pg_permission",
            Phrase.of(
                "The server refused this for the role of {where}: {why}",
                where=where,
                why=first_line(text),
            ),
            hint="Ask the archive's administrator for the right (arxiu archive grant).",
            category="permission",
        )
    if isinstance(exc, psycopg.OperationalError) and state is None:
        return ArchiveError(
            "archive.pg_unreachable",
            Phrase.of(
                "Cannot reach the PostgreSQL server of {where}: {why}",
                where=where,
                why=first_line(text),
            ),
            hint="Check the host and the port, and that the server is running and accepts you.",
            retryable=True,
        )
    return ArchiveError(
        "archive.pg_error",
        Phrase.of("PostgreSQL error on {where}: {why}", where=where, why=first_line(text)),
        category="internal",
    )


def first_line(text: str) -> str:
    """The first line of a server message, without libpq's prefix."""
    line = text.strip().splitlines()[0] if text.strip() else text
    return re.sub(r"^connection to server at [^,]+, port \d+ failed: ", "", line)


def connect(url: str, *, vector: bool = True, autocommit: bool = False) -> Conn:
    """A connection to the archive at ``url`` (UTC; with ``vector``, the pgvector adapter,
    which needs the extension in the database).

    Raises:
        ArchiveError: ``archive.pg_url_invalid``, ``archive.pg_unreachable``,
            ``archive.pg_auth_failed``, ``archive.pg_no_database``, ``archive.pg_ssl``,
            ``archive.pg_no_vector``.
    """
    if not is_postgres_url(url):
        raise invalid_url(url, Phrase.of("it does not start with postgresql://"))
    database_name(url)
    try:
        conn = psycopg.connect(
            _with_remembered(url), autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S
        )
    except psycopg.Error as exc:
        raise translate(exc, url) from exc
    try:
        prepare(conn, vector=vector)
    except BaseException:
        conn.close()
        raise
    return conn


def _with_remembered(url: str) -> str:
    """``url`` with the password remembered in the OS keyring added, when the URL and
    ``PGPASSWORD`` give none (:mod:`~app.core.archive.postgres.credentials`); messages still
    name only ``url``."""
    password = password_for(url)
    return psycopg.conninfo.make_conninfo(url, password=password) if password else url


def prepare(conn: Conn, *, vector: bool = True) -> None:
    """Set a session up: UTC, and the pgvector adapter (``archive.pg_no_vector`` when the
    database has not the extension)."""
    conn.execute("SET TIME ZONE 'UTC'")
    if vector:
        row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is None:
            raise no_vector(
                Phrase.of(
                    "The database {database} has not the pgvector extension.",
                    database=conn.info.dbname,
                )
            )
        register_vector(conn)
    if not conn.autocommit:
        conn.commit()


def no_vector(message: Phrase) -> ArchiveError:
    """The ``archive.pg_no_vector`` error (``message`` says which database, and why)."""
    return ArchiveError(
        "archive.pg_no_vector",
        message,
        hint="Install pgvector on the server and, as a superuser, run CREATE EXTENSION vector "
        "in that database (see docs/shared-archive.md).",
    )


def ensure_vector(conn: Conn) -> None:
    """Create the ``vector`` extension if the database has not it yet (a superuser's right,
    pgvector being untrusted), in the caller's transaction.

    Raises:
        ArchiveError: ``archive.pg_no_vector`` when the server has no pgvector or this role
            may not create it.
    """
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if available is None:
        raise no_vector(
            Phrase.of(
                "The database {database} has not the pgvector extension"
                " (the server has no pgvector installed).",
                database=conn.info.dbname,
            )
        )
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise no_vector(
            Phrase.of(
                "The database {database} has not the pgvector extension"
                " and this role may not create it.",
                database=conn.info.dbname,
            )
        ) from exc


def open_pool(
    url: str, *, max_size: int = 4, configure: Callable[[Conn], None] | None = None
) -> ConnectionPool[Conn]:
    """A connection pool on ``url``, its first connection checked (coded errors as
    :func:`connect`) before the pool opens, so a bad URL never leaves a pool retrying;
    ``configure`` sets each new connection up further, after :func:`prepare`."""
    connect(url).close()

    def set_up(conn: Conn) -> None:
        prepare(conn)
        if configure is not None:
            configure(conn)
            conn.commit()

    return ConnectionPool(
        _with_remembered(url),
        min_size=1,
        max_size=max_size,
        kwargs={"connect_timeout": CONNECT_TIMEOUT_S},
        configure=set_up,
        open=True,
    )
