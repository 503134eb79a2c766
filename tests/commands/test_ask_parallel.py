"""A cold ``arxiu ask`` starts loading its model before the index opens and searches."""

from __future__ import annotations

import asyncio
import time

from app.commands.ask_cmd import start_model_load
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.models.catalog import ModelEntry
from app.core.session import AssistantSession


class SlowLoadingModel:
    """A model whose load takes a while (as the llama.cpp child's does) and says when it ended."""

    def __init__(self, entry: ModelEntry) -> None:
        self.entry = entry
        self.loaded_at: float | None = None

    async def load(self) -> None:
        await asyncio.sleep(0.3)
        self.loaded_at = time.monotonic()

    async def aclose(self) -> None:
        return None


def session_with(archive: Archive, made: list[SlowLoadingModel]) -> AssistantSession:
    def factory(entry: ModelEntry) -> SlowLoadingModel:
        made.append(SlowLoadingModel(entry))
        return made[-1]

    return AssistantSession(archive, model_factory=factory)  # type: ignore[arg-type]


async def test_the_model_loads_while_the_index_opens(archive: Archive) -> None:
    made: list[SlowLoadingModel] = []
    session = session_with(archive, made)
    began = time.monotonic()
    task = start_model_load(session, ChatRequest("Who had to leave the valley?"))
    assert task is not None
    await asyncio.to_thread(time.sleep, 0.6)  # the index opening and the search, on a thread
    assert task.done() and len(made) == 1
    assert made[0].loaded_at is not None and made[0].loaded_at - began < 0.55  # alongside
    assert session.model(made[0].entry) is made[0]  # the run will use the loaded model
    await session.aclose()


async def test_an_invalid_request_loads_nothing(archive: Archive) -> None:
    made: list[SlowLoadingModel] = []
    session = session_with(archive, made)
    assert start_model_load(session, ChatRequest("x", model="no-such-model")) is None
    assert made == []
    await session.aclose()
