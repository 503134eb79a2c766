"""The Anthropic provider on recorded Messages API streams replayed through httpx.MockTransport."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.errors import ModelError
from app.core.models.anthropic import AnthropicModel, messages_url
from app.core.models.base import (
    Message,
    ModelEvent,
    Stop,
    StreamOptions,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    ThinkingStop,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from app.core.models.catalog import ModelEntry
from app.core.models.factory import create_model
from tests.core.models.keyring_fake import MemoryKeyring

STREAMS = Path(__file__).parent / "streams"
KEY = "sk-ant-api03-test-secret-key"
ENTRY = ModelEntry(
    id="claude",
    label="Claude",
    provider="anthropic",
    model="claude-sonnet-4-5",
    endpoint="https://api.anthropic.com",
    egress="external",
    vision=True,
    efforts=("low", "high"),
    api_key_env="ANTHROPIC_API_KEY",
)
SEARCH = ToolSpec("dedalo_semantic_search", "Search by meaning.", {"type": "object"})


class Recorder:
    """Replays recorded streams in order and keeps the requests."""

    def __init__(self, *names: str) -> None:
        self.bodies = [(STREAMS / f"{name}.txt").read_bytes() for name in names]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, content=self.bodies.pop(0), headers=headers)

    def model(self, **kwargs: Any) -> AnthropicModel:
        client = httpx.AsyncClient(transport=httpx.MockTransport(self))
        kwargs.setdefault("api_key", KEY)
        return AnthropicModel(ENTRY, client=client, retry_delays=(0,), **kwargs)

    def body(self, index: int = 0) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.requests[index].content)
        return data


async def run(
    model: AnthropicModel, tools: list[ToolSpec] | None = None, **options: Any
) -> list[ModelEvent]:
    messages = [Message("system", "You are Arxiu."), Message("user", "When was Anna born?")]
    stream = model.stream(messages, tools or [], StreamOptions(**options))
    return [event async for event in stream]


async def test_text_stream_with_usage() -> None:
    events = await run(Recorder("anthropic_text").model())
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Anna Pujol was born in Súria in 1931 (Anna Pujol (rsc197/12))."
    assert events[-2:] == [Usage(472 + 1024, 21, 1024), Stop("end_turn")]


async def test_thinking_blocks_map_to_thinking_events() -> None:
    recorder = Recorder("anthropic_thinking")
    events = await run(recorder.model(), effort="high")
    assert events[:4] == [
        ThinkingStart(),
        ThinkingDelta("The question asks for the year. "),
        ThinkingDelta("The record says 1931."),
        ThinkingStop(),
    ]
    assert events[4] == TextDelta("1931.")
    body = recorder.body()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    assert body["max_tokens"] > 24576
    assert "temperature" not in body


async def test_tool_use_is_assembled_from_input_json_deltas() -> None:
    events = await run(Recorder("anthropic_tool_use").model(), [SEARCH])
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [
        ToolCall(
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "dedalo_semantic_search",
            {"query": "people who had to leave their homes", "limit": 5},
        ),
        ToolCall("toolu_02", "dedalo_list_sections", {}),
    ]
    assert TextDelta("Let me search the interviews.") in events
    assert events[-1] == Stop("tool_use")


async def test_overloaded_before_any_content_is_retried() -> None:
    recorder = Recorder("anthropic_overloaded", "anthropic_text")
    events = await run(recorder.model())
    assert len(recorder.requests) == 2
    assert events[-1] == Stop("end_turn")


async def test_overloaded_mid_answer_is_a_retryable_coded_error() -> None:
    recorder = Recorder("anthropic_overloaded_mid_answer", "anthropic_text")
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in recorder.model().stream([Message("user", "hi")], [], StreamOptions()):
            seen.append(event)
    assert caught.value.code == "ai.provider_overloaded"
    assert caught.value.retryable
    assert seen == [TextDelta("The interview with")]
    assert len(recorder.requests) == 1  # never retried after the first chunk


async def test_overloaded_every_time_gives_up_with_the_coded_error() -> None:
    with pytest.raises(ModelError) as caught:
        await run(Recorder("anthropic_overloaded", "anthropic_overloaded").model())
    assert caught.value.code == "ai.provider_overloaded"


async def test_request_shape_images_and_tool_history() -> None:
    recorder = Recorder("anthropic_text")
    history = [
        Message("system", "Rules."),
        Message("user", "What is on this photo?", images=(("image/jpeg", b"\xff\xd8jpeg"),)),
        Message("assistant", "Searching.", tool_calls=(ToolCall("t1", "search", {"q": "x"}),)),
        Message("tool", '{"hits": []}', tool_call_id="t1", name="search"),
        Message("tool", '{"hits": [1]}', tool_call_id="t2", name="search"),
    ]
    stream = recorder.model().stream(history, [SEARCH], StreamOptions(tool_choice="required"))
    _ = [e async for e in stream]
    request = recorder.requests[0]
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = recorder.body()
    assert body["system"] == "Rules."
    image = body["messages"][0]["content"][0]
    assert image["source"] == {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": base64.b64encode(b"\xff\xd8jpeg").decode(),
    }
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "search",
        "input": {"q": "x"},
    }
    results = body["messages"][2]
    assert results["role"] == "user" and len(results["content"]) == 2
    assert body["tools"][0]["input_schema"] == {"type": "object"}
    assert body["tool_choice"] == {"type": "any"}
    assert "thinking" not in body


@pytest.mark.parametrize(
    ("status", "code"), [(401, "ai.provider_auth"), (529, "ai.provider_overloaded")]
)
async def test_http_errors(status: int, code: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"type": "error", "error": {"message": "x"}})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = AnthropicModel(ENTRY, client=client, api_key=KEY, retry_delays=())
    with pytest.raises(ModelError) as caught:
        await run(model)
    assert caught.value.code == code
    assert KEY not in json.dumps(caught.value.to_dict())


def test_messages_url() -> None:
    assert messages_url(None) == "https://api.anthropic.com/v1/messages"
    assert messages_url("https://proxy.example/v1") == "https://proxy.example/v1/messages"


async def test_the_key_comes_from_the_keyring_and_never_reaches_the_logs(
    memory_keyring: MemoryKeyring,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    memory_keyring.set_password("arxiu", "claude", KEY)
    recorder = Recorder("anthropic_text")
    caplog.set_level(logging.DEBUG)
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    model = create_model(ENTRY, client=client)
    events = [e async for e in model.stream([Message("user", "hi")], [], StreamOptions())]
    assert events[-1] == Stop("end_turn")
    assert recorder.requests[0].headers["x-api-key"] == KEY
    assert KEY not in caplog.text


async def test_a_missing_key_is_coded(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = create_model(ENTRY, client=httpx.AsyncClient(transport=httpx.MockTransport(Recorder())))
    with pytest.raises(ModelError) as caught:
        await run(model)  # type: ignore[arg-type]
    assert caught.value.code == "ai.api_key_missing"


@pytest.mark.parametrize(
    "event",
    [
        b'event: message_start\ndata: {"type": "message_start", "message": "x"}\n\n',
        b'event: content_block_start\ndata: {"type": "content_block_start", "index": "a"}\n\n',
        b'event: message_start\ndata: ["not", "an", "object"]\n\n',
        b'event: error\ndata: {"type": "error", "error": "overloaded"}\n\n',
        b'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": [1]}\n\n',
    ],
    ids=[
        "message-a-string",
        "index-not-a-number",
        "event-an-array",
        "error-a-string",
        "delta-an-array",
    ],
)
async def test_an_event_of_the_wrong_shape_is_a_coded_provider_error(event: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=event, headers={"content-type": "text/event-stream"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = AnthropicModel(ENTRY, api_key=KEY, client=client, retry_delays=())
    with pytest.raises(ModelError) as caught:
        await run(model)
    assert caught.value.code == "ai.provider_failed"
    assert caught.value.details["reason"] == "unexpected_shape"
