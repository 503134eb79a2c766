"""Archivists as database roles: the archive's three group roles, its row-level security,
``arxiu archive grant`` and ``revoke``.

An archive in the database ``D`` has three group roles (no login), named after it so that two
archives on one server never share rights: ``D_reader`` (may connect and read),
``D_restricted`` (may also read restricted records) and ``D_writer`` (may also write; the
audit log only gains rows). The database ``arxiu`` gets ``arxiu_reader``, ``arxiu_restricted``
and ``arxiu_writer``. Granting makes an existing login role a member of them.

A record is restricted as the egress gate (``app/core/agent/egress.py``) reads it: its own
``restricted`` flag when set, else its section's. Row-level security hides from a role that is
not a member of ``D_restricted``, even with a plain SQL client: the restricted records, their
chunks and media (and the media files' bytes, and the vectors of texts only restricted chunks
hold), the links that touch a restricted record, the audit rows about one and the plans marked
``restricted_text``. The archive's owner (who created the schema) is not subject to it.

Conversations are each archivist's own: a role reads and writes only the rows whose ``owner``
is its name (a row copied from a folder archive has none and is the archive owner's), whatever
its rights; the store asks for the same rows when the archive's owner, whom row-level security
does not bind, opens it (:data:`~app.core.archive.conversations.OWN_CONVERSATIONS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from psycopg import sql

from app.core.archive.conversations import OWN_CONVERSATIONS
from app.core.archive.postgres.connect import Conn
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

READABLE = (
    *("meta", "sections", "fields", "records", "links", "media", "media_files", "media_parts"),
    *("audit", "conversations", "external_ids", "plans", "id_marks", "answer_ledger"),
    *("tainted_shingles", "index_chunks", "index_vectors", "index_records", "index_state"),
    "_migrations",
)
"""Tables a reader may read (``archive_secrets`` and ``archive_copy`` aside)."""
WRITABLE = [t for t in READABLE if t not in ("audit", "_migrations")]
"""Tables a writer may change (the audit log only gains rows)."""
SEQUENCES = ("media_id_seq", "audit_id_seq", "index_chunks_id_seq")


@dataclass(frozen=True)
class GroupRoles:
    """The archive's three group roles."""

    reader: str
    restricted: str
    writer: str


def group_roles(database: str) -> GroupRoles:
    """The group roles of the archive in ``database`` (its name lowercased, other characters
    than letters, digits and ``_`` as ``_``, at most 40 characters)."""
    stem = re.sub(r"[^a-z0-9_]", "_", database.lower())[:40] or "arxiu"
    return GroupRoles(f"{stem}_reader", f"{stem}_restricted", f"{stem}_writer")


_POLICIES = {
    "records": "NOT coalesce(restricted, "
    "(SELECT s.restricted FROM sections s WHERE s.tipo = section_tipo), false)",
    "index_chunks": "NOT coalesce(restricted, "
    "(SELECT s.restricted FROM sections s WHERE s.tipo = section_tipo), false)",
    "links": "NOT (arxiu_is_restricted(from_section, from_id) "
    "OR arxiu_is_restricted(to_section, to_id))",
    "media": "NOT arxiu_is_restricted(section_tipo, section_id)",
    "media_files": "EXISTS (SELECT 1 FROM media m "
    "WHERE m.path = media_files.path OR m.thumbnail = media_files.path)",
    "media_parts": "EXISTS (SELECT 1 FROM media_files f WHERE f.path = media_parts.path)",
    "index_vectors": "EXISTS (SELECT 1 FROM index_chunks c "
    "WHERE c.content_hash = index_vectors.content_hash)",
    "plans": "NOT restricted_text",
}
"""Per table, which rows a role without the restricted right sees (and may write)."""

_FUNCTIONS = """
CREATE FUNCTION arxiu_may_read_restricted() RETURNS boolean LANGUAGE sql STABLE
    AS $$ SELECT pg_has_role(current_user, {restricted}, 'MEMBER') $$;
CREATE FUNCTION arxiu_is_restricted(tipo text, id bigint) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce(
        (SELECT r.restricted FROM records r WHERE r.section_tipo = $1 AND r.section_id = $2),
        (SELECT s.restricted FROM sections s WHERE s.tipo = $1),
        false) $$;
REVOKE ALL ON FUNCTION arxiu_is_restricted(text, bigint) FROM PUBLIC
"""
"""Whether the current role may read restricted rows; whether a record is restricted (run as
the owner, so a policy can ask about a record the caller cannot see)."""


_CONVERSATION_SQL = f"""
CREATE OR REPLACE FUNCTION arxiu_archive_owner() RETURNS text LANGUAGE sql STABLE
    AS $$ SELECT pg_get_userbyid(relowner)::text FROM pg_class
          WHERE oid = 'public.conversations'::regclass $$;
ALTER TABLE conversations ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS conversations_restricted_rows ON conversations;
DROP POLICY IF EXISTS conversations_own_rows ON conversations;
CREATE POLICY conversations_own_rows ON conversations
    USING ({OWN_CONVERSATIONS}) WITH CHECK ({OWN_CONVERSATIONS})
"""
"""Each archivist's own conversations (idempotent: it also upgrades an archive made when every
conversation was hidden from the roles without the restricted right)."""
CONVERSATION_OWNER_STEP = "pg_0004_conversation_owner"
"""The ``_migrations`` row of the conversations' owner column and policy."""


def _execute(conn: Conn, statement: sql.Composed | str) -> None:
    conn.execute(statement if isinstance(statement, sql.Composed) else statement.encode())


def create_roles(conn: Conn, database: str) -> GroupRoles:
    """Create the group roles where missing, and their privileges on this database."""
    roles = group_roles(database)
    for name in (roles.reader, roles.restricted, roles.writer):
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        if exists is None:
            _execute(conn, sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(name)))
    reader, writer = sql.Identifier(roles.reader), sql.Identifier(roles.writer)
    db = sql.Identifier(database)
    for statement in (
        sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(db),
        sql.SQL("GRANT CONNECT, TEMPORARY ON DATABASE {} TO {}").format(db, reader),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(reader),
        sql.SQL("GRANT SELECT ON {} TO {}").format(_tables(READABLE), reader),
        sql.SQL("GRANT INSERT, UPDATE, DELETE ON {} TO {}").format(_tables(WRITABLE), writer),
        sql.SQL("GRANT INSERT ON audit TO {}").format(writer),
        sql.SQL("GRANT SELECT ON archive_secrets TO {}").format(writer),
        sql.SQL("GRANT USAGE ON SEQUENCE {} TO {}").format(_tables(SEQUENCES), writer),
    ):
        _execute(conn, statement)
    return roles


def _tables(names: list[str] | tuple[str, ...]) -> sql.Composed:
    return sql.SQL(", ").join(sql.Identifier(n) for n in names)


def create_policies(conn: Conn, roles: GroupRoles) -> None:
    """The row-level security of the restricted rows (see the module's text)."""
    for statement in _FUNCTIONS.split(";\n"):
        _execute(conn, statement.strip().replace("{restricted}", _literal(roles.restricted)))
    _execute(
        conn,
        sql.SQL("GRANT EXECUTE ON FUNCTION arxiu_is_restricted(text, bigint) TO {}").format(
            sql.Identifier(roles.reader)
        ),
    )
    for table, visible in _POLICIES.items():
        name = sql.Identifier(table)
        _execute(conn, sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(name))
        rule = f"arxiu_may_read_restricted() OR ({visible})"
        _execute(
            conn,
            sql.SQL("CREATE POLICY {} ON {} USING ({}) WITH CHECK ({})").format(
                sql.Identifier(f"{table}_restricted_rows"), name, sql.SQL(rule), sql.SQL(rule)
            ),
        )
    _audit_policies(conn)
    own_conversations(conn, roles)


def own_conversations(conn: Conn, roles: GroupRoles) -> None:
    """Make conversations each archivist's own (``OWN_CONVERSATIONS``): the ``owner`` column
    where an older archive lacks it, the policy, the right of every archivist (a reader too)
    to keep their own, and the step's ``_migrations`` row."""
    conn.execute(
        b"ALTER TABLE conversations ADD COLUMN IF NOT EXISTS owner text DEFAULT current_user"
    )
    for statement in _CONVERSATION_SQL.split(";\n"):
        _execute(conn, statement.strip())
    _execute(
        conn,
        sql.SQL("GRANT INSERT, UPDATE, DELETE ON conversations TO {}").format(
            sql.Identifier(roles.reader)
        ),
    )
    conn.execute(
        "INSERT INTO _migrations(name) VALUES (%s) ON CONFLICT DO NOTHING",
        (CONVERSATION_OWNER_STEP,),
    )


def has_own_conversations(conn: Conn) -> bool:
    """Whether the archive's conversations are already each archivist's own."""
    row = conn.execute(
        "SELECT 1 FROM _migrations WHERE name = %s", (CONVERSATION_OWNER_STEP,)
    ).fetchone()
    return row is not None


def _literal(text: str) -> str:
    """A SQL string literal of a role name (made of letters, digits and ``_``)."""
    if not re.fullmatch(r"[a-z0-9_]+", text):
        raise ValueError(f"not a role name: {text!r}")
    return f"'{text}'"


def _audit_policies(conn: Conn) -> None:
    """Audit rows about a restricted record are hidden like it; any writer may append."""
    conn.execute(b"ALTER TABLE audit ENABLE ROW LEVEL SECURITY")
    conn.execute(
        b"CREATE POLICY audit_restricted_rows ON audit FOR SELECT USING ("
        b"arxiu_may_read_restricted() OR section_tipo IS NULL "
        b"OR NOT arxiu_is_restricted(section_tipo, section_id))"
    )
    conn.execute(b"CREATE POLICY audit_append ON audit FOR INSERT WITH CHECK (true)")


@dataclass(frozen=True)
class Grant:
    """What ``arxiu archive grant`` gave a role (or ``revoke`` left it)."""

    role: str
    reader: bool
    restricted: bool
    writer: bool


def _role_exists(conn: Conn, role: str) -> None:
    row = conn.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if row is None:
        raise ArchiveError(
            "archive.pg_role_unknown",
            Phrase.of("There is no role {role!r} on the server.", role=role),
            hint=Phrase.of("Create it first: CREATE ROLE {role} LOGIN PASSWORD '...';", role=role),
            category="input",
        )


def grant(
    conn: Conn, database: str, role: str, *, restricted: bool = False, write: bool = False
) -> Grant:
    """Make ``role`` an archivist of the archive: a reader, with ``restricted`` the restricted
    right, with ``write`` the write right (rights it had stay; :func:`revoke` takes them).

    Raises:
        ArchiveError: ``archive.pg_role_unknown`` when the role does not exist.
    """
    _role_exists(conn, role)
    roles = group_roles(database)
    wanted = [roles.reader] + [roles.restricted] * restricted + [roles.writer] * write
    for group in wanted:
        _execute(
            conn, sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(role))
        )
    return rights(conn, database, role)


def revoke(
    conn: Conn, database: str, role: str, *, restricted: bool = False, write: bool = False
) -> Grant:
    """Take rights from ``role``: with neither flag every right (it is no archivist any more),
    else only the restricted right and/or the write right."""
    _role_exists(conn, role)
    roles = group_roles(database)
    if restricted or write:
        taken = [roles.restricted] * restricted + [roles.writer] * write
    else:
        taken = [roles.reader, roles.restricted, roles.writer]
    for group in taken:
        _execute(
            conn, sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(group), sql.Identifier(role))
        )
    return rights(conn, database, role)


def rights(conn: Conn, database: str, role: str) -> Grant:
    """Which of the archive's group roles ``role`` is a direct member of."""
    roles = group_roles(database)
    rows = conn.execute(
        "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
        "JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = %s",
        (role,),
    ).fetchall()
    groups = {str(r[0]) for r in rows}
    return Grant(role, roles.reader in groups, roles.restricted in groups, roles.writer in groups)
