"""The loop's event paths and their order, the turn cap, Stop, provider errors, prompts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.core.agent.events import (
    ErrorEvent,
    FinalEvent,
    IterationEvent,
    TextEvent,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
    to_wire,
)
from app.core.agent.grounding import NOTHING_FOUND
from app.core.agent.prompts import GROUNDED_ASK
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.archive import conversations as archive_conversations
from app.core.errors import ArchiveError, ModelError
from app.core.models.base import Usage
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession
from app.core.tools.registry import ToolRegistry
from tests.core.agent.conftest import (
    RecordingSearcher,
    SessionFactory,
    collect,
    kinds,
)
from tests.core.agent.test_plans import ANNA_OPS


async def test_tool_turn_then_answer_streams_every_event_in_order(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(text="Let me look.", tool_calls=(call("dedalo_list_sections"),), usage=Usage(100, 5)),
        Turn(text="Five sections.", thinking="they asked for sections", usage=Usage(150, 7)),
    )
    session = make_session()
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": "what sections can I search?"}))
    )

    names = kinds(events)
    assert names[0] == "start" and names[-1] == "final"
    first_tool = names.index("tool_use")
    assert names[:3] == ["start", "iteration", "text"]
    assert names[first_tool : first_tool + 3] == ["tool_use", "tool_result", "iteration"]
    thinking = [e for e in events if isinstance(e, ThinkingEvent)]
    assert thinking[0].state == "start" and thinking[-1].state == "stop"
    assert "".join(t.text or "" for t in thinking) == "they asked for sections"
    assert names.index("thinking") < max(i for i, n in enumerate(names) if n == "text")
    assert [e.to_dict() for e in events if isinstance(e, IterationEvent)] == [
        {"n": 1, "max": 12},
        {"n": 2, "max": 12},
    ]
    use = next(e for e in events if isinstance(e, ToolUseEvent))
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert (use.name, use.summary) == ("dedalo_list_sections", "List the archive's sections")
    assert (result.id, result.ok, result.code) == (use.id, True, None)
    final = events[-1]
    assert isinstance(final, FinalEvent)
    streamed = "".join(e.delta for e in events if isinstance(e, TextEvent))
    assert final.answer == streamed == "Let me look.Five sections."
    assert (final.stop, final.turns, final.model, final.change_plan) == (
        "end_turn",
        2,
        "local",
        None,
    )
    assert final.usage == {"input_tokens": 250, "output_tokens": 12}
    assert final.history == [
        {"role": "user", "text": "what sections can I search?"},
        {"role": "assistant", "text": streamed},
    ]
    assert final.transcript_summary == [
        {"turn": 1, "tool": "dedalo_list_sections", "ok": True, "code": None}
    ]
    start = events[0].to_dict()
    assert start == {"model": "local", "mode": "read", "egress": "local"}
    assert to_wire(final)["event"] == "final"


async def test_the_tool_result_goes_back_to_the_model_as_a_tool_message(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),)),
        Turn(text="Done."),
    )
    await collect(await (make_session()).chat(ChatRequest.from_dict({"question": "read oh1/1"})))
    second = models["local"].calls[1].messages
    assert [m.role for m in second[-2:]] == ["assistant", "tool"]
    assert second[-2].tool_calls[0].name == "dedalo_read_record"
    assert "Interview with Joan Vila" in second[-1].content
    assert second[-1].tool_call_id == second[-2].tool_calls[0].id


async def test_the_run_stops_after_twelve_model_turns(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(*[Turn(tool_calls=(call("dedalo_list_sections"),))] * 13)
    events = await collect(
        await (make_session()).chat(ChatRequest.from_dict({"question": "loop forever"}))
    )
    iterations = [e for e in events if isinstance(e, IterationEvent)]
    assert [e.n for e in iterations] == list(range(1, 13))
    assert len(models["local"].calls) == 12
    error = events[-1]
    assert isinstance(error, ErrorEvent) and error.code == "ai.turn_limit"
    assert not any(isinstance(e, FinalEvent) for e in events)


async def test_stop_mid_answer_keeps_the_partial_transcript(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(text="The reservoir flooded the valley in 1962 and " * 20, chunk_size=5)
    )
    session = make_session()
    conversation = await session.conversations.new()
    stream = await session.chat(
        ChatRequest.from_dict({"question": "tell me"}), conversation_id=conversation.id
    )
    events = []
    async for event in stream:
        events.append(event)
        if sum(isinstance(e, TextEvent) for e in events) == 3:
            session.stop(conversation.id)
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.stop == "stopped"
    streamed = "".join(e.delta for e in events if isinstance(e, TextEvent))
    assert final.answer == streamed and 0 < len(streamed) < 100
    stored = await session.conversations.get(conversation.id)
    assert stored.history[-1] == {"role": "assistant", "text": streamed}
    assert stored.transcript[-1].stop == "stopped"


async def test_a_new_run_in_a_conversation_stops_the_old_one(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(Turn(text="a long answer " * 30, chunk_size=4), Turn(text="second"))
    session = make_session()
    cid = (await session.conversations.new()).id
    old = await session.chat(ChatRequest.from_dict({"question": "first"}), conversation_id=cid)
    first_events = [await anext(old) for _ in range(4)]
    new = await session.chat(ChatRequest.from_dict({"question": "second"}), conversation_id=cid)
    rest = [event async for event in old]
    assert isinstance(rest[-1], FinalEvent) and rest[-1].stop == "stopped"
    assert kinds(first_events)[:2] == ["start", "iteration"]
    second = await collect(new)
    assert isinstance(second[-1], FinalEvent) and second[-1].answer == "second"


async def test_a_coded_provider_error_mid_answer_keeps_its_code(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    failure = ModelError("ai.context_overflow", "Too long.", hint="Start a new conversation.")
    models["local"].extend(Turn(text="partial", error=failure))
    events = await collect(await (make_session()).chat(ChatRequest.from_dict({"question": "hi"})))
    assert kinds(events)[-2:] == ["text", "error"]
    assert events[-1].to_dict()["hint"] == "Start a new conversation."


async def test_grounded_run_searches_first_and_cites_the_hits_whatever_the_model_writes(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["small"].extend(Turn(text="People left because of water."))
    question = "who had to leave when the reservoir flooded the valley?"
    events = await collect(
        await (make_session()).chat(ChatRequest.from_dict({"question": question, "model": "small"}))
    )
    assert kinds(events)[:5] == ["start", "tool_use", "tool_result", "iteration", "text"]
    use = events[1]
    assert isinstance(use, ToolUseEvent) and use.name == "dedalo_semantic_search"
    assert isinstance(events[2], ToolResultEvent) and events[2].ok
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.stop == "end_turn"
    assert final.answer.startswith("People left because of water.")
    assert "Sources:\n- Interview with Joan Vila (oh1/1)" in final.answer
    prompt = models["small"].calls[0].messages[-1].content
    assert "Interview with Joan Vila (oh1/1)" in prompt and prompt.rstrip().endswith(GROUNDED_ASK)
    assert models["small"].calls[0].tools == []


async def test_grounded_run_without_hits_does_not_ask_the_model(
    archive: Archive, catalog: Catalog, models: dict[str, ScriptedModel], registry: ToolRegistry
) -> None:
    searcher = RecordingSearcher(archive)  # an empty archive: the index has nothing
    session = AssistantSession(
        archive, catalog, searcher, registry=registry, model_factory=lambda e: models[e.id]
    )
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": "the reservoir", "model": "small"}))
    )
    searcher.index.close()
    assert kinds(events) == ["start", "tool_use", "tool_result", "text", "final"]
    assert events[-1].to_dict()["answer"] == NOTHING_FOUND
    assert models["small"].calls == []


async def test_context_goes_before_the_question_and_the_system_prompt_is_stable(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session()
    context: dict[str, Any] = {"section_tipo": "oh1", "section_id": 1, "summary": "About Joan."}
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "summarise this record", "context": context})
        )
    )
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "and now?", "context": {**context, "section_id": 2}})
        )
    )
    first, second = (c.messages for c in models["local"].calls)
    assert first[0].role == second[0].role == "system"
    assert first[0].content == second[0].content
    assert "oh1/1" not in first[0].content
    last = first[-1].content
    assert last.index("Interview with Joan Vila (oh1/1)") < last.index("summarise this record")
    assert "About Joan." in last


async def test_history_is_text_only_and_resent_as_messages(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_list_sections"),)), Turn(text="Five."), Turn(text="Yes.")
    )
    session = make_session()
    first = await collect(await session.chat(ChatRequest.from_dict({"question": "sections?"})))
    history = first[-1].to_dict()["history"]
    await collect(
        await session.chat(ChatRequest.from_dict({"question": "sure?", "history": history}))
    )
    sent = models["local"].calls[-1].messages
    assert [(m.role, m.content) for m in sent[1:]] == [
        ("user", "sections?"),
        ("assistant", "Five."),
        ("user", "sure?"),
    ]
    assert all(not m.tool_calls for m in sent)


async def test_scripted_model_honours_the_stop_event_between_chunks() -> None:
    from app.core.models.base import Stop, StreamOptions, TextDelta
    from app.core.models.stop_signal import StopSignal

    stop = StopSignal()
    model = ScriptedModel([Turn(text="abcdefghij", chunk_size=2)])
    seen = []
    async for event in model.stream([], [], StreamOptions(stop_event=stop)):
        seen.append(event)
        if isinstance(event, TextDelta):
            stop.set()
    assert seen == [TextDelta("ab"), Stop("stopped")]


@pytest.mark.parametrize("effort", ["low", "default", None])
async def test_an_offered_effort_reaches_the_model(
    make_session: SessionFactory, models: dict[str, ScriptedModel], effort: str | None
) -> None:
    await collect(
        await (make_session()).chat(ChatRequest.from_dict({"question": "hi", "effort": effort}))
    )
    assert models["local"].calls[0].options.effort == (None if effort == "default" else effort)
    await asyncio.sleep(0)


async def test_a_silent_change_plan_streams_its_summary_so_the_answer_is_the_text_frames(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    proposal = {"summary": "Anna as informant", "ops": ANNA_OPS}
    models["local"].extend(Turn(tool_calls=(call("propose_change_plan", proposal),)))
    request = {"question": "add Anna", "mode": "write"}
    events = await collect(await (make_session()).chat(ChatRequest.from_dict(request)))
    assert kinds(events) == ["start", "iteration", "text", "final"]
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.stop == "change_plan"
    streamed = "".join(e.delta for e in events if isinstance(e, TextEvent))
    assert final.answer == streamed == "Anna as informant"
    assert final.history[-1] == {"role": "assistant", "text": "Anna as informant"}


async def test_a_failure_to_save_the_turn_still_ends_the_stream_with_an_error_frame(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id

    def full(conn: Any, conversation: dict[str, Any]) -> None:  # on the writer thread
        raise ArchiveError("archive.disk_full", "The disk is full.", hint="Free some space.")

    monkeypatch.setattr(archive_conversations, "_upsert", full)
    models["local"].extend(Turn(text="Hello."))
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": "hi"}), conversation_id=cid)
    )
    assert kinds(events) == ["start", "iteration", "text", "error"]
    error = events[-1]
    assert isinstance(error, ErrorEvent) and error.code == "archive.disk_full"
