"""Awaitable conversation saves and reads: on the archive's threads, in order, coded errors."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive import conversations as conversations_mod
from app.core.archive.engine import Connection
from app.core.errors import ArchiveError
from tests.core.archive.test_database_async import engine_error

RELEASE_WAIT = 10.0
"""How long a held save waits to be released (a bound, so a blocked loop cannot hang a test)."""

TURN = {
    "id": "c1",
    "title": "Pantà de Sau",
    "model": "local",
    "history": [{"role": "user", "text": "Quién fotografió el pantano?"}],
    "transcript": [{"question": "Qui va fotografiar el pantà?"}],
}


async def test_a_save_then_a_read_round_trips_on_the_archive_threads(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[tuple[str, str]] = []
    real_upsert, real_fetch = conversations_mod._upsert, conversations_mod._fetch

    def upsert(conn: Connection, conversation: dict[str, Any]) -> None:
        threads.append(("save", threading.current_thread().name))
        real_upsert(conn, conversation)

    def fetch(conn: Connection, conversation_id: str, own: str) -> dict[str, Any] | None:
        threads.append(("read", threading.current_thread().name))
        return real_fetch(conn, conversation_id, own)

    monkeypatch.setattr(conversations_mod, "_upsert", upsert)
    monkeypatch.setattr(conversations_mod, "_fetch", fetch)
    await archive.save_conversation(TURN)
    saved = await archive.conversation("c1")
    assert saved is not None
    assert (saved["title"], saved["history"], saved["transcript"]) == (
        "Pantà de Sau",
        TURN["history"],
        TURN["transcript"],
    )
    assert await archive.conversation("no-such") is None
    assert [kind for kind, _ in threads] == ["save", "read", "read"]
    assert threads[0][1].startswith("arxiu-writer")
    assert all(name.startswith("arxiu-read-") for _, name in threads[1:])


async def test_the_loop_goes_on_while_a_save_is_held_and_a_cancelled_save_still_lands(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    entered, release = threading.Event(), threading.Event()
    real_upsert = conversations_mod._upsert

    def held(conn: Connection, conversation: dict[str, Any]) -> None:
        order.append("save started")
        entered.set()
        if not release.wait(RELEASE_WAIT):
            raise AssertionError("the event loop did not run while the save was held")
        real_upsert(conn, conversation)
        order.append("save committed")

    monkeypatch.setattr(conversations_mod, "_upsert", held)
    saving = asyncio.ensure_future(archive.save_conversation(TURN))
    while not entered.is_set():
        await asyncio.sleep(0.005)
    order.append("loop ran")
    saving.cancel()  # the turn's caller goes away: the save is not dropped
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await saving
    await archive.db.awrite(lambda conn: None)  # the writer runs in order: the save is done
    assert order == ["save started", "loop ran", "save committed"]
    saved = await archive.conversation("c1")
    assert saved is not None and saved["transcript"] == TURN["transcript"]


async def test_a_save_on_a_read_only_archive_is_refused_with_a_code(tmp_path: Path) -> None:
    open_archive(tmp_path / "a", create=True).close()
    with open_archive(tmp_path / "a", read_only=True) as ro:
        with pytest.raises(ArchiveError) as caught:
            await ro.save_conversation(TURN)
        assert caught.value.code == "archive.read_only"
        assert caught.value.hint
        assert (await ro.conversation("c1")) is None


async def test_a_failed_save_reaches_the_caller_coded_and_changes_nothing(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    await archive.save_conversation(TURN)

    def broken(conn: Connection, conversation: dict[str, Any]) -> None:
        conn.execute("UPDATE conversations SET title = 'half' WHERE id = 'c1'")
        conn.execute("INSERT INTO no_such_table VALUES (1)")  # an engine error after a change

    monkeypatch.setattr(conversations_mod, "_upsert", broken)
    with pytest.raises(ArchiveError) as caught:
        await archive.save_conversation({**TURN, "title": "new"})
    assert caught.value.code == engine_error(archive)
    saved = await archive.conversation("c1")
    assert saved is not None and saved["title"] == "Pantà de Sau"  # rolled back whole
