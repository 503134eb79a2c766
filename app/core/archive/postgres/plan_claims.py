"""A plan claimed once on a shared PostgreSQL archive, by any number of processes and machines.

The statuses are the SQLite plan book's (``app/core/agent/plan_book.py``): a plan is *pending*
until it is claimed to be applied (*applying*, with the claiming process as its ``owner``) or
declined (*declined*, *superseded*); an apply ends *applied* or *failed*, and clears the owner.

Claiming is one conditional ``UPDATE plans SET status = 'applying' ... WHERE id = %s AND status
= 'pending' RETURNING id``, not ``SELECT ... FOR UPDATE SKIP LOCKED``. Under PostgreSQL's READ
COMMITTED a second ``UPDATE`` of the same row waits for the first one's transaction and then
checks its ``WHERE`` again on the row as that transaction left it: if the first committed, the
plan is no longer pending and the second claims nothing; if the first rolled back, the second
claims it. So the answer is always true once the claimer's transaction ends. ``SKIP LOCKED`` is
for a queue, where a worker takes *any* free row and skipping a busy one is right; for one named
plan it would answer "taken" while the first claimer may still roll back, and then nobody would
apply the plan. Row-level security applies as to every statement: a role without the restricted
right cannot see, and so cannot claim, a plan marked ``restricted_text``.

Each function runs in the caller's transaction when one is open (as a savepoint) and otherwise
in its own, committed before it returns (psycopg's ``Connection.transaction``): a claim only
counts once it is committed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from app.core.archive.postgres.connect import Conn
from app.core.errors import ArchiveError
from app.core.json_types import JsonObject
from app.core.phrases import Phrase

EndStatus = Literal["applied", "failed", "declined", "superseded"]
"""How a plan's life ends (the plan book's statuses other than *pending* and *applying*)."""
APPLY_ENDS: tuple[EndStatus, ...] = ("applied", "failed")
"""The end of an apply: from *applying*, by the process that claimed it."""
DECLINE_ENDS: tuple[EndStatus, ...] = ("declined", "superseded")
"""A plan refused before any apply: from *pending*."""
STATUSES = ("pending", "applying", *APPLY_ENDS, *DECLINE_ENDS)
"""Every status, as ``app.core.agent.plan_types.PLAN_STATUSES`` has them."""


def claim(conn: Conn, plan_id: str, owner: str) -> bool:
    """Move the pending plan ``plan_id`` to *applying*, held by ``owner`` (the claiming
    process); whether this call took it. Of any number of concurrent claims, across
    processes, exactly one that commits gets ``True``; an unknown plan, one already resolved,
    or one hidden from this role by row-level security gives ``False``.

    Raises:
        ArchiveError: ``archive.plan_owner_invalid`` for an empty ``owner``.
    """
    _check_owner(owner)
    with conn.transaction():
        row = conn.execute(
            "UPDATE plans SET status = 'applying', owner = %s, updated_at = now() "
            "WHERE id = %s AND status = 'pending' RETURNING id",
            (owner, plan_id),
        ).fetchone()
    return row is not None


def take_over(conn: Conn, plan_id: str, owner: str, gone_owner: str) -> bool:
    """Claim a plan left *applying* by ``gone_owner``, a process known to be gone (killed
    mid-apply), for ``owner`` to resume it; whether this call took it. The same conditional
    update as :func:`claim` (``WHERE status = 'applying' AND owner = gone_owner``), so of two
    processes resuming it one gets ``True``. Whether ``gone_owner`` is really gone is the
    caller's judgement (``app.core.agent.plan_book.owner_alive``).

    Raises:
        ArchiveError: ``archive.plan_owner_invalid`` for an empty ``owner`` or ``gone_owner``.
    """
    _check_owner(owner)
    _check_owner(gone_owner)
    with conn.transaction():
        row = conn.execute(
            "UPDATE plans SET owner = %s, updated_at = now() "
            "WHERE id = %s AND status = 'applying' AND owner = %s RETURNING id",
            (owner, plan_id, gone_owner),
        ).fetchone()
    return row is not None


def resolve(
    conn: Conn,
    plan_id: str,
    status: EndStatus,
    *,
    owner: str | None = None,
    report: JsonObject | None = None,
) -> bool:
    """Give plan ``plan_id`` its end ``status``; whether this call did.

    *applied* and *failed* end an apply: only from *applying* and only by its ``owner`` (the
    claimer), with the apply's ``report`` (``ApplyReport.to_dict()``, kept as JSON text, as
    on SQLite); the owner is cleared.
    *declined* and *superseded* only from *pending* (no owner). Anything else changes nothing
    and gives ``False``: the plan is unknown, hidden, already ended, or held by another owner.

    Raises:
        ArchiveError: ``archive.plan_status_invalid`` for a status that is not an end, or
            ``archive.plan_owner_invalid`` for an apply's end without its owner.
    """
    if status in APPLY_ENDS:
        if owner is None:
            raise _owner_invalid(Phrase.of("the end of an apply needs the owner that claimed it"))
        _check_owner(owner)
        query = (
            "UPDATE plans SET status = %s, report = %s, owner = NULL, updated_at = now() "
            "WHERE id = %s AND status = 'applying' AND owner = %s RETURNING id"
        )
        text = None if report is None else json.dumps(report, ensure_ascii=False)
        args: tuple[object, ...] = (status, text, plan_id, owner)
    elif status in DECLINE_ENDS:
        query = (
            "UPDATE plans SET status = %s, updated_at = now() "
            "WHERE id = %s AND status = 'pending' RETURNING id"
        )
        args = (status, plan_id)
    else:
        raise ArchiveError(
            "archive.plan_status_invalid",
            Phrase.of("{status!r} is not how a plan ends.", status=status),
            hint=Phrase.of("Use one of: {ends}.", ends=", ".join(APPLY_ENDS + DECLINE_ENDS)),
            category="input",
        )
    with conn.transaction():
        row = conn.execute(query, args).fetchone()
    return row is not None


@dataclass(frozen=True)
class PlanHold:
    """A plan's status and who holds it (the owner of an *applying* plan, else ``None``)."""

    status: str
    owner: str | None


def plan_hold(conn: Conn, plan_id: str) -> PlanHold | None:
    """The plan's status and owner as this role sees them (``None``: unknown or hidden)."""
    row = conn.execute("SELECT status, owner FROM plans WHERE id = %s", (plan_id,)).fetchone()
    if row is None:
        return None
    return PlanHold(str(row[0]), None if row[1] is None else str(row[1]))


def _check_owner(owner: str) -> None:
    if not owner.strip():
        raise _owner_invalid(Phrase.of("the owner is empty"))


def _owner_invalid(why: Phrase) -> ArchiveError:
    return ArchiveError(
        "archive.plan_owner_invalid",
        Phrase.of("A plan's claim needs the process that holds it: {why}.", why=why),
        hint="Pass the owner string of the claiming process (host|pid|start|token).",
        category="input",
    )
