"""A resolution reads and writes the plan book off the event loop's thread; the loop goes on."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from typing import Any

import pytest

from app.core.agent.plan_book import PlanBook
from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel
from app.core.tools.registry import ToolRegistry
from tests.core.agent.conftest import SessionFactory
from tests.core.agent.test_plan_book import CREATE_PEOPLE, book_plan, people_named
from tests.core.agent.test_plans import propose

RELEASE_WAIT = 10.0
"""How long a held claim waits to be released (a bound, so a blocked loop cannot hang)."""

BOOK_STEPS = ("_get_in", "_claim_in", "_finish_in", "_add_in")


def spy_threads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Record ``(step, thread name)`` for every read and write of the plan book."""
    seen: list[tuple[str, str]] = []
    for step in BOOK_STEPS:
        real = getattr(PlanBook, step)

        def spy(
            self: PlanBook, conn: sqlite3.Connection, *args: Any, _r: Any = real, _s: str = step
        ) -> Any:
            seen.append((_s, threading.current_thread().name))
            return _r(self, conn, *args)

        monkeypatch.setattr(PlanBook, step, spy)
    return seen


async def test_proposing_and_applying_a_plan_never_touch_the_book_on_the_loop_thread(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    seen = spy_threads(monkeypatch)
    plan = await propose(session, models, cid)
    report = await session.plans.resolve(plan["pending_id"], True)
    assert report is not None and report.ok and len(report.applied) == 2
    loop_thread = threading.current_thread().name
    steps = [step for step, _ in seen]
    assert {"_add_in", "_get_in", "_claim_in", "_finish_in"} <= set(steps)
    assert all(name != loop_thread for _, name in seen), seen
    writes = [name for step, name in seen if step in ("_add_in", "_claim_in", "_finish_in")]
    assert all(name.startswith("arxiu-writer") for name in writes), seen
    assert seen[steps.index("_claim_in") - 1][1].startswith("arxiu-read-")  # the lookup
    done = await session.plans.get(plan["pending_id"])
    assert done is not None and done.status == "applied"
    assert await make_session().plans.get(plan["pending_id"]) == done  # read back alike


@pytest.mark.parametrize(
    ("step", "approved", "status"),
    [("_claim_in", False, "declined"), ("_finish_in", True, "applied")],
)
async def test_the_loop_goes_on_while_a_book_write_is_held_and_a_cancelled_one_still_lands(
    oh_archive: Archive,
    registry: ToolRegistry,
    monkeypatch: pytest.MonkeyPatch,
    step: str,
    approved: bool,
    status: str,
) -> None:
    from app.core.session import AssistantSession

    record = await book_plan(oh_archive, registry, CREATE_PEOPLE[:1])
    session = AssistantSession(oh_archive, registry=registry)
    order: list[str] = []
    entered, release = threading.Event(), threading.Event()
    real_step = getattr(PlanBook, step)

    def held(self: PlanBook, conn: sqlite3.Connection, *args: Any) -> Any:
        order.append("write started")
        entered.set()
        if not release.wait(RELEASE_WAIT):
            raise AssertionError("the event loop did not run while the write was held")
        done = real_step(self, conn, *args)
        order.append("write committed")
        return done

    monkeypatch.setattr(PlanBook, step, held)
    resolving = asyncio.ensure_future(session.plans.resolve(record.id, approved))
    while not entered.is_set():
        await asyncio.sleep(0.005)
    order.append("loop ran")
    resolving.cancel()  # the card went away: the write still takes effect
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await resolving
    await oh_archive.db.awrite(lambda conn: None)  # the writer runs in order: the write is done
    assert order == ["write started", "loop ran", "write committed"]
    found = await PlanBook(oh_archive).get(record.id)
    assert found is not None and found.status == status


async def test_two_resolutions_at_once_in_one_loop_take_effect_once(
    oh_archive: Archive, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.session import AssistantSession

    record = await book_plan(oh_archive, registry, CREATE_PEOPLE)
    session = AssistantSession(oh_archive, registry=registry)
    claims: list[str] = []
    entered: list[str] = []
    second_claimed, both_entered = threading.Event(), threading.Event()
    real_claim, real_applying = PlanBook._claim_in, PlanBook.applying
    real_book_claim = PlanBook.claim

    async def book_claim(self: PlanBook, *args: Any, **kwargs: Any) -> Any:
        entered.append("claim")
        if len(entered) == 2:
            both_entered.set()
        return await real_book_claim(self, *args, **kwargs)

    def claim(self: PlanBook, conn: sqlite3.Connection, *args: Any) -> Any:
        # the first claim (writer thread) waits until the second resolution has read the book
        # and asked for its claim; the loop stays free meanwhile, so the order below is sure
        if not claims:
            assert both_entered.wait(RELEASE_WAIT), "the second resolution never claimed"
        try:
            return real_claim(self, conn, *args)
        finally:
            claims.append("claim")
            if len(claims) == 2:
                second_claimed.set()

    def applying(self: PlanBook, plan_id: str) -> Any:
        # the worst order: the second claim runs on the writer thread before the first
        # resolution's apply starts on the loop
        assert second_claimed.wait(RELEASE_WAIT), "the second claim never ran"
        return real_applying(self, plan_id)

    monkeypatch.setattr(PlanBook, "claim", book_claim)
    monkeypatch.setattr(PlanBook, "_claim_in", claim)
    monkeypatch.setattr(PlanBook, "applying", applying)
    outcomes = await asyncio.gather(
        session.plans.resolve(record.id, True),
        session.plans.resolve(record.id, True),
        return_exceptions=True,
    )
    errors = [o for o in outcomes if isinstance(o, ArxiuError)]
    reports = [o for o in outcomes if not isinstance(o, BaseException)]
    assert [e.code for e in errors] == ["mcp.plan_resolved"], outcomes
    assert errors[0].hint
    assert len(reports) == 1 and reports[0] is not None and reports[0].ok, outcomes
    assert sorted(people_named(oh_archive, "Book person")) == [
        "Book person 1",
        "Book person 2",
        "Book person 3",
    ]
    done = await PlanBook(oh_archive).get(record.id)
    assert done is not None and done.status == "applied" and not done.interrupted
    with pytest.raises(ArxiuError) as unknown:
        await session.plans.resolve("no-such-plan", True)
    assert unknown.value.code == "mcp.plan_unknown"


async def test_an_approval_cancelled_during_its_claim_leaves_the_plan_resumable(
    oh_archive: Archive, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.session import AssistantSession

    record = await book_plan(oh_archive, registry, CREATE_PEOPLE[:1])
    session = AssistantSession(oh_archive, registry=registry)
    entered, release = threading.Event(), threading.Event()
    real_claim = PlanBook._claim_in

    def held(self: PlanBook, conn: sqlite3.Connection, *args: Any) -> Any:
        entered.set()
        assert release.wait(RELEASE_WAIT), "the event loop did not run while the claim was held"
        return real_claim(self, conn, *args)

    monkeypatch.setattr(PlanBook, "_claim_in", held)
    approving = asyncio.ensure_future(session.plans.resolve(record.id, True))
    while not entered.is_set():
        await asyncio.sleep(0.005)
    approving.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await approving
    await oh_archive.db.awrite(lambda conn: None)  # after the claim and its cleared mark
    monkeypatch.setattr(PlanBook, "_claim_in", real_claim)
    left = await session.plans.get(record.id)
    assert left is not None and left.status == "applying" and left.interrupted
    report = await session.plans.resolve(record.id, True)  # resumed, applied once
    assert report is not None and report.ok
    assert people_named(oh_archive, "Book person") == ["Book person 1"]
    done = await session.plans.get(record.id)
    assert done is not None and done.status == "applied"
