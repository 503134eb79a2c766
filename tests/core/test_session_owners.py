"""The session's state owners: the typed conversations store, the plan owner, the catalog reload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.conversation_types import Conversation, TurnRecord
from app.core.archive import Archive
from app.core.models.catalog import add_entry
from app.core.models.scripted import ScriptedModel, Turn
from app.core.session import AssistantSession
from app.core.tools.registry import build_registry
from tests.core.agent.conftest import (
    RecordingSearcher,
    SessionFactory,
    build_archive,
    collect,
    scripted_catalog,
    scripted_models,
    session_factory,
)

READING_ROOM = {
    "id": "reading-room",
    "label": "Reading room",
    "provider": "openai_compatible",
    "model": "qwen",
    "endpoint": "http://127.0.0.1:8080/v1",
    "egress": "local",
}


@pytest.fixture
def oh_archive(tmp_path: Path) -> Iterator[Archive]:
    """The agent tests' archive."""
    arch = build_archive(tmp_path / "oh")
    yield arch
    arch.close()


@pytest.fixture
def models() -> dict[str, ScriptedModel]:
    """Scripted models by id."""
    return scripted_models()


@pytest.fixture
def make_session(oh_archive: Archive, models: dict[str, ScriptedModel]) -> Iterator[SessionFactory]:
    """Sessions over the archive and the scripted models."""
    searcher = RecordingSearcher(oh_archive)
    yield session_factory(oh_archive, scripted_catalog(), models, build_registry(), searcher)
    searcher.index.close()


def test_reload_catalog_reads_a_model_added_after_the_first_use(oh_archive: Archive) -> None:
    session = AssistantSession(oh_archive)
    before = [m["id"] for m in session.models()["models"]]
    add_entry(dict(READING_ROOM))
    assert [m["id"] for m in session.models()["models"]] == before  # still the cached catalog
    session.reload_catalog()
    after = [m["id"] for m in session.models()["models"]]
    assert after == [*before, "reading-room"]


async def test_a_stored_conversation_reads_back_typed_and_its_wire_form_round_trips(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    models["local"].extend(Turn(text="Joan Vila left Sant Romà."))
    created = session.conversations.new()
    assert isinstance(created, Conversation) and created.history == ()
    await collect(await session.chat({"question": "Who left?"}, conversation_id=created.id))
    found = session.conversations.get(created.id)
    assert found.title == "Who left" and found.model == "local"
    assert found.history == (
        {"role": "user", "text": "Who left?"},
        {"role": "assistant", "text": "Joan Vila left Sant Romà."},
    )
    (turn,) = found.transcript
    assert isinstance(turn, TurnRecord) and turn.answer == "Joan Vila left Sant Romà."
    wire = found.to_dict()
    assert set(wire) == {
        "id",
        "title",
        "model",
        "created_at",
        "updated_at",
        "history",
        "transcript",
        "pending_plan",
    }
    assert Conversation.from_dict(json.loads(json.dumps(wire))) == found
    stored = oh_archive.conversation(created.id)
    assert stored is not None and stored["transcript"] == wire["transcript"]
    (summary,) = session.conversations.summaries()
    assert (summary.id, summary.title) == (created.id, "Who left")


async def test_a_conversation_deleted_while_its_run_goes_on_stays_deleted(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    models["local"].extend(Turn(text="a long answer " * 40, chunk_size=4))
    cid = session.conversations.new().id
    stream = await session.chat({"question": "tell me"}, conversation_id=cid)
    await anext(stream)
    session.conversations.delete(cid)
    await collect(stream)
    assert session.conversations.summaries() == []
