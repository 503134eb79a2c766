"""The OpenAI-compatible provider on replayed chunks: quirks, errors, retries, Stop."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.core.errors import ModelError
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
from app.core.models.openai_compatible import OpenAICompatibleModel, chat_url
from app.core.models.stop_signal import StopSignal

ENTRY = ModelEntry(
    id="vllm",
    label="vLLM",
    provider="openai_compatible",
    model="qwen",
    endpoint="http://llm.test/v1",
    egress="local",
    timeout_s=5,
)
TOOL = ToolSpec("lookup", "Look a record up.", {"type": "object", "properties": {}})


def sse(*chunks: Any, done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(c) if not isinstance(c, str) else c}\n\n" for c in chunks]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


Handler = Callable[[httpx.Request], httpx.Response]


def model_with(handler: Handler, **kwargs: Any) -> OpenAICompatibleModel:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return OpenAICompatibleModel(ENTRY, client=client, retry_delays=(0, 0), **kwargs)


def replay(body: bytes, status: int = 200) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"content-type": "text/event-stream"})

    return handler


async def run(
    model: OpenAICompatibleModel, options: StreamOptions | None = None
) -> list[ModelEvent]:
    messages = [Message("user", "hi")]
    return [e async for e in model.stream(messages, [TOOL], options or StreamOptions())]


def calls(events: list[ModelEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallEvent)]


async def test_text_usage_and_stop() -> None:
    body = sse(
        delta(role="assistant", content=""),
        delta(content="Hel"),
        delta(content="lo"),
        finish("stop"),
        {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}},
    )
    events = await run(model_with(replay(body)))
    assert events == [TextDelta("Hel"), TextDelta("lo"), Usage(9, 2, 0), Stop("end_turn")]


async def test_streamed_tool_call_fragments_are_joined() -> None:
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup"}}
    body = sse(
        delta(tool_calls=[first]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"id": '}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": "7}"}}]),
        finish("tool_calls"),
    )
    events = await run(model_with(replay(body)))
    assert calls(events) == [ToolCall("call_1", "lookup", {"id": 7})]
    assert events[-1] == Stop("tool_use")


async def test_quirk_arguments_as_an_object_in_one_final_chunk_without_id() -> None:
    whole = {"function": {"name": "lookup", "arguments": {"id": 7, "lang": "ca"}}}
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [whole]}, "finish_reason": "stop"}]}
    events = await run(model_with(replay(sse(chunk, done=False))))
    (call,) = calls(events)
    assert (call.name, call.arguments) == ("lookup", {"id": 7, "lang": "ca"})
    assert call.id.startswith("call_") and len(call.id) > 10
    assert events[-1] == Stop("tool_use")


async def test_quirk_two_calls_without_index_are_told_apart_by_id() -> None:
    body = sse(
        delta(tool_calls=[{"id": "a", "function": {"name": "lookup", "arguments": '{"id":'}}]),
        delta(tool_calls=[{"id": "a", "function": {"arguments": "1}"}}]),
        delta(tool_calls=[{"id": "b", "function": {"name": "lookup", "arguments": '{"id":2}'}}]),
        finish("tool_calls"),
    )
    events = await run(model_with(replay(body)))
    assert [(c.id, c.arguments) for c in calls(events)] == [("a", {"id": 1}), ("b", {"id": 2})]


async def test_reasoning_content_becomes_a_thinking_block() -> None:
    body = sse(
        delta(reasoning_content="Let me think"),
        delta(reasoning_content="."),
        delta(content="Done"),
        finish("stop"),
    )
    events = await run(model_with(replay(body)))
    assert events[:5] == [
        ThinkingStart(),
        ThinkingDelta("Let me think"),
        ThinkingDelta("."),
        ThinkingStop(),
        TextDelta("Done"),
    ]


async def test_invalid_tool_arguments_are_a_coded_error() -> None:
    bad = {"index": 0, "id": "c", "function": {"name": "lookup", "arguments": "{oops"}}
    with pytest.raises(ModelError) as caught:
        await run(model_with(replay(sse(delta(tool_calls=[bad]), finish("tool_calls")))))
    assert caught.value.code == "ai.tool_call_invalid"


async def test_an_in_stream_error_object_is_coded() -> None:
    body = sse(delta(content="par"), {"error": {"message": "model crashed", "type": "server"}})
    with pytest.raises(ModelError) as caught:
        await run(model_with(replay(body)))
    assert caught.value.code == "ai.provider_failed"
    assert caught.value.details["server_message"] == "model crashed"


async def test_a_stream_cut_before_the_end_is_an_error() -> None:
    with pytest.raises(ModelError) as caught:
        await run(model_with(replay(sse(delta(content="Hal"), done=False))))
    assert caught.value.details["reason"] == "stream_ended_early"


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (401, "ai.provider_auth", False),
        (403, "ai.provider_auth", False),
        (404, "ai.provider_failed", False),
        (400, "ai.provider_failed", False),
        (429, "ai.provider_overloaded", True),
        (500, "ai.provider_failed", True),
        (503, "ai.provider_failed", True),
    ],
)
async def test_http_errors_are_coded(status: int, code: str, retryable: bool) -> None:
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        return httpx.Response(status, json={"error": {"message": "nope"}})

    with pytest.raises(ModelError) as caught:
        await run(model_with(handler))
    assert (caught.value.code, caught.value.retryable) == (code, retryable)
    assert caught.value.details["status"] == status
    assert len(attempts) == (3 if retryable else 1)


async def test_a_retry_before_the_first_chunk_succeeds() -> None:
    answers = [
        httpx.Response(503),
        httpx.Response(200, content=sse(delta(content="ok"), finish("stop"))),
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        return answers.pop(0)

    events = await run(model_with(handler))
    assert TextDelta("ok") in events


async def test_no_retry_after_the_first_chunk() -> None:
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        return httpx.Response(200, content=sse(delta(content="a"), {"error": "boom"}, done=False))

    with pytest.raises(ModelError):
        await run(model_with(handler))
    assert len(attempts) == 1


async def test_connection_refused_is_unreachable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(ModelError) as caught:
        await run(model_with(handler))
    assert caught.value.code == "ai.provider_unreachable"


async def test_idle_timeout_is_coded() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.extensions["timeout"]["read"] == ENTRY.timeout_s
        raise httpx.ReadTimeout("idle", request=request)

    with pytest.raises(ModelError) as caught:
        await run(model_with(handler))
    assert caught.value.code == "ai.provider_timeout"


async def test_stop_while_the_server_is_silent() -> None:
    stop = StopSignal()

    async def slow_body() -> Any:
        yield sse(delta(content="first"), done=False)
        stop.set()
        await asyncio.sleep(30)
        yield b""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=slow_body())

    events = await run(model_with(handler), StreamOptions(stop_event=stop))
    assert events == [TextDelta("first"), Stop("stopped")]


async def test_request_body_and_headers(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=sse(finish("stop")))

    caplog.set_level(logging.DEBUG)
    model = model_with(handler, api_key="sk-local-secret")
    image = Message("user", "what is this?", images=(("image/png", b"\x89PNG"),))
    history = [
        Message("system", "sys"),
        image,
        Message("assistant", "", tool_calls=(ToolCall("c1", "lookup", {"id": 1}),)),
        Message("tool", "{}", tool_call_id="c1", name="lookup"),
    ]
    options = StreamOptions(max_tokens=50000, tool_choice="required")
    _ = [e async for e in model.stream(history, [TOOL], options)]
    body = json.loads(seen[0].content)
    assert seen[0].url == "http://llm.test/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer sk-local-secret"
    assert body["max_tokens"] == ENTRY.max_tokens and body["tool_choice"] == "required"
    assert body["messages"][1]["content"][1]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"id": 1}'
    assert body["messages"][3]["tool_call_id"] == "c1"
    assert "sk-local-secret" not in caplog.text


def test_chat_url_accepts_base_or_full_urls() -> None:
    assert chat_url("http://h/v1/") == "http://h/v1/chat/completions"
    assert chat_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


def test_an_entry_without_an_endpoint_is_a_catalog_error() -> None:
    with pytest.raises(ModelError) as caught:
        OpenAICompatibleModel(dataclasses.replace(ENTRY, endpoint=None))
    assert caught.value.code == "ai.model_catalog_invalid"


@pytest.mark.parametrize(
    "chunk",
    [
        "[1, 2]",
        '"text"',
        '{"choices": "x"}',
        '{"choices": [{"delta": [1]}]}',
        '{"choices": [1]}',
        '{"choices": [{"delta": {"tool_calls": "x"}}]}',
        '{"choices": [{"delta": {"tool_calls": [{"function": "f"}]}}]}',
        '{"choices": [], "usage": {"prompt_tokens": [1]}}',
    ],
)
async def test_a_chunk_of_the_wrong_shape_is_a_coded_provider_error(chunk: str) -> None:
    with pytest.raises(ModelError) as caught:
        await run(model_with(replay(sse(chunk, done=False))))
    assert caught.value.code == "ai.provider_failed"
    assert caught.value.details["reason"] == "unexpected_shape"


async def test_a_lone_surrogate_in_a_chunk_becomes_a_replacement_character() -> None:
    body = sse('{"choices": [{"delta": {"content": "a \\ud800 b"}}]}', finish("stop"))
    events = await run(model_with(replay(body)))
    assert TextDelta("a \ufffd b") in events
