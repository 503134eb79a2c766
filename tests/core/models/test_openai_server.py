"""The OpenAI-compatible provider against a real ``python -m llama_cpp.server`` on 127.0.0.1."""

from __future__ import annotations

import pytest

from app.core.errors import ModelError
from app.core.models.base import (
    Message,
    ModelEvent,
    Stop,
    StreamOptions,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
)
from app.core.models.catalog import ModelEntry
from app.core.models.openai_compatible import OpenAICompatibleModel
from tests.core.models.llama_fixtures import LlamaServer, start_server

pytestmark = pytest.mark.slow

LOOKUP = ToolSpec(
    "lookup_record",
    "Look up an archive record by section and id.",
    {
        "type": "object",
        "properties": {
            "section_tipo": {"type": "string", "enum": ["oh1", "rsc197"]},
            "section_id": {"type": "integer"},
        },
        "required": ["section_tipo", "section_id"],
    },
)


def entry_for(server: LlamaServer) -> ModelEntry:
    return ModelEntry(
        id="llamacpp",
        label="llama.cpp server",
        provider="openai_compatible",
        model="smollm2",
        endpoint=server.base_url,
        egress="local",
        timeout_s=60,
    )


async def test_streams_text_from_the_server(llama_server: LlamaServer) -> None:
    model = OpenAICompatibleModel(entry_for(llama_server))
    try:
        messages = [Message("system", "Answer briefly."), Message("user", "What is an archive?")]
        options = StreamOptions(max_tokens=24, temperature=0.0)
        events: list[ModelEvent] = [e async for e in model.stream(messages, [], options)]
    finally:
        await model.aclose()
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2
    assert "".join(d.text for d in deltas).strip()
    assert isinstance(events[-1], Stop) and events[-1].reason in ("end_turn", "max_tokens")


async def test_streams_a_tool_call_from_the_server(llama_server: LlamaServer) -> None:
    model = OpenAICompatibleModel(entry_for(llama_server))
    named = {"type": "function", "function": {"name": LOOKUP.name}}
    options = StreamOptions(max_tokens=60, temperature=0.0, extra={"tool_choice": named})
    try:
        ask = [Message("user", "Open record 12 of section oh1.")]
        events = [e async for e in model.stream(ask, [LOOKUP], options)]
    finally:
        await model.aclose()
    (call,) = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert call.name == LOOKUP.name
    assert call.arguments.get("section_tipo") in ("oh1", "rsc197")
    assert isinstance(call.arguments.get("section_id"), int)
    assert call.id
    assert events[-1] == Stop("tool_use")


async def test_a_server_killed_mid_stream_gives_a_coded_error(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = start_server(tmp_path_factory.mktemp("doomed") / "server.log")
    model = OpenAICompatibleModel(entry_for(server), retry_delays=())
    seen: list[ModelEvent] = []
    try:
        ask = [Message("user", "Write a long story about an archive.")]
        with pytest.raises(ModelError) as caught:
            async for event in model.stream(ask, [], StreamOptions(max_tokens=400)):
                seen.append(event)
                if len(seen) == 2:
                    server.process.kill()
    finally:
        server.stop()
        await model.aclose()
    assert caught.value.code == "ai.provider_failed"
    assert caught.value.retryable
    assert any(isinstance(e, TextDelta) for e in seen)
