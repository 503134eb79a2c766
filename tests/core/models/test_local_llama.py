"""The bundled SmolLM2 model through the local provider: streaming, Stop, cache, tools, errors."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from app.core.errors import ModelError
from app.core.models.base import (
    ChatModel,
    Message,
    ModelEvent,
    Stop,
    StreamOptions,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from app.core.models.catalog import builtin_local
from app.core.models.local_llama import LocalLlamaModel
from app.core.models.pipe_reader import PipeReader, Received
from app.core.models.stop_signal import StopSignal

pytestmark = pytest.mark.slow

SYSTEM = Message("system", "You are Arxiu, a careful assistant for archivists. Answer briefly.")
SEARCH = ToolSpec(
    "dedalo_semantic_search",
    "Search the archive's records by meaning.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "section": {"type": "string", "enum": ["oh1", "rsc197"]},
        },
        "required": ["query", "section"],
        "additionalProperties": False,
    },
)
READ = ToolSpec(
    "dedalo_read_record",
    "Read one record.",
    {
        "type": "object",
        "properties": {"section_tipo": {"type": "string"}, "section_id": {"type": "integer"}},
        "required": ["section_tipo", "section_id"],
        "additionalProperties": False,
    },
)


async def collect(
    model: ChatModel, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
) -> list[ModelEvent]:
    return [event async for event in model.stream(messages, tools, options)]


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def usage_of(events: list[ModelEvent]) -> Usage:
    return next(e for e in events if isinstance(e, Usage))


async def test_streams_real_tokens_one_by_one(local_model: LocalLlamaModel) -> None:
    question = Message("user", "Name three things an archivist does.")
    events = await collect(local_model, [SYSTEM, question], [], StreamOptions(max_tokens=40))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 5
    assert text_of(events).strip()
    usage = usage_of(events)
    assert usage.input_tokens > 10 and 0 < usage.output_tokens <= 40
    assert isinstance(events[-1], Stop) and events[-1].reason in ("end_turn", "max_tokens")
    assert isinstance(local_model, ChatModel)


async def test_the_stable_prefix_is_reused_from_the_kv_cache(local_model: LocalLlamaModel) -> None:
    options = StreamOptions(max_tokens=8, temperature=0.0)
    first = await collect(local_model, [SYSTEM, Message("user", "What is a fonds?")], [], options)
    second = [SYSTEM, Message("user", "What is a fonds?"), Message("assistant", text_of(first))]
    second.append(Message("user", "And a series?"))
    events = await collect(local_model, second, [], options)
    usage = usage_of(events)
    prefix = usage_of(first).input_tokens - 1  # everything the first prompt evaluated
    assert usage.cached_tokens >= prefix
    other = [Message("system", "Different instructions entirely."), Message("user", "Hi")]
    assert usage_of(await collect(local_model, other, [], options)).cached_tokens < 5


async def test_stop_mid_answer_keeps_the_partial_text(local_model: LocalLlamaModel) -> None:
    stop = StopSignal()
    ask = Message("user", "Write a long story about a village archive and its flood.")
    seen: list[ModelEvent] = []
    options = StreamOptions(max_tokens=400, temperature=0.0, stop_event=stop)
    async for event in local_model.stream([SYSTEM, ask], [], options):
        seen.append(event)
        if sum(isinstance(e, TextDelta) for e in seen) == 3:
            stop.set()
    assert seen[-1] == Stop("stopped")
    assert usage_of(seen).output_tokens < 400
    assert sum(isinstance(e, TextDelta) for e in seen) >= 3
    after = await collect(local_model, [SYSTEM, ask], [], StreamOptions(max_tokens=4))
    assert text_of(after)  # the same worker answers again


async def test_stop_during_prompt_processing(local_model: LocalLlamaModel) -> None:
    await local_model.load()
    restarts = local_model.restarts
    stop = StopSignal()
    long_text = " ".join(f"Record {i} describes a letter from the mayor." for i in range(300))
    options = StreamOptions(max_tokens=50, stop_event=stop)
    stream = local_model.stream([SYSTEM, Message("user", long_text)], [], options)
    stop.set()  # pressed before the first event: the prompt (~3,000 tokens) is being read
    events = [event async for event in stream]
    assert events[-1] == Stop("stopped")
    assert not any(isinstance(e, TextDelta) for e in events)
    usage = usage_of(events)
    assert usage.output_tokens == 0 and usage.input_tokens > 2000
    assert local_model.restarts == restarts  # stopped between slices, not killed


async def test_stop_pressed_on_another_thread_while_the_prompt_is_read_ends_it_promptly(
    local_model: LocalLlamaModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's Stop: a :class:`StopSignal` set on the GUI thread while the worker is silent
    (reading a prompt of seconds) wakes the wait at once and ends the reply within one graph
    node; nothing wakes up to look at the flag meanwhile (no poll: at most the one empty wake
    that Stop itself makes)."""
    await local_model.load()
    restarts = local_model.restarts
    stop = StopSignal()
    pressed: list[float] = []
    empty: list[float] = []
    real_next_batch = PipeReader.next_batch

    async def next_batch(self: PipeReader, timeout: float | None = None) -> list[Received]:
        batch = await real_next_batch(self, timeout)
        if not batch:
            empty.append(time.perf_counter())
        return batch

    monkeypatch.setattr(PipeReader, "next_batch", next_batch)

    def press() -> None:
        pressed.append(time.perf_counter())
        stop.set()

    long_text = " ".join(f"Record {i} describes a letter from the town clerk." for i in range(300))
    options = StreamOptions(max_tokens=50, stop_event=stop)
    timer = threading.Timer(0.15, press)
    timer.start()
    try:
        events = await collect(local_model, [SYSTEM, Message("user", long_text)], [], options)
    finally:
        timer.cancel()
    assert pressed, "the reply ended before Stop was pressed"
    waited = time.perf_counter() - pressed[0]
    assert events[-1] == Stop("stopped")
    assert not any(isinstance(e, TextDelta) for e in events)  # stopped inside the prompt
    assert usage_of(events).input_tokens > 2000
    assert waited < 1.0, f"the reply ended {waited:.3f} s after Stop"
    assert local_model.restarts == restarts
    assert len(empty) <= 1 and all(at >= pressed[0] for at in empty), (pressed, empty)


async def test_context_overflow_reports_prompt_and_context_sizes() -> None:
    model = LocalLlamaModel(replace(builtin_local(), context_size=256))
    try:
        words = " ".join(["archive"] * 400)
        with pytest.raises(ModelError) as caught:
            await collect(model, [Message("user", words)], [], StreamOptions())
        error = caught.value
        assert error.code == "ai.context_overflow"
        assert error.details["n_ctx"] == 256
        assert error.details["prompt_tokens"] > 256
        assert str(error.details["prompt_tokens"]) in error.message
        fine = await collect(model, [Message("user", "Hi")], [], StreamOptions(max_tokens=3))
        assert isinstance(fine[-1], Stop)  # the worker survived the refusal
    finally:
        await model.aclose()


def _valid(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    types = {"string": str, "integer": int}
    props = schema["properties"]
    if set(arguments) - set(props) or not set(schema["required"]) <= set(arguments):
        return False
    for key, value in arguments.items():
        spec = props[key]
        if not isinstance(value, types[spec["type"]]) or isinstance(value, bool):
            return False
        if "enum" in spec and value not in spec["enum"]:
            return False
    return True


@pytest.mark.parametrize(
    "question",
    ["Find interviews about the reservoir flooding.", "Read record 12 of section oh1."],
)
async def test_grammar_constrained_tool_calls_parse_and_validate(
    local_model: LocalLlamaModel, question: str
) -> None:
    options = StreamOptions(max_tokens=120, temperature=0.0, tool_choice="required")
    events = await collect(
        local_model, [SYSTEM, Message("user", question)], [SEARCH, READ], options
    )
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert len(calls) == 1
    spec = {SEARCH.name: SEARCH, READ.name: READ}[calls[0].name]
    assert _valid(calls[0].arguments, spec.parameters)
    assert calls[0].id.startswith("call_")
    assert not any(isinstance(e, TextDelta) for e in events)
    assert events[-1] == Stop("tool_use")


async def test_tools_are_not_offered_to_a_model_that_cannot_plan(
    local_model: LocalLlamaModel,
) -> None:
    assert local_model.supports_tools is False
    options = StreamOptions(max_tokens=12, temperature=0.0)
    events = await collect(local_model, [SYSTEM, Message("user", "Hello")], [SEARCH], options)
    assert text_of(events)
    assert not any(isinstance(e, ToolCallEvent) for e in events)


async def test_a_crashed_worker_gives_a_coded_error_and_restarts(
    local_model: LocalLlamaModel,
) -> None:
    await local_model.load()
    options = StreamOptions(max_tokens=300, temperature=0.0)
    ask = [SYSTEM, Message("user", "Write a long story about an archive.")]
    with pytest.raises(ModelError) as caught:
        async for event in local_model.stream(ask, [], options):
            if isinstance(event, TextDelta) and local_model.pid is not None:
                os.kill(local_model.pid, signal.SIGKILL)
    assert caught.value.code == "ai.model_crashed"
    assert caught.value.retryable
    again = await collect(local_model, ask, [], StreamOptions(max_tokens=3))
    assert text_of(again)


LONG_PROMPT = " ".join(f"Record {i} describes a letter from the mayor." for i in range(300))
STORY = Message("user", "Write a long story about a village archive and its flood.")


async def _until(condition: Any, limit_s: float = 120.0) -> None:
    """Wait (test side) until ``condition()`` holds."""
    async with asyncio.timeout(limit_s):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_worker_killed_while_reading_the_prompt_is_a_coded_error_not_a_hang(
    local_model: LocalLlamaModel,
) -> None:
    await local_model.load()
    pid, restarts = local_model.pid, local_model.restarts
    assert pid is not None
    options = StreamOptions(max_tokens=400)  # no stop event: only the pipe can end the wait
    seen: list[ModelEvent] = []

    async def consume() -> None:
        async for event in local_model.stream([SYSTEM, Message("user", LONG_PROMPT)], [], options):
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.3)  # the ~3,000-token prompt is being read
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    with pytest.raises(ModelError) as caught:
        async with asyncio.timeout(30):
            await task
    assert caught.value.code == "ai.model_crashed" and caught.value.retryable
    assert time.monotonic() - killed < 10
    assert local_model.pid is None and local_model.restarts == restarts + 1
    again = await collect(
        local_model, [SYSTEM, Message("user", "Hi")], [], StreamOptions(max_tokens=3)
    )
    assert text_of(again) and local_model.pid not in (None, pid)


async def test_leaving_or_cancelling_a_reply_keeps_the_worker(local_model: LocalLlamaModel) -> None:
    await local_model.load()
    pid, restarts = local_model.pid, local_model.restarts
    options = StreamOptions(max_tokens=300, temperature=0.0)
    deltas = 0
    async for event in local_model.stream([SYSTEM, STORY], [], options):
        deltas += isinstance(event, TextDelta)
        if deltas == 2:
            break  # the reader leaves: the worker is told to stop and drained next time
    seen: list[ModelEvent] = []

    async def consume() -> None:
        async for event in local_model.stream([SYSTEM, STORY], [], options):
            seen.append(event)

    task = asyncio.create_task(consume())
    await _until(lambda: any(isinstance(e, TextDelta) for e in seen))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    after = await collect(
        local_model, [SYSTEM, Message("user", "Hi")], [], StreamOptions(max_tokens=4)
    )
    assert text_of(after) and isinstance(after[-1], Stop)
    assert (local_model.pid, local_model.restarts) == (pid, restarts)  # the same child answered


async def test_close_while_streaming_ends_the_reply_stopped_and_another_model_goes_on(
    local_model: LocalLlamaModel,
) -> None:
    other = LocalLlamaModel(replace(builtin_local(), id="other", context_size=1024))
    seen: list[ModelEvent] = []

    async def consume() -> None:
        async for event in other.stream([SYSTEM, STORY], [], StreamOptions(max_tokens=400)):
            seen.append(event)

    try:
        task = asyncio.create_task(consume())
        await _until(lambda: sum(isinstance(e, TextDelta) for e in seen) >= 2)
        pid = other.pid
        assert pid is not None
        async with asyncio.timeout(30):
            await other.aclose()  # the model switch / app shutdown path
            await task
        assert seen[-1] == Stop("stopped") and isinstance(seen[-2], Usage)
        assert other.pid is None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # the child is gone (and reaped)
        # The model in use before goes on answering, and the closed one starts afresh.
        ask = [SYSTEM, Message("user", "Hi")]
        assert text_of(await collect(local_model, ask, [], StreamOptions(max_tokens=3)))
        assert text_of(await collect(other, ask, [], StreamOptions(max_tokens=3)))
        assert other.pid not in (None, pid)
    finally:
        await other.aclose()
