"""Background indexing yields while a person waits: no batch starts, then it resumes."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.index import HashingEmbedder, Index, Progress, SearchHit, open_index
from app.core.index import indexer as indexer_module
from app.core.index.embedders import Vectors
from app.core.index.foreground import Foreground, HoldsForeground
from app.core.models.base import Message
from app.core.models.scripted import Turn
from app.core.session import AssistantSession, AssistantSettings
from app.core.tools.registry import build_registry
from tests.core.agent.conftest import build_archive, scripted_catalog, scripted_models

from .conftest import CountingEmbedder, text


def many_records(archive: Archive, n: int) -> None:
    for i in range(n):
        archive.create_record("oh1", {"oh2": text(f"Record number {i} about topic{i}")})


def vector_count(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM index_vectors").fetchone()[0])


def chunk_count(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0])


class FirstBatchHeld(CountingEmbedder):
    """The hashing embedder whose first call waits for ``gate``; ``calls`` counts the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.calls = 0

    def embed(self, texts: list[str]) -> Vectors:
        self.calls += 1
        self.entered.set()
        if self.calls == 1:
            assert self.gate.wait(30)
        return super().embed(texts)


class Watch:
    """The indexer's progress events, with an event set when it yields and when it resumes."""

    def __init__(self) -> None:
        self.events: list[Progress] = []
        self.yielded = threading.Event()
        self.resumed = threading.Event()

    def __call__(self, progress: Progress) -> None:
        self.events.append(progress)
        if progress.yielding:
            self.yielded.set()
        elif self.yielded.is_set():
            self.resumed.set()


def test_the_batch_in_flight_finishes_then_no_batch_starts_until_the_person_is_answered(
    oral_archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer_module, "VECTOR_BATCH", 8)
    many_records(oral_archive, 40)
    embedder = FirstBatchHeld()
    idx = open_index(oral_archive, embedder)
    watch = Watch()
    idx.add_progress_listener(watch)
    idx.start()
    try:
        assert embedder.entered.wait(30)  # the first vector batch is in flight
        with idx.person_waiting():
            embedder.gate.set()  # it finishes...
            assert watch.yielded.wait(30)  # ...and the indexer waits for the person
            assert embedder.calls == 1
            assert vector_count(oral_archive) == 8  # the batch in flight was committed
            assert not idx.indexer.wait_idle(0)
            assert not watch.resumed.is_set()
        assert watch.resumed.wait(30)
        assert idx.indexer.wait_idle(60)
        assert idx.stats().pending == 0
        assert embedder.calls > 1
    finally:
        idx.close()


def test_a_run_started_while_a_person_waits_starts_no_batch_at_all(
    oral_archive: Archive,
) -> None:
    embedder = CountingEmbedder()
    idx = open_index(oral_archive, embedder)
    watch = Watch()
    idx.add_progress_listener(watch)
    try:
        with idx.person_waiting(), idx.person_waiting():  # nested holders
            idx.start()
            assert watch.yielded.wait(30)
            assert chunk_count(oral_archive) == 0 and not embedder.texts
            assert idx.foreground.count == 2
        assert idx.indexer.wait_idle(60)
        assert watch.resumed.is_set()
        assert chunk_count(oral_archive) > 0 and idx.stats().pending == 0
    finally:
        idx.close()


def test_cancel_and_close_end_a_run_that_waits_for_a_person(oral_archive: Archive) -> None:
    idx = open_index(oral_archive, CountingEmbedder())
    watch = Watch()
    idx.add_progress_listener(watch)
    with idx.person_waiting():
        idx.start()
        assert watch.yielded.wait(30)
        idx.cancel()
        assert idx.indexer.wait_idle(30)  # not held until the person leaves
        assert idx.progress().state == "cancelled"
        idx.close()  # returns while the signal is still held


def test_a_search_holds_the_signal_while_it_runs(oral_archive: Archive) -> None:
    idx = open_index(oral_archive, CountingEmbedder())
    seen: list[int] = []
    engine_search = idx.engine.search

    def spying(query: str, **options: Any) -> list[SearchHit]:
        seen.append(idx.foreground.count)
        return engine_search(query, **options)

    idx.engine.search = spying  # type: ignore[method-assign]
    try:
        assert idx.search("reservoir", k=3)
        assert seen == [1] and idx.foreground.count == 0
        assert isinstance(idx, HoldsForeground)
    finally:
        idx.close()


def test_the_first_holder_and_the_last_are_told_and_switching_off_counts_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    told: list[bool] = []
    foreground = Foreground()
    foreground.add_listener(told.append)
    with foreground.hold():
        with foreground.hold():
            assert foreground.waiting
        assert told == [True]
    assert told == [True, False] and not foreground.waiting
    monkeypatch.setenv("ARXIU_INDEX_YIELD", "0")
    off = Foreground()
    with off.hold():
        assert not off.waiting
    assert off.wait_clear(lambda: False, timeout=0)


async def test_a_streaming_turn_holds_the_signal_until_its_run_ends(tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "oh")
    index = Index(archive, HashingEmbedder())
    index.index_now()
    models = scripted_models()
    held: list[int] = []

    def answer(messages: list[Message]) -> Turn:
        held.append(index.foreground.count)  # while the model streams its turn
        return Turn(text="The reservoir flooded the valley.")

    models["local"].extend(answer)
    session = AssistantSession(
        archive,
        scripted_catalog(),
        index,
        AssistantSettings(),
        registry=build_registry(),
        model_factory=lambda e: models[e.id],
    )
    try:
        events = [e async for e in await session.chat(ChatRequest("What about the reservoir?"))]
        assert events[-1].kind == "final"
        assert held and all(count >= 1 for count in held)
        assert index.foreground.count == 0  # released when the run ended
    finally:
        await session.aclose()
        index.close()
        archive.close()


def test_holders_on_many_threads_leave_the_listeners_told_the_state_as_it_is() -> None:
    told: list[bool] = []
    foreground = Foreground(enabled=True)
    foreground.add_listener(told.append)
    start = threading.Barrier(8)

    def hold_often() -> None:
        start.wait()
        for _ in range(300):
            with foreground.hold():
                pass

    threads = [threading.Thread(target=hold_often) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert told and told[-1] is False and foreground.count == 0
    assert all(a != b for a, b in itertools.pairwise(told))  # each change told once, in order
