"""A run's turn is read and saved off the event loop's thread; the loop goes on meanwhile."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from typing import Any

import pytest

from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.archive import conversations as conversations_mod
from app.core.models.scripted import ScriptedModel, Turn
from tests.core.agent.conftest import SessionFactory, collect, kinds

RELEASE_WAIT = 10.0
"""How long a held save waits to be released (a bound, so a blocked loop cannot hang)."""


async def test_a_turn_is_saved_on_the_writer_thread_while_the_loop_goes_on(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    order: list[str] = []
    threads: list[tuple[str, str]] = []
    entered, release = threading.Event(), threading.Event()
    real_upsert, real_fetch = conversations_mod._upsert, conversations_mod._fetch

    def held(conn: sqlite3.Connection, conversation: dict[str, Any]) -> None:
        threads.append(("save", threading.current_thread().name))
        order.append("save started")
        entered.set()
        if not release.wait(RELEASE_WAIT):
            raise AssertionError("the event loop did not run while the turn's save was held")
        real_upsert(conn, conversation)
        order.append("save committed")

    def fetch(conn: sqlite3.Connection, conversation_id: str, own: str) -> dict[str, Any] | None:
        threads.append(("read", threading.current_thread().name))
        return real_fetch(conn, conversation_id, own)

    monkeypatch.setattr(conversations_mod, "_upsert", held)
    monkeypatch.setattr(conversations_mod, "_fetch", fetch)
    models["local"].extend(Turn(text="La presa es va acabar el 1962."))
    question = "Quan es va acabar la presa de Sau?"
    running = asyncio.ensure_future(
        collect(
            await session.chat(ChatRequest.from_dict({"question": question}), conversation_id=cid)
        )
    )
    while not entered.is_set() and not running.done():
        await asyncio.sleep(0.005)
    order.append("loop ran")
    release.set()
    events = await running
    assert kinds(events)[-1] == "final" and isinstance(events[-1], FinalEvent)
    assert order == ["save started", "loop ran", "save committed"]
    loop_thread = threading.current_thread().name
    assert all(name != loop_thread for _, name in threads), threads
    assert threads[-1][0] == "save" and threads[-1][1].startswith("arxiu-writer")
    stored = await session.conversations.stored(cid)  # nothing lost: the whole turn is kept
    assert [turn.question for turn in stored.transcript] == [question]
    assert "1962" in stored.transcript[0].answer
    assert stored.title and stored.model == "local"
    assert any("1962" in str(message) for message in stored.history)


async def test_a_saved_conversation_reads_back_in_the_list(
    make_session: SessionFactory, oh_archive: Archive
) -> None:
    session = make_session()
    conversation = await session.conversations.new("Fons Puig")
    await session.conversations.save(conversation)
    assert (await session.conversations.stored(conversation.id)).title == "Fons Puig"
    assert [s.id for s in (await session.conversations.summaries())] == [conversation.id]
