"""Generated misbehaving model servers (real loopback HTTP servers) through a whole assistant run.

Malformed SSE, wrong shapes, invalid UTF-8, huge chunks, keep-alives or text forever, streams
cut short, error statuses: each run must end with one coded ``error`` event (never
``ai.internal``, never a traceback), by the code's own limits, and the archive must be unchanged.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.events import ErrorEvent, Event, FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.models.anthropic import AnthropicModel
from app.core.models.base import ChatModel
from app.core.models.catalog import ModelEntry, catalog_from_data
from app.core.models.openai_compatible import OpenAICompatibleModel
from app.core.models.stream_limits import StreamLimits
from app.core.session import AssistantSession
from tests.core.agent.conftest import build_archive
from tests.core.models.loopback import (
    Body,
    LoopbackServer,
    endless_line,
    fixed,
    forever,
    openai_chunk,
    openai_end,
)
from tests.core.test_bad_input_suite import report, stored_digest

LIMITS = StreamLimits(idle_s=0.3, turn_s=1.5, max_line_bytes=64 << 10, max_reply_bytes=1 << 20)
DEEP = b"[" * 100_000 + b"]" * 100_000


def data(payload: object) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {text}\n\n".encode()


def choice(delta: object) -> bytes:
    return data({"choices": [{"index": 0, "delta": delta}]})


def event(name: str, payload: object) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


START = event("message_start", {"type": "message_start", "message": {"usage": {}}})


def openai_bodies() -> dict[str, tuple[Body, int]]:
    rng = random.Random(20261201)
    bad_call = {"tool_calls": [{"index": 0, "function": {"name": "x", "arguments": "{bad"}}]}
    bodies: dict[str, tuple[Body, int]] = {
        "not JSON": (fixed(data("not json")), 200),
        "a JSON array": (fixed(data([1, 2])), 200),
        "a JSON string": (fixed(data('"str"')), 200),
        "choices a string": (fixed(data({"choices": "x"})), 200),
        "delta a list": (fixed(choice([])), 200),
        "100k nested brackets": (fixed(b"data: " + DEEP + b"\n\n"), 200),
        "in-stream error": (fixed(data({"error": {"message": "boom"}})), 200),
        "invalid UTF-8": (fixed(b"data: \xff\xfe\xfd\n\n"), 200),
        "binary garbage": (fixed(rng.randbytes(4096)), 200),
        "tool arguments not JSON": (fixed(choice(bad_call), openai_end("tool_calls")), 200),
        "tool call without a name": (
            fixed(choice({"tool_calls": [{"index": 0, "function": {}}]}), openai_end()),
            200,
        ),
        "content a number, then cut": (fixed(choice({"content": 5})), 200),
        "cut after some text": (fixed(openai_chunk("half an ans")), 200),
        "empty body": (fixed(), 200),
        "one huge line": (endless_line(300 << 20, block=64 << 10), 200),
        "one huge event": (forever(b"data: " + b"z" * 4000 + b"\n", 0), 200),
        "a reply past the cap": (forever(b": " + b"p" * 4000 + b"\n", 0), 200),
        "pings forever": (forever(b": ping\n\n", 0.02), 200),
        "text trickled forever": (forever(openai_chunk("la "), 0.02), 200),
        "empty events forever": (forever(data({}), 0.01), 200),
        "headers, then silence": (forever(b"", 0.05), 200),
        "HTTP 500, huge body": (endless_line(300 << 20), 500),
        "HTTP 401": (fixed(b'{"error": {"message": "no key"}}'), 401),
        "HTTP 404, HTML": (fixed(b"<html>not here</html>"), 404),
    }
    return bodies


def anthropic_bodies() -> dict[str, tuple[Body, int]]:
    bodies: dict[str, tuple[Body, int]] = {
        "message a string": (
            fixed(event("message_start", {"type": "message_start", "message": "x"})),
            200,
        ),
        "index not a number": (
            fixed(
                START, event("content_block_start", {"type": "content_block_start", "index": "a"})
            ),
            200,
        ),
        "overloaded in-band": (
            fixed(START, event("error", {"type": "error", "error": {"type": "overloaded_error"}})),
            200,
        ),
        "tool input not JSON": (
            fixed(
                START,
                event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "tool_use", "id": "t", "name": "x"},
                    },
                ),
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": "{no"},
                    },
                ),
                event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ),
            200,
        ),
        "no message_stop": (fixed(START), 200),
        "not JSON": (fixed(b"event: message_start\ndata: {nope\n\n"), 200),
        "ping events forever": (forever(event("ping", {"type": "ping"}), 0.02, first=START), 200),
        "HTTP 529": (fixed(b'{"error": {"type": "overloaded_error"}}'), 529),
    }
    return bodies


def model_for(entry: ModelEntry) -> ChatModel:
    if entry.provider == "anthropic":
        return AnthropicModel(entry, api_key="k", retry_delays=(), limits=LIMITS)
    return OpenAICompatibleModel(entry, retry_delays=(), limits=LIMITS)


async def run_once(archive: Archive, provider: str, url: str) -> list[Event]:
    entry = {"id": "srv", "label": "Server", "provider": provider, "model": "m", "endpoint": url}
    if provider == "openai_compatible":
        entry["egress"] = "local"
    session = AssistantSession(archive, catalog=catalog_from_data([entry]), model_factory=model_for)
    try:
        stream = await session.chat(
            ChatRequest.from_dict({"question": "what happened?", "model": "srv"})
        )
        return [item async for item in stream]
    finally:
        await session.aclose()


def failure(name: str, events: list[Event]) -> str | None:
    last = events[-1] if events else None
    if isinstance(last, ErrorEvent) and last.code.startswith("ai.") and last.code != "ai.internal":
        return None
    if isinstance(last, FinalEvent):
        return f"{name}: ended with a final event"
    return f"{name}: ended with {last!r}"


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    arch = build_archive(tmp_path / "oh")
    yield arch
    arch.close()


async def test_misbehaving_servers_end_runs_with_coded_errors_and_change_nothing(
    archive: Archive, capsys: pytest.CaptureFixture[str]
) -> None:
    before = stored_digest(archive)
    failures: list[str] = []
    tried = 0
    for provider, bodies in (
        ("openai_compatible", openai_bodies()),
        ("anthropic", anthropic_bodies()),
    ):
        for name, (body, status) in bodies.items():
            tried += 1
            with LoopbackServer(body, status=status) as server:
                events = await run_once(archive, provider, server.url)
            problem = failure(f"{provider}: {name}", events)
            if problem:
                failures.append(problem)
    if stored_digest(archive) != before:
        failures.append("the archive changed")
    report(capsys, "model servers", tried, failures)
