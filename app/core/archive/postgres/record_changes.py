"""Record changes announced by the server: a trigger that ``NOTIFY``s, a listener that hears it.

Every committed insert, update and delete of a ``records`` row sends one notification on the
channel ``arxiu_records`` with the payload ``<section_tipo>:<section_id>:<op>`` (``op``:
``insert``, ``update``, ``delete``); every change of a ``links`` row sends ``...:link`` for
both of its records (a record view shows the links to it as well as its own). PostgreSQL sends
a notification only when its transaction commits (a rolled-back change sends nothing), and a
payload repeated in one transaction once, so a window that refreshes on them re-reads what
changed, within milliseconds, without polling.

What a payload may reveal: *keys, never values*. No field value, label or flag travels in a
notification. And any role that may connect can ``LISTEN`` on any channel (PostgreSQL has no
right for it, and row-level security does not apply to notifications), so a change to a
restricted record (its own flag, else its section's, as the egress gate reads it; before or
after the change) withholds its id too: the payload is ``<section_tipo>::<op>``. A role without
the restricted right then learns only that some restricted record of a section it already
knows changed, and when (the ``sections`` table, which every reader reads, says which sections
are restricted); a window with the right re-reads what it shows of that section. A link's end
whose record is not found (deleted in the same transaction) is withheld the same way, and a
link with one restricted end withholds the ids of both ends (else the open end's id would tell
that a hidden record links to it). Because any connected role may also ``NOTIFY`` on the
channel, a notification is only a reason to re-read, never data: the listener drops payloads
that are not of this form.

The trigger functions are ``SECURITY DEFINER`` (they run as the archive's owner, whom row-level
security does not limit), so whether a record is restricted is judged on the rows themselves,
not on what the writing role sees. :func:`ensure_record_changes` installs them with
``CREATE OR REPLACE`` and replaces the triggers, so it is safe to run on every open of an
archive made before them (as the owner); :func:`app.core.archive.postgres.schema.create_tables`
runs it for a new archive.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, cast

import psycopg

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn, connect, first_line, redact, translate
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

CHANNEL = "arxiu_records"
"""The notification channel of record changes."""
MIGRATION_NAME = "pg_0002_record_changes"
"""The ``_migrations`` name recorded once the triggers are installed."""

ChangeOp = Literal["insert", "update", "delete", "link"]
OPS: tuple[ChangeOp, ...] = ("insert", "update", "delete", "link")

TRIGGER_STATEMENTS: tuple[str, ...] = (
    """
CREATE OR REPLACE FUNCTION arxiu_record_hidden(tipo text, flag boolean) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce($2, (SELECT s.restricted FROM sections s WHERE s.tipo = $1), false) $$
""",
    """
CREATE OR REPLACE FUNCTION arxiu_notify_change(tipo text, id bigint, hidden boolean, op text)
    RETURNS void LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT pg_notify('arxiu_records',
        $1 || ':' || CASE WHEN $3 THEN '' ELSE $2::text END || ':' || $4) $$
""",
    """
CREATE OR REPLACE FUNCTION arxiu_link_end_hidden(end_tipo text, end_id bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    flag boolean;
BEGIN
    SELECT r.restricted INTO flag FROM records r
        WHERE r.section_tipo = end_tipo AND r.section_id = end_id;
    RETURN NOT FOUND OR arxiu_record_hidden(end_tipo, flag);
END
$$
""",
    """
CREATE OR REPLACE FUNCTION arxiu_notify_link(
    from_tipo text, from_id bigint, to_tipo text, to_id bigint) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    hidden boolean := arxiu_link_end_hidden(from_tipo, from_id)
        OR arxiu_link_end_hidden(to_tipo, to_id);
BEGIN
    PERFORM arxiu_notify_change(from_tipo, from_id, hidden, 'link');
    PERFORM arxiu_notify_change(to_tipo, to_id, hidden, 'link');
END
$$
""",
    """
CREATE OR REPLACE FUNCTION arxiu_records_notify() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    hidden boolean := false;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        hidden := arxiu_record_hidden(OLD.section_tipo, OLD.restricted);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        hidden := hidden OR arxiu_record_hidden(NEW.section_tipo, NEW.restricted);
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM arxiu_notify_change(OLD.section_tipo, OLD.section_id, hidden, 'delete');
    ELSIF TG_OP = 'UPDATE' AND (OLD.section_tipo, OLD.section_id)
            IS DISTINCT FROM (NEW.section_tipo, NEW.section_id) THEN
        PERFORM arxiu_notify_change(OLD.section_tipo, OLD.section_id, hidden, 'delete');
        PERFORM arxiu_notify_change(NEW.section_tipo, NEW.section_id, hidden, 'insert');
    ELSE
        PERFORM arxiu_notify_change(NEW.section_tipo, NEW.section_id, hidden, lower(TG_OP));
    END IF;
    RETURN NULL;
END
$$
""",
    """
CREATE OR REPLACE FUNCTION arxiu_links_notify() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM arxiu_notify_link(OLD.from_section, OLD.from_id, OLD.to_section, OLD.to_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM arxiu_notify_link(NEW.from_section, NEW.from_id, NEW.to_section, NEW.to_id);
    END IF;
    RETURN NULL;
END
$$
""",
    """
REVOKE ALL ON FUNCTION arxiu_notify_change(text, bigint, boolean, text) FROM PUBLIC
""",
    """
REVOKE ALL ON FUNCTION arxiu_link_end_hidden(text, bigint) FROM PUBLIC
""",
    """
REVOKE ALL ON FUNCTION arxiu_notify_link(text, bigint, text, bigint) FROM PUBLIC
""",
    """
REVOKE ALL ON FUNCTION arxiu_record_hidden(text, boolean) FROM PUBLIC
""",
    """
DROP TRIGGER IF EXISTS records_notify ON records
""",
    """
CREATE TRIGGER records_notify AFTER INSERT OR UPDATE OR DELETE ON records
    FOR EACH ROW EXECUTE FUNCTION arxiu_records_notify()
""",
    """
DROP TRIGGER IF EXISTS links_notify ON links
""",
    """
CREATE TRIGGER links_notify AFTER INSERT OR UPDATE OR DELETE ON links
    FOR EACH ROW EXECUTE FUNCTION arxiu_links_notify()
""",
)
"""The functions and triggers (``DROP TRIGGER IF EXISTS`` + ``CREATE TRIGGER`` rather than
``CREATE OR REPLACE TRIGGER``, which PostgreSQL 13 has not). Only the trigger functions may
call the helpers (they run as the owner)."""


def ensure_record_changes(conn: Conn) -> None:
    """Install (or refresh) the change triggers of ``records`` and ``links``, in the caller's
    transaction, and record :data:`MIGRATION_NAME` in ``_migrations``; needs the tables'
    owner. Safe to run again."""
    for statement in TRIGGER_STATEMENTS:
        conn.execute(statement.strip().encode())
    conn.execute(
        "INSERT INTO _migrations(name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
        (MIGRATION_NAME,),
    )


def has_record_changes(conn: Conn) -> bool:
    """Whether the archive's ``records`` table has the change trigger."""
    row = conn.execute(
        "SELECT 1 FROM pg_trigger WHERE tgname = 'records_notify' "
        "AND tgrelid = to_regclass('public.records')"
    ).fetchone()
    return row is not None


@dataclass(frozen=True)
class RecordChange:
    """One committed change of a record (or of a link of it), as a notification names it.

    ``section_id`` is ``None`` when the record is restricted (see the module's text): some
    restricted record of ``section_tipo`` changed. ``pid`` is the server process of the
    session that made the change (a window can tell its own writes by its connection's
    ``info.backend_pid``).
    """

    section_tipo: str
    section_id: int | None
    op: ChangeOp
    pid: int = 0

    @property
    def key(self) -> RecordKey | None:
        """The changed record's key, if the notification may name it."""
        return None if self.section_id is None else RecordKey(self.section_tipo, self.section_id)

    def payload(self) -> str:
        """The notification's payload (``oh1:7:update``; ``oh1::update`` when restricted)."""
        ident = "" if self.section_id is None else str(self.section_id)
        return f"{self.section_tipo}:{ident}:{self.op}"


def parse_change(payload: str, pid: int = 0) -> RecordChange:
    """A notification's payload as a :class:`RecordChange`.

    Raises:
        ArchiveError: ``archive.change_malformed`` for anything but
            ``<section_tipo>:<section_id or nothing>:<op>``.
    """
    parts = payload.rsplit(":", 2)
    if len(parts) == 3 and parts[0] and parts[2] in OPS:
        tipo, ident, op = parts
        if not ident or (ident.isascii() and ident.isdigit()):
            return RecordChange(tipo, int(ident) if ident else None, cast(ChangeOp, op), pid)
    raise ArchiveError(
        "archive.change_malformed",
        Phrase.of(
            "A notification on {channel} is not a record change: {payload!r}.",
            channel=CHANNEL,
            payload=payload[:80],
        ),
        hint="Something other than the archive's trigger sent it; it is ignored.",
        category="input",
    )


class RecordChangeListener:
    """``LISTEN arxiu_records`` on a connection of its own (autocommit: a notification is
    delivered only between transactions), and the changes heard as :class:`RecordChange`.

    Notifications that arrive while nobody iterates :meth:`changes` are kept by psycopg and
    returned by the next call, so none is lost between calls. A payload that is not a record
    change is dropped and counted in :attr:`dropped`. For an event loop, :meth:`fileno` is the
    socket to watch and :meth:`pending` drains what has arrived without waiting.

    Raises:
        ArchiveError: the connection's coded errors (:func:`connect`), and
            ``archive.pg_listen_lost`` (retryable) when the connection is lost while listening:
            changes made until a new listener listens are not heard, so re-read after it.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.dropped = 0
        self._heard: deque[RecordChange] = deque()
        self._conn = connect(url, vector=False, autocommit=True)
        try:
            self._conn.execute(f"LISTEN {CHANNEL}".encode())
        except psycopg.Error as exc:
            self._conn.close()
            raise translate(exc, url) from exc

    def changes(
        self, timeout: float | None = None, *, stop_after: int | None = None
    ) -> Iterator[RecordChange]:
        """The changes as they arrive, for at most ``timeout`` seconds (``None``: until
        ``stop_after`` changes, or forever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        heard = 0
        try:
            while True:
                while self._heard:
                    yield self._heard.popleft()
                    heard += 1
                    if stop_after is not None and heard >= stop_after:
                        return
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not self._receive(remaining) and remaining is not None and remaining <= 0:
                    return
        except psycopg.OperationalError as exc:
            raise ArchiveError(
                "archive.pg_listen_lost",
                Phrase.of(
                    "The connection that listens for changes to {where} was lost: {why}",
                    where=redact(self.url),
                    why=first_line(str(exc)),
                ),
                hint="Listen again, and re-read what is shown: changes made meanwhile were "
                "not heard.",
                retryable=True,
            ) from exc
        except psycopg.Error as exc:
            raise translate(exc, self.url) from exc

    def _receive(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` for notifications; keep every one of the first batch that
        comes (psycopg yields a whole packet at once: stopping inside it would lose the rest);
        whether any came."""
        notes = list(self._conn.notifies(timeout=timeout, stop_after=1))
        for note in notes:
            if note.channel != CHANNEL:
                continue
            try:
                self._heard.append(parse_change(note.payload, note.pid))
            except ArchiveError:
                self.dropped += 1
        return bool(notes)

    def pending(self) -> list[RecordChange]:
        """The changes that have arrived so far, without waiting."""
        return list(self.changes(timeout=0))

    def fileno(self) -> int:
        """The connection's socket (readable when a notification arrives)."""
        return self._conn.fileno()

    @property
    def backend_pid(self) -> int:
        """The server process of the listening connection."""
        return int(self._conn.info.backend_pid)

    def close(self) -> None:
        """Stop listening and close the connection."""
        self._conn.close()

    def __enter__(self) -> RecordChangeListener:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
