"""Child processes for the shared-archive tests (plan claims, record changes) and an empty
archive schema to run them on.

The children run in a ``forkserver`` context that preloads this module (``spawn`` where there
is no forkserver), so each starts from an interpreter that has already imported psycopg and
the archive's PostgreSQL modules; each opens its own connections.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

from app.core.archive.postgres.connect import connect, database_name, ensure_vector
from app.core.archive.postgres.plan_claims import claim, take_over
from app.core.archive.postgres.record_changes import RecordChangeListener
from app.core.archive.postgres.roles import create_policies, create_roles
from app.core.archive.postgres.schema import create_tables

HOLD_S = 0.05
"""How long a child that won a claim keeps its transaction open in the holding rounds."""


def context() -> Any:
    """The multiprocessing context the tests use."""
    if "forkserver" not in mp.get_all_start_methods():  # Windows
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def make_schema(url: str) -> None:
    """The archive's schema, roles and policies in the empty database ``url`` (as the copy
    makes them)."""
    with connect(url, vector=False) as conn, conn.transaction():
        ensure_vector(conn)
        create_tables(conn)
        create_policies(conn, create_roles(conn, database_name(url)))


def add_plan(url: str, plan_id: str, *, status: str = "pending", owner: str | None = None,
             restricted_text: bool = False) -> None:  # fmt: skip
    """A plan row as the plan book writes one."""
    with connect(url, vector=False) as conn:
        conn.execute(
            "INSERT INTO plans(id, plan_hash, plan, status, owner, restricted_text, "
            "created_at, updated_at) VALUES (%s, 'h', '{}', %s, %s, %s, now(), now())",
            (plan_id, status, owner, restricted_text),
        )
        conn.commit()


def claim_rounds(
    url: str, plan_ids: list[str], owner: str, mode: str, barrier: Any, results: Any
) -> None:
    """For each plan, wait for every child at the barrier, then claim it at once with the
    others (``mode``: ``claim``, or ``take_over`` from the owner ``gone``); every fifth round a
    winner holds its transaction open :data:`HOLD_S` before committing, so the others wait on
    its row lock. Puts ``(plan_id, owner, won)`` on ``results``."""
    with connect(url, vector=False) as conn:
        for number, plan_id in enumerate(plan_ids):
            barrier.wait(timeout=60)
            with conn.transaction():
                if mode == "claim":
                    won = claim(conn, plan_id, owner)
                else:
                    won = take_over(conn, plan_id, owner, "gone")
                if won and number % 5 == 0:
                    time.sleep(HOLD_S)
            results.put((plan_id, owner, won))


def claim_and_hold(url: str, plan_id: str, owner: str, commit: bool, events: Any) -> None:
    """Claim ``plan_id`` inside a transaction, say so, hold it 0.5 s, then commit or roll
    back."""
    with connect(url, vector=False) as conn:
        conn.execute("SELECT 1")  # psycopg opens the transaction: the claim is a savepoint
        won = claim(conn, plan_id, owner)
        events.put(("held", won))
        time.sleep(0.5)
        if commit:
            conn.commit()
        else:
            conn.rollback()
        events.put(("ended", commit))


def listen(url: str, rounds: int, timeout_s: float, ready: Any, heard: Any) -> None:
    """Listen on ``url``; set ``ready``; put ``(payload, section_id, received_at)`` for each
    of ``rounds`` changes (``None`` when one does not come within ``timeout_s``)."""
    with RecordChangeListener(url) as listener:
        ready.set()
        for _ in range(rounds):
            got = list(listener.changes(timeout=timeout_s, stop_after=1))
            at = time.time()
            heard.put((got[0].payload(), got[0].section_id, at) if got else None)
