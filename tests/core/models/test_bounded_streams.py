"""Bounded model streams against real loopback servers: keep-alives, trickles, endless lines.

Every case ends by the code's own limits (a coded error), never by a timed assertion; the
loopback bodies stop after ``SAFETY_S`` so that unbounded code fails instead of hanging.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli import main
from app.core.errors import ModelError
from app.core.models.anthropic import AnthropicModel
from app.core.models.base import Message, ModelEvent, StreamOptions, TextDelta
from app.core.models.catalog import ModelEntry
from app.core.models.openai_compatible import OpenAICompatibleModel
from app.core.models.stream_limits import MAX_LINE_BYTES, StreamLimits
from tests.core.agent.conftest import build_archive
from tests.core.models.loopback import (
    LoopbackServer,
    endless_line,
    fixed,
    forever,
    openai_catalog,
    openai_chunk,
    openai_end,
)

PING = b": ping\n\n"
ANTHROPIC_START = (
    b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
)
ANTHROPIC_PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def openai(url: str, limits: StreamLimits | None = None) -> OpenAICompatibleModel:
    entry = ModelEntry(
        id="srv", label="srv", provider="openai_compatible", model="m", endpoint=url, timeout_s=30
    )
    return OpenAICompatibleModel(entry, retry_delays=(), limits=limits)


def anthropic(url: str, limits: StreamLimits) -> AnthropicModel:
    entry = ModelEntry(
        id="claude", label="c", provider="anthropic", model="m", endpoint=url, egress="external"
    )
    return AnthropicModel(entry, api_key="k", retry_delays=(), limits=limits)


async def collect(model: Any, into: list[ModelEvent]) -> None:
    try:
        async for event in model.stream([Message("user", "hi")], [], StreamOptions()):
            into.append(event)
    finally:
        await model.aclose()


async def test_pings_forever_end_with_stream_idle() -> None:
    with LoopbackServer(forever(PING, 0.02)) as server, pytest.raises(ModelError) as caught:
        await collect(openai(server.url, StreamLimits(idle_s=0.3, turn_s=60)), [])
    assert caught.value.code == "ai.stream_idle"
    assert caught.value.retryable
    assert server.sent > 3 * len(PING)  # keep-alives kept arriving; they did not count


async def test_anthropic_ping_events_do_not_reset_the_idle_timer() -> None:
    body = forever(ANTHROPIC_PING, 0.02, first=ANTHROPIC_START)
    with LoopbackServer(body) as server, pytest.raises(ModelError) as caught:
        await collect(anthropic(server.url, StreamLimits(idle_s=0.3, turn_s=60)), [])
    assert caught.value.code == "ai.stream_idle"
    assert server.sent > len(ANTHROPIC_START) + 3 * len(ANTHROPIC_PING)


async def test_text_trickled_forever_ends_at_the_turn_limit() -> None:
    events: list[ModelEvent] = []
    server = LoopbackServer(forever(openai_chunk("la "), 0.02))
    with server, pytest.raises(ModelError) as caught:
        await collect(openai(server.url, StreamLimits(idle_s=5, turn_s=0.6)), events)
    assert caught.value.code == "ai.stream_timeout"
    assert not caught.value.retryable
    assert events and all(e == TextDelta("la ") for e in events)
    assert server.requests == 1


async def test_a_300_mb_line_is_dropped_after_the_line_cap() -> None:
    total = 300 << 20
    with LoopbackServer(endless_line(total)) as server, pytest.raises(ModelError) as caught:
        await collect(openai(server.url), [])
    assert caught.value.code == "ai.stream_too_large"
    assert caught.value.details["what"] == "a line"
    # what was read stays near the cap (plus socket buffers), far from the 300 MB sent
    assert server.sent < MAX_LINE_BYTES + (32 << 20) < total


def counting_body(
    total: int, block: int, pulled: list[int], *, lines: bool
) -> AsyncIterator[bytes]:
    """``total`` bytes: one endless ``data:`` line, or (``lines``) one comment line per block."""

    async def body() -> AsyncIterator[bytes]:
        if not lines:
            yield b"data: "
        for _ in range(total // block):
            pulled[0] += block
            yield b": " + b"y" * (block - 3) + b"\n" if lines else b"y" * block

    return body()


@pytest.mark.parametrize(
    ("limits", "what"),
    [
        (StreamLimits(idle_s=30, turn_s=60, max_line_bytes=1 << 20), "a line"),
        (StreamLimits(idle_s=30, turn_s=60, max_reply_bytes=2 << 20), "a reply"),
    ],
)
async def test_the_caps_stop_reading_within_one_chunk(limits: StreamLimits, what: str) -> None:
    block = 64 << 10
    pulled = [0]
    body = counting_body(300 << 20, block, pulled, lines=what == "a reply")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = OpenAICompatibleModel(
        ModelEntry(id="m", label="m", provider="openai_compatible", model="m", endpoint="http://x"),
        client=client,
        retry_delays=(),
        limits=limits,
    )
    with pytest.raises(ModelError) as caught:
        await collect(model, [])
    await client.aclose()
    assert caught.value.code == "ai.stream_too_large"
    assert caught.value.details["what"] == what
    cap = limits.max_line_bytes if what == "a line" else limits.max_reply_bytes
    assert pulled[0] <= cap + 2 * block


async def test_data_lines_without_a_blank_line_are_capped_as_one_event() -> None:
    line = b"data: " + b"z" * 1000 + b"\n"
    with LoopbackServer(forever(line, 0)) as server:
        limits = StreamLimits(idle_s=30, turn_s=60, max_line_bytes=100_000)
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url, limits), [])
    assert caught.value.code == "ai.stream_too_large"
    assert caught.value.details["what"] == "an event"


async def test_an_error_status_reads_only_the_head_of_a_huge_body() -> None:
    server = LoopbackServer(endless_line(300 << 20), status=500)
    with server, pytest.raises(ModelError) as caught:
        await collect(openai(server.url), [])
    assert caught.value.code == "ai.provider_failed"
    assert caught.value.details["status"] == 500
    assert server.sent < 300 << 20


def test_the_turn_limit_follows_the_idle_timeout() -> None:
    assert StreamLimits.for_timeout(0.5).turn_s == 5
    assert StreamLimits.for_timeout(120).turn_s == 900
    assert StreamLimits.for_timeout(3600).turn_s == 3600
    assert StreamLimits.for_timeout(120).idle_s == 120


# -- arxiu ask against the loopback servers --------------------------------------------------


def ask(folder: Path, home: Path, url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    (home / "models.json").write_text(json.dumps(openai_catalog(url, 0.5)), encoding="utf-8")
    code = main(["ask", "what happened?", "--json-events", "--archive", str(folder)])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return code, events


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    build_archive(tmp_path / "oh").close()
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    return tmp_path / "oh"


def test_ask_ends_with_a_coded_error_when_the_server_only_pings(
    folder: Path, arxiu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackServer(forever(PING, 0.02)) as server:
        code, events = ask(folder, arxiu_home, server.url, capsys)
    assert code != 0
    assert events[-1]["event"] == "error"
    assert events[-1]["data"]["code"] in ("ai.stream_idle", "ai.stream_timeout")


def test_ask_ends_with_stream_timeout_when_the_server_trickles_forever(
    folder: Path, arxiu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackServer(forever(openai_chunk("la "), 0.05)) as server:
        code, events = ask(folder, arxiu_home, server.url, capsys)
    assert code != 0
    assert events[-1]["event"] == "error"
    assert events[-1]["data"]["code"] == "ai.stream_timeout"
    assert any(e["event"] == "text" for e in events)


def test_a_lone_surrogate_in_the_model_text_does_not_crash_ask(
    folder: Path, arxiu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    escaped = b'data: {"choices": [{"index": 0, "delta": {"content": "bad \\ud800 text"}}]}\n\n'
    with LoopbackServer(fixed(escaped, openai_end())) as server:
        code, events = ask(folder, arxiu_home, server.url, capsys)
    assert code == 0
    assert events[-1]["event"] == "final"
    assert "bad \ufffd text" in events[-1]["data"]["answer"]


@pytest.mark.parametrize("json_events", [True, False])
def test_a_lone_surrogate_reaching_the_output_is_printed_escaped(
    folder: Path,
    arxiu_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    json_events: bool,
) -> None:
    """Whatever model produced it (here a scripted one), ``arxiu ask`` does not crash on it."""
    from app.core.models.scripted import ScriptedModel, Turn

    catalog = {"models": [{"id": "s", "label": "S", "provider": "scripted", "model": "s"}]}
    (arxiu_home / "models.json").write_text(json.dumps(catalog), encoding="utf-8")
    model = ScriptedModel(id="s")
    model.extend(Turn(text="bad \ud800 text"))
    monkeypatch.setattr("app.core.models.factory.create_model", lambda entry: model)
    argv = ["ask", "q", "--archive", str(folder)] + (["--json-events"] if json_events else [])

    code = main(argv)

    out = capsys.readouterr().out
    assert code == 0
    if json_events:
        final = json.loads(out.splitlines()[-1])
        assert final["event"] == "final" and final["data"]["answer"] == "bad \ud800 text"
    else:
        assert "bad \\ud800 text" in out


# -- the local worker ------------------------------------------------------------------------


@pytest.mark.slow
def test_the_local_worker_ends_a_reply_past_its_time_limit_with_stream_timeout() -> None:
    import multiprocessing

    from app.core.models.base import Message
    from app.core.models.gguf import bundled_gguf
    from app.core.models.local_messages import Close, Failed, Generate, Ready, Text, WorkerConfig
    from app.core.models.local_worker import serve

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    stop = context.Event()
    config = WorkerConfig(str(bundled_gguf()), 512, extra_buffers=False)
    process = context.Process(target=serve, args=(child, stop, config), daemon=True)
    process.start()
    try:
        assert parent.poll(120) and isinstance(parent.recv(), Ready)
        ask = (Message("user", "Count from one to one hundred."),)
        parent.send(Generate(ask, max_tokens=200, temperature=0.0, max_seconds=1e-6))
        received: list[object] = []
        while not received or isinstance(received[-1], Text):
            assert parent.poll(120)
            received.append(parent.recv())
        parent.send(Close())
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()
    failed = received[-1]
    assert isinstance(failed, Failed) and failed.code == "ai.stream_timeout"
    assert failed.details["usage"]["output_tokens"] < 200
