"""Bugs stay bugs: a programming error in a run is logged once with its traceback and raised on
out of the run's stream (never an ``error`` banner), and what streamed before it is kept."""

from __future__ import annotations

import logging

import pytest

from app.core.agent.events import ErrorEvent, Event, TextEvent, ToolUseEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.errors import ModelError
from app.core.models.base import Message
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession
from tests.core.agent.broken_tool import BROKEN_TOOL, STREAMED, broken_registry, broken_turn
from tests.core.agent.conftest import (
    SECRET,
    RecordingSearcher,
    SessionFactory,
    collect,
    session_factory,
)


@pytest.fixture
def broken_session(
    oh_archive: Archive,
    catalog: Catalog,
    models: dict[str, ScriptedModel],
    searcher: RecordingSearcher,
) -> SessionFactory:
    """Sessions whose real registry holds the broken tool."""
    return session_factory(oh_archive, catalog, models, broken_registry(), searcher)


async def until_raised(session: AssistantSession, **chat: object) -> tuple[list[Event], Exception]:
    """The events a run streamed before the exception that ended its stream, and it."""
    question = {"question": "how many sections are there?"}
    stream = await session.chat(ChatRequest.from_dict(question), **chat)  # type: ignore[arg-type]
    seen: list[Event] = []
    with pytest.raises(Exception) as raised:
        async for event in stream:
            seen.append(event)
    assert isinstance(raised.value, Exception)
    return seen, raised.value


def bug_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The log records that carry a traceback."""
    return [r for r in caplog.records if r.exc_info is not None]


@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
async def test_a_tool_bug_is_raised_out_of_the_run_and_logged_once_with_its_traceback(
    broken_session: SessionFactory,
    models: dict[str, ScriptedModel],
    caplog: pytest.LogCaptureFixture,
) -> None:
    models["local"].extend(broken_turn())
    seen, error = await until_raised(broken_session())
    assert isinstance(error, ZeroDivisionError)
    assert not any(isinstance(e, ErrorEvent) for e in seen)  # no banner for a bug
    assert [e.name for e in seen if isinstance(e, ToolUseEvent)] == [BROKEN_TOOL]
    (logged,) = bug_records(caplog)
    assert logged.name == "app.core.agent.loop" and logged.levelname == "ERROR"
    assert "ZeroDivisionError" in logged.getMessage()
    assert "in dedalo_broken_count" in caplog.text  # the traceback reaches the tool's frame


@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
async def test_the_partial_transcript_of_a_run_a_bug_ended_is_kept_in_its_conversation(
    broken_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(broken_turn())
    session = broken_session()
    conversation = await session.conversations.new()
    seen, error = await until_raised(session, conversation_id=conversation.id)
    assert isinstance(error, ZeroDivisionError)
    streamed = "".join(e.delta for e in seen if isinstance(e, TextEvent))
    assert streamed == STREAMED
    stored = await session.conversations.get(conversation.id)
    assert stored.history[-2:] == (
        {"role": "user", "text": "how many sections are there?"},
        {"role": "assistant", "text": STREAMED},
    )
    (turn,) = stored.transcript
    assert turn.stop == "stopped" and turn.answer == STREAMED and turn.change_plan is None
    assert not any(entry.get("tool") == BROKEN_TOOL for entry in turn.summary)  # no result
    assert any(entry.get("bug") == "ZeroDivisionError" for entry in turn.summary)
    assert stored.pending_plan is None and (await session.plans.latest(conversation.id)) is None
    assert not session._runs  # the run's slot is freed


@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
async def test_a_kept_partial_answer_keeps_its_taint(
    broken_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """A local run that read a restricted record and then hit a bug: the partial answer is kept
    marked tainted, so a later external run of the conversation never sees it."""
    read = call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1})
    models["local"].extend(
        Turn(tool_calls=(read,)),
        Turn(text=f"{SECRET}: the flood.", tool_calls=(call(BROKEN_TOOL),)),
    )
    models["cloud"].extend(Turn(text="Nothing to add."))
    session = broken_session()
    conversation = await session.conversations.new()
    _seen, error = await until_raised(session, conversation_id=conversation.id)
    assert isinstance(error, ZeroDivisionError)
    stored = await session.conversations.get(conversation.id)
    assert stored.history[-1]["tainted"] is True and stored.tainted
    after = await session.chat(
        ChatRequest.from_dict({"question": "sum it up", "model": "cloud"}),
        conversation_id=conversation.id,
    )
    await collect(after)
    sent = "\n".join(m.content for c in models["cloud"].calls for m in c.messages)
    assert SECRET not in sent


@pytest.mark.allow_log("app.core.agent.loop", message="ConnectionResetError")
async def test_a_provider_that_raises_an_uncoded_exception_is_a_bug_too(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Providers code their own failures (``ai.provider_failed``...); one that lets an uncoded
    exception out has a bug, which is raised on, not turned into a banner."""

    def broken(messages: list[Message]) -> Turn:
        raise ConnectionResetError("peer went away")

    models["local"].extend(broken)
    _seen, error = await until_raised(make_session())
    assert isinstance(error, ConnectionResetError)
    (logged,) = bug_records(caplog)
    assert logged.name == "app.core.agent.loop"
    assert "peer went away" in caplog.text and "in broken" in caplog.text  # the traceback


async def test_a_known_error_is_still_a_coded_error_frame(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    failure = ModelError("ai.provider_failed", "The server went away.", retryable=True)
    models["local"].extend(Turn(text="Partial", error=failure))
    events = await collect(await make_session().chat(ChatRequest.from_dict({"question": "hi"})))
    last = events[-1]
    assert isinstance(last, ErrorEvent) and last.code == "ai.provider_failed"
    assert last.category == "provider" and last.retryable
