"""A plan claimed once on the real server, by several processes at once, many times over."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

import pytest

from app.core.agent.plan_types import PLAN_STATUSES
from app.core.archive.postgres.connect import connect, database_name
from app.core.archive.postgres.plan_claims import (
    STATUSES,
    PlanHold,
    claim,
    plan_hold,
    resolve,
    take_over,
)
from app.core.archive.postgres.roles import grant
from app.core.errors import ArchiveError
from app.core.json_types import JsonObject
from tests.core.archive.postgres import pg_children
from tests.postgres_server import PgServer

WORKERS = 4
ROUNDS = 150


@pytest.fixture
def archive(pg_database: str) -> str:
    """A fresh database with the archive's schema (its owner's URL)."""
    pg_children.make_schema(pg_database)
    return pg_database


@pytest.mark.parametrize("mode", ["claim", "take_over"])
def test_of_processes_claiming_one_plan_at_once_exactly_one_wins(archive: str, mode: str) -> None:
    plan_ids = [f"plan-{n}" for n in range(ROUNDS)]
    for plan_id in plan_ids:
        if mode == "claim":
            pg_children.add_plan(archive, plan_id)
        else:  # left applying by a process that is gone
            pg_children.add_plan(archive, plan_id, status="applying", owner="gone")
    ctx = pg_children.context()
    barrier, results = ctx.Barrier(WORKERS), ctx.Queue()
    owners = [f"host|{n}|0.000|token{n}" for n in range(WORKERS)]
    children = [
        ctx.Process(
            target=pg_children.claim_rounds,
            args=(archive, plan_ids, owner, mode, barrier, results),
        )
        for owner in owners
    ]
    started = time.monotonic()
    for child in children:
        child.start()
    answers = [results.get(timeout=120) for _ in range(WORKERS * ROUNDS)]
    for child in children:
        child.join(timeout=30)
        assert child.exitcode == 0
    took = time.monotonic() - started
    winners: dict[str, list[str]] = {}
    for plan_id, owner, won in answers:
        if won:
            winners.setdefault(plan_id, []).append(owner)
    wins = Counter(owners[0] for owners in winners.values())
    print(f"\n{mode}: {WORKERS} processes x {ROUNDS} plans in {took:.1f} s; "
          f"wins per process: {sorted(wins.values(), reverse=True)}")  # fmt: skip
    assert sorted(winners) == sorted(plan_ids)
    assert all(len(held) == 1 for held in winners.values()), "a plan claimed twice"
    with connect(archive, vector=False) as conn:
        for plan_id, held in winners.items():
            assert plan_hold(conn, plan_id) == PlanHold("applying", held[0])


@pytest.mark.parametrize("commit", [True, False])
def test_a_claim_waits_for_the_claim_before_it_and_answers_its_outcome(
    archive: str, commit: bool
) -> None:
    """Why a conditional update and not SKIP LOCKED: the second claimer waits for the first
    one's transaction; if it rolls back, the second gets the plan (SKIP LOCKED would have
    answered "taken", and nobody would apply it)."""
    pg_children.add_plan(archive, "p1")
    ctx = pg_children.context()
    events = ctx.Queue()
    first = ctx.Process(
        target=pg_children.claim_and_hold, args=(archive, "p1", "first", commit, events)
    )
    first.start()
    assert events.get(timeout=60) == ("held", True)
    with connect(archive, vector=False) as conn:
        started = time.monotonic()
        won = claim(conn, "p1", "second")
        waited = time.monotonic() - started
        hold = plan_hold(conn, "p1")
    assert events.get(timeout=30) == ("ended", commit)
    first.join(timeout=30)
    print(f"\nfirst claimer {'committed' if commit else 'rolled back'}: the second waited "
          f"{waited:.2f} s and got {won}")  # fmt: skip
    assert waited > 0.2  # it waited on the first one's row lock
    assert won is (not commit)
    assert hold == PlanHold("applying", "first" if commit else "second")


def test_an_apply_ends_once_and_only_by_its_owner(archive: str) -> None:
    pg_children.add_plan(archive, "p1")
    report: JsonObject = {"applied": [], "skipped": ["op-2"], "created": {"op-1": 7}}
    with connect(archive, vector=False) as conn:
        assert claim(conn, "p1", "me") is True
        assert claim(conn, "p1", "me") is False  # not twice, not even by the same owner
        assert resolve(conn, "p1", "applied", owner="someone else") is False
        assert resolve(conn, "p1", "declined") is False  # no longer pending
        assert resolve(conn, "p1", "failed", owner="me", report=report) is True
        assert resolve(conn, "p1", "applied", owner="me") is False
        row = conn.execute("SELECT status, owner, report FROM plans WHERE id = 'p1'").fetchone()
    assert row is not None and row[:2] == ("failed", None)
    assert json.loads(str(row[2])) == report  # the text the SQLite plan book keeps


def test_a_pending_plan_declined_cannot_be_claimed(archive: str) -> None:
    for plan_id in ("d", "s"):
        pg_children.add_plan(archive, plan_id)
    with connect(archive, vector=False) as conn:
        assert resolve(conn, "d", "declined") is True
        assert resolve(conn, "s", "superseded") is True
        assert resolve(conn, "s", "declined") is False
        assert claim(conn, "d", "me") is False
        assert claim(conn, "unknown", "me") is False
        assert [plan_hold(conn, p) for p in ("d", "s", "unknown")] == [
            PlanHold("declined", None),
            PlanHold("superseded", None),
            None,
        ]


def test_bad_statuses_and_owners_are_coded_errors(archive: str) -> None:
    pg_children.add_plan(archive, "p1")
    with connect(archive, vector=False) as conn:
        not_an_end = cast(Any, "pending"), cast(Any, "applying")
        calls: list[tuple[Callable[[], object], str]] = [
            (lambda: resolve(conn, "p1", not_an_end[0]), "archive.plan_status_invalid"),
            (lambda: resolve(conn, "p1", not_an_end[1]), "archive.plan_status_invalid"),
            (lambda: resolve(conn, "p1", "applied"), "archive.plan_owner_invalid"),
            (lambda: claim(conn, "p1", "  "), "archive.plan_owner_invalid"),
            (lambda: take_over(conn, "p1", "me", ""), "archive.plan_owner_invalid"),
        ]
        for call, code in calls:
            with pytest.raises(ArchiveError) as refused:
                call()
            assert refused.value.code == code
        assert plan_hold(conn, "p1") == PlanHold("pending", None)


def test_the_statuses_are_the_plan_books(archive: str) -> None:
    assert sorted(STATUSES) == sorted(PLAN_STATUSES)


def test_row_level_security_hides_a_restricted_plan_from_its_claim(
    pg_server: PgServer, archive: str
) -> None:
    db = database_name(archive)
    role = f"{db}_carles"
    with connect(archive, vector=False, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        grant(conn, db, role, write=True)  # writes, but has not the restricted right
    pg_children.add_plan(archive, "open")
    pg_children.add_plan(archive, "secret", restricted_text=True)
    with connect(pg_server.url(db, user=role, password="pw"), vector=False) as conn:
        assert claim(conn, "secret", "carles") is False
        assert claim(conn, "open", "carles") is True
    with connect(archive, vector=False) as conn:
        assert plan_hold(conn, "secret") == PlanHold("pending", None)
