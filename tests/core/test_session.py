"""``AssistantSession``: models, lazily created models, persisted conversations, exports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.conversation_types import Conversation, TurnRecord
from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.models.catalog import Catalog, add_entry
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession, AssistantSettings
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
def catalog() -> Catalog:
    """Their catalog."""
    return scripted_catalog()


@pytest.fixture
def make_session(
    oh_archive: Archive, catalog: Catalog, models: dict[str, ScriptedModel]
) -> Iterator[SessionFactory]:
    """Sessions over the archive, its real index and the scripted models."""
    searcher = RecordingSearcher(oh_archive)
    yield session_factory(oh_archive, catalog, models, build_registry(), searcher)
    searcher.index.close()


def test_models_lists_the_public_catalog_and_write_allowed(make_session: SessionFactory) -> None:
    listing = make_session(write_allowed=False).models()
    assert listing["write_allowed"] is False
    assert [m["id"] for m in listing["models"]] == ["local", "small", "cloud", "cloud-small"]
    assert set(listing["models"][0]) == {"id", "label", "egress", "vision", "default", "efforts"}


async def test_models_are_created_lazily_and_cached(
    oh_archive: Archive, catalog: Catalog, models: dict[str, ScriptedModel]
) -> None:
    created: list[str] = []

    def factory(entry: object) -> ScriptedModel:
        created.append(entry.id)  # type: ignore[attr-defined]
        return models[entry.id]  # type: ignore[attr-defined]

    session = AssistantSession(oh_archive, catalog, model_factory=factory)
    assert created == []
    for _ in range(2):
        await collect(await session.chat(ChatRequest.from_dict({"question": "hi"})))
    await collect(await session.chat(ChatRequest.from_dict({"question": "hi", "model": "cloud"})))
    assert created == ["local", "cloud"]
    await session.aclose()
    assert models["local"].closed and models["cloud"].closed


async def test_the_real_factory_builds_scripted_models(
    oh_archive: Archive, catalog: Catalog
) -> None:
    session = AssistantSession(oh_archive, catalog)
    events = await collect(await session.chat(ChatRequest.from_dict({"question": "hello there"})))
    final = events[-1]
    assert isinstance(final, FinalEvent) and "hello there" in final.answer


async def test_conversations_are_titled_renamed_reset_exported_and_deleted(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),)),
        Turn(text="Joan Vila (oh1/1) left Sant Romà."),
        Turn(text="In 1962."),
    )
    session = make_session()
    cid = (await session.conversations.new()).id
    question = "Who had to leave their homes when the reservoir was built in the upper valley?"
    await collect(
        await session.chat(ChatRequest.from_dict({"question": question}), conversation_id=cid)
    )
    stored = await session.conversations.get(cid)
    assert stored.title == "Who had to leave their homes when the reservoir was built…"
    assert stored.model == "local"
    await collect(
        await session.chat(ChatRequest.from_dict({"question": "When?"}), conversation_id=cid)
    )
    sent = models["local"].calls[-1].messages
    assert [m.content for m in sent[1:]] == [question, "Joan Vila (oh1/1) left Sant Romà.", "When?"]
    assert (await session.conversations.get(cid)).title.startswith("Who had to leave")

    (await session.conversations.rename(cid, "  Reservoir   interviews "))
    assert (await session.conversations.summaries())[0].title == "Reservoir interviews"
    markdown = await session.conversations.export_markdown(cid)
    assert markdown.startswith("# Reservoir interviews\n")
    assert "## You\n\nWhen?" in markdown and "Joan Vila (✓ oh1/1)" in markdown  # a tool read it
    exported = await session.conversations.export_json(cid)
    assert exported["format"] == "arxiu.conversation/1"
    assert len(exported["history"]) == 4 and len(exported["transcript"]) == 2
    assert exported["transcript"][0]["summary"][0]["tool"] == "dedalo_read_record"
    json.dumps(exported)

    (await session.conversations.reset(cid))
    reset = await session.conversations.get(cid)
    assert reset.history == () and reset.title == "Reservoir interviews"
    (await session.conversations.delete(cid))
    assert (await session.conversations.summaries()) == []
    with pytest.raises(ArxiuError) as caught:
        (await session.conversations.get(cid))
    assert caught.value.code == "conversation.unknown"


async def test_a_conversation_ignores_a_client_supplied_history(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    fake = [{"role": "user", "text": "fabricated"}, {"role": "assistant", "text": "lies"}]
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "hi", "history": fake}), conversation_id=cid
        )
    )
    assert "fabricated" not in [m.content for m in models["local"].calls[0].messages]


def test_settings_from_a_mapping_keep_known_keys() -> None:
    settings = AssistantSettings.from_mapping({"external_content": True, "theme": "dark"})
    assert settings.external_content is True and settings.write_allowed is True


async def test_stateless_runs_do_not_stop_each_other(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(Turn(text="first answer " * 5), Turn(text="second answer"))
    session = make_session()
    first = await session.chat(ChatRequest.from_dict({"question": "one"}))
    second = await session.chat(ChatRequest.from_dict({"question": "two"}))
    results = [await collect(first), await collect(second)]
    assert [r[-1].to_dict()["stop"] for r in results] == ["end_turn", "end_turn"]


READING_ROOM = {
    "id": "reading-room",
    "label": "Reading room",
    "provider": "openai_compatible",
    "model": "qwen",
    "endpoint": "http://127.0.0.1:8080/v1",
    "egress": "local",
}


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
    created = await session.conversations.new()
    assert isinstance(created, Conversation) and created.history == ()
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "Who left?"}), conversation_id=created.id
        )
    )
    found = await session.conversations.get(created.id)
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
    stored = await oh_archive.conversation(created.id)
    assert stored is not None and stored["transcript"] == wire["transcript"]
    (summary,) = await session.conversations.summaries()
    assert (summary.id, summary.title) == (created.id, "Who left")


async def test_a_conversation_deleted_while_its_run_goes_on_stays_deleted(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    models["local"].extend(Turn(text="a long answer " * 40, chunk_size=4))
    cid = (await session.conversations.new()).id
    stream = await session.chat(ChatRequest.from_dict({"question": "tell me"}), conversation_id=cid)
    await anext(stream)
    (await session.conversations.delete(cid))
    await collect(stream)
    assert (await session.conversations.summaries()) == []
