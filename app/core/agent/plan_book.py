"""The plan book: every proposed plan and its one status, in the archive's ``plans`` table.

A plan is *pending* until a person applies or declines it, or a new message in its
conversation supersedes it. Claiming a resolution is one conditional ``UPDATE ... WHERE status
= 'pending'`` inside ``BEGIN IMMEDIATE``, so at most one resolution takes effect, across threads
and processes alike. An approved plan is *applying* until its apply ends (*applied* or
*failed*); the claim records which process applies it, so a plan left *applying* by a process
that is gone (killed mid-apply) is known to be interrupted and may be claimed again to resume.

Each plan records who proposed it (an API user's name, or :data:`LOCAL_PERSON` for the CLI and
the app; a plan recorded before owners were kept is the local person's): claiming or
superseding another person's plan answers exactly as an unknown id does. The hash a client sees
is the plan's *bound* hash (:mod:`app.core.archive.plan_seal`), never its plain content hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.core.agent.plan_types import (
    ApplyReport,
    ChangePlan,
    PlanRecord,
    PlanState,
    PlanStatus,
    plan_status,
)
from app.core.agent.plans import plan_hash as content_hash
from app.core.archive.plan_seal import plan_key, seal
from app.core.errors import ArxiuError, ToolError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.engine import Connection, Row
    from app.core.archive.store import Archive

psutil: Any = importlib.import_module("psutil")  # no type stubs
_CONTENT_KEYS = ("plan_version", "summary", "ops")
_ACTIVE: set[str] = set()
"""Plans this process is applying right now."""
_ACTIVE_LOCK = threading.Lock()
_TOKEN: dict[int, str] = {}
LOCAL_PERSON = ":local"
"""Who proposes in the CLI and the app (API user names cannot contain ``:``)."""
_OWNED = "COALESCE(proposer, ?) = ?"
"""SQL: the plan is this person's (bind :func:`_owner_args`)."""


def _owner_args(person: str) -> tuple[str, str]:
    return LOCAL_PERSON, person


def owned_by(record: PlanRecord, person: str) -> bool:
    """Whether ``person`` proposed ``record`` (a plan with no proposer is the local person's)."""
    return (record.proposer or LOCAL_PERSON) == person


def _process_token() -> str:
    """A random token for this process (a forked child gets its own)."""
    return _TOKEN.setdefault(os.getpid(), uuid.uuid4().hex)


def _now() -> str:
    """UTC ISO 8601 to the microsecond: plans proposed in one second keep their order on a
    server too (SQLite has its ``rowid`` as well)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _owner() -> str:
    """This process: host, pid, start time and a random token (pid reuse cannot fool it)."""
    started = psutil.Process().create_time()
    return f"{socket.gethostname()}|{os.getpid()}|{started:.3f}|{_process_token()}"


def owner_alive(owner: str | None, plan_id: str) -> bool:
    """Whether the process named by ``owner`` may still be applying plan ``plan_id``.

    A process on another host cannot be checked and counts as alive (never a double apply).
    """
    if not owner:
        return False
    parts = owner.split("|")
    if len(parts) != 4:
        return False
    host, pid_text, started, token = parts
    if host != socket.gethostname():
        return True
    if token == _process_token():
        with _ACTIVE_LOCK:
            return plan_id in _ACTIVE
    try:
        process = psutil.Process(int(pid_text))
        return f"{process.create_time():.3f}" == started and process.status() != "zombie"
    except (psutil.Error, ValueError):
        return False


@dataclass(frozen=True)
class NewPlan:
    """What :meth:`PlanBook.add` records for a newly proposed plan."""

    plan: ChangePlan
    conversation_id: str | None
    model_id: str
    egress: str
    tainted: bool = False
    restricted_text: bool = False
    """Tainted and writing into an open section: needs a second, explicit confirmation."""
    proposer: str = LOCAL_PERSON


@dataclass(frozen=True)
class Claim:
    """A resolution taken: the plan's record now, and whether it resumes an interrupted apply."""

    record: PlanRecord
    resumed: bool = False


def _unknown() -> ToolError:
    return ToolError(
        "mcp.plan_unknown", "There is no pending change plan with that id.", category="input"
    )


def _resolved(status: str) -> ToolError:
    return ToolError(
        "mcp.plan_resolved",
        Phrase.of("This change plan was already resolved ({status}).", status=status),
        hint="Ask again to get a new plan.",
        category="conflict",
        details={"status": status},
    )


PlanListener = Callable[[PlanState], None]
"""Told each status change of a plan, on the thread of the coroutine that made it."""


class PlanBook:
    """The plans of one archive, by id.

    Every method reads on a read thread or writes on the writer thread
    (:meth:`~app.core.archive.database.Database.aread` and ``awrite``), so the event loop that
    awaits it (the GUI's) goes on meanwhile; there is no blocking twin. Each status change it
    makes is announced to the listeners of :meth:`listen` once its write has committed.
    """

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self._listeners: list[PlanListener] = []

    # -- listening ---------------------------------------------------------------------------
    def listen(self, listener: PlanListener) -> Callable[[], None]:
        """Tell ``listener`` every status change this book makes from now on (applying,
        applied, failed, declined, superseded); returns what stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def announce(self, state: PlanState) -> None:
        """Tell the listeners ``state`` (the plan desk announces what it learned elsewhere)."""
        for listener in list(self._listeners):
            listener(state)

    def _announce_all(self, plan_ids: Sequence[str], status: PlanStatus) -> None:
        for plan_id in plan_ids:
            self.announce(PlanState(plan_id, status))

    # -- reading -----------------------------------------------------------------------------
    async def get(self, plan_id: str) -> PlanRecord | None:
        """The plan ``plan_id`` with its status, if the book has it."""
        return await self.archive.db.aread(lambda conn: self._get_in(conn, plan_id))

    def _get_in(self, conn: Connection, plan_id: str) -> PlanRecord | None:
        row = conn.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
        return self._record(row) if row else None

    async def by_bound_hash(self, bound_hash: str, person: str) -> PlanRecord | None:
        """The plan of ``person`` whose bound hash is ``bound_hash``."""

        def find(conn: Connection) -> PlanRecord | None:
            row = conn.execute(
                f"SELECT * FROM plans WHERE bound_hash = ? AND {_OWNED}",
                (bound_hash, *_owner_args(person)),
            ).fetchone()
            return self._record(row) if row else None

        return await self.archive.db.aread(find)

    async def in_conversation(self, conversation_id: str) -> list[PlanRecord]:
        """The plans proposed in a conversation, oldest first."""

        order = "rowid" if self.archive.db.dialect == "sqlite" else "id"

        def find(conn: Connection) -> list[PlanRecord]:
            rows = conn.execute(
                f"SELECT * FROM plans WHERE conversation_id = ? ORDER BY created_at, {order}",
                (conversation_id,),
            ).fetchall()
            return [self._record(row) for row in rows]

        return await self.archive.db.aread(find)

    def _record(self, row: Row) -> PlanRecord:
        report = json.loads(row["report"]) if row["report"] else None
        bound = str(row["bound_hash"] or "")  # the hash clients see, never the content hash
        stored = {**json.loads(row["plan"]), "plan_hash": bound, "pending_id": row["id"]}
        status = str(row["status"])
        return PlanRecord(
            id=str(row["id"]),
            plan=ChangePlan.from_dict(stored),
            conversation_id=row["conversation_id"],
            model_id=str(row["model_id"] or ""),
            egress=str(row["egress"] or "local"),
            status=plan_status(status),
            tainted=bool(row["tainted"]),
            restricted_text=bool(row["restricted_text"]),
            report=ApplyReport.from_dict(report) if isinstance(report, dict) else None,
            interrupted=status == "applying" and not owner_alive(row["owner"], row["id"]),
            proposer=None if row["proposer"] is None else str(row["proposer"]),
        )

    # -- writing -----------------------------------------------------------------------------
    async def add(self, entry: NewPlan) -> PlanRecord:
        """Record a newly proposed plan (superseding the pending one its proposer had in the
        conversation)."""
        superseded: list[str] = []
        record = await self.archive.db.awrite(lambda conn: self._add_in(conn, entry, superseded))
        self._announce_all(superseded, "superseded")
        return record

    def _add_in(self, conn: Connection, entry: NewPlan, superseded: list[str]) -> PlanRecord:
        plan_id = uuid.uuid4().hex
        body = {k: v for k, v in entry.plan.to_dict().items() if k in _CONTENT_KEYS}
        content = content_hash(body)
        if entry.conversation_id is not None:
            superseded += _set_where(
                conn, "superseded", entry.proposer, "conversation_id = ?", entry.conversation_id
            )
        stamp = _now()
        conn.execute(
            "INSERT INTO plans(id, plan_hash, plan, conversation_id, model_id, egress, "
            "tainted, restricted_text, status, created_at, updated_at, proposer, bound_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
            (
                plan_id,
                content,
                json.dumps({**body, "plan_hash": content}, ensure_ascii=False),
                entry.conversation_id,
                entry.model_id,
                entry.egress,
                bool(entry.tainted),
                bool(entry.restricted_text),
                stamp,
                stamp,
                entry.proposer,
                seal(plan_key(conn), plan_id, content),
            ),
        )
        found = self._get_in(conn, plan_id)
        assert found is not None
        return found

    async def claim(
        self,
        plan_id: str,
        approved: bool,
        *,
        status: PlanStatus = "declined",
        person: str = LOCAL_PERSON,
    ) -> Claim:
        """Take the one resolution of ``person``'s plan ``plan_id``: ``applying`` when approved,
        else ``status``; one conditional update inside ``BEGIN IMMEDIATE`` on the writer thread
        (at most one resolution across processes).

        An approved claim of a plan left ``applying`` by a process that is gone resumes it. It
        also marks the plan as being applied by this process in the same step on the writer
        thread, so a second resolution of this process, queued right after, finds it held (not
        interrupted) even before the caller resumes; the caller then applies it inside
        :meth:`applying`, which clears the mark. A claim whose caller is cancelled clears the
        mark after it commits (the plan is then interrupted, and may be resumed).

        Raises:
            ToolError: ``mcp.plan_unknown`` (also for another person's plan) or
                ``mcp.plan_resolved``.
        """
        marked: list[str] = []
        try:
            claim = await self.archive.db.awrite(
                lambda conn: self._claim_in(conn, plan_id, approved, status, marked, person)
            )
        except asyncio.CancelledError:
            with contextlib.suppress(ArxiuError):  # after the claim, in the writer's order
                self.archive.db.submit(lambda conn: _release(marked))
            raise
        except BaseException:
            _release(marked)  # the claim did not take effect (its commit failed)
            raise
        self.announce(claim.record.state)
        return claim

    def _claim_in(
        self,
        conn: Connection,
        plan_id: str,
        approved: bool,
        status: PlanStatus,
        marked: list[str],
        person: str = LOCAL_PERSON,
    ) -> Claim:
        owner = _owner()
        row = conn.execute(
            f"SELECT status, owner FROM plans WHERE id = ? AND {_OWNED}",
            (plan_id, *_owner_args(person)),
        ).fetchone()
        if row is None:  # unknown, or another person's: the same answer
            raise _unknown()
        current, holder = str(row[0]), row[1]
        resumed = current == "applying" and approved and not owner_alive(holder, plan_id)
        if resumed:
            _update(
                conn,
                plan_id,
                "applying",
                owner,
                "status = 'applying' AND owner IS NOT DISTINCT FROM ?",
                holder,
            )
        elif not _update(
            conn, plan_id, "applying" if approved else status, owner, "status = 'pending'"
        ):
            raise _resolved(current)
        if approved:  # this claim holds it: only it clears the mark
            with _ACTIVE_LOCK:
                _ACTIVE.add(plan_id)
            marked.append(plan_id)
        record = self._get_in(conn, plan_id)
        assert record is not None
        return Claim(record, resumed)

    async def finish(
        self, plan_id: str, status: PlanStatus, report: ApplyReport | None
    ) -> PlanRecord:
        """Record how an approved plan's apply ended (``applied`` or ``failed``)."""
        record = await self.archive.db.awrite(
            lambda conn: self._finish_in(conn, plan_id, status, report)
        )
        self.announce(record.state)
        return record

    def _finish_in(
        self, conn: Connection, plan_id: str, status: PlanStatus, report: ApplyReport | None
    ) -> PlanRecord:
        text = json.dumps(report.to_dict(), ensure_ascii=False) if report else None
        conn.execute(
            "UPDATE plans SET status = ?, report = ?, owner = NULL, updated_at = ? "
            "WHERE id = ? AND status = 'applying'",
            (status, text, _now(), plan_id),
        )
        record = self._get_in(conn, plan_id)
        assert record is not None
        return record

    async def supersede(self, conversation_id: str, person: str = LOCAL_PERSON) -> int:
        """Implicitly decline every pending plan of ``person`` in a conversation; how many."""
        superseded = await self.archive.db.awrite(
            lambda conn: _set_where(
                conn, "superseded", person, "conversation_id = ?", conversation_id
            )
        )
        self._announce_all(superseded, "superseded")
        return len(superseded)

    async def supersede_id(self, plan_id: str, person: str = LOCAL_PERSON) -> bool:
        """Implicitly decline one pending plan of ``person`` (another person's is left as it
        is); whether it was pending."""
        superseded = await self.archive.db.awrite(
            lambda conn: _set_where(conn, "superseded", person, "id = ?", plan_id)
        )
        self._announce_all(superseded, "superseded")
        return bool(superseded)

    @contextlib.contextmanager
    def applying(self, plan_id: str) -> Iterator[None]:
        """Mark ``plan_id`` as being applied by this process while the block runs."""
        with _ACTIVE_LOCK:
            _ACTIVE.add(plan_id)
        try:
            yield
        finally:
            with _ACTIVE_LOCK:
                _ACTIVE.discard(plan_id)


def _update(
    conn: Connection, plan_id: str, status: str, owner: str, where: str, *extra: Any
) -> bool:
    cursor = conn.execute(
        f"UPDATE plans SET status = ?, owner = ?, updated_at = ? WHERE id = ? AND {where}",
        (status, owner if status == "applying" else None, _now(), plan_id, *extra),
    )
    return cursor.rowcount == 1


def _release(plan_ids: list[str]) -> None:
    with _ACTIVE_LOCK:
        _ACTIVE.difference_update(plan_ids)


def _set_where(conn: Connection, status: str, person: str, where: str, value: str) -> list[str]:
    """Set ``status`` on this person's pending plans matching ``where``; their ids."""
    rows = conn.execute(
        "UPDATE plans SET status = ?, updated_at = ? "
        f"WHERE status = 'pending' AND {_OWNED} AND {where} RETURNING id",
        (status, _now(), *_owner_args(person), value),
    ).fetchall()
    return [str(row[0]) for row in rows]
