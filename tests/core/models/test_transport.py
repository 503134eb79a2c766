"""The shared SSE parser and the Stop race used by the HTTP providers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.core.errors import ModelError
from app.core.models.base import StreamOptions
from app.core.models.stop_signal import StopSignal
from app.core.models.stream_limits import StreamClock, StreamLimits, bounded_lines
from app.core.models.transport import SSEEvent, Stopped, sse_events, until_stopped


async def lines(*items: str) -> AsyncIterator[str]:
    for item in items:
        yield item


async def test_sse_events_join_data_and_skip_comments() -> None:
    source = lines(
        ": keep-alive",
        "event: message_start",
        'data: {"a":',
        "data: 1}",
        "",
        "data:no-space\r",
        "",
        "data: tail-without-blank-line",
    )
    events = [event async for event in sse_events(source)]
    assert events == [
        SSEEvent("message_start", '{"a":\n1}'),
        SSEEvent("", "no-space"),
        SSEEvent("", "tail-without-blank-line"),
    ]
    assert events[0].json() == {"a": 1}


async def test_until_stopped_interrupts_a_silent_source() -> None:
    stop = StopSignal()

    async def silent() -> AsyncIterator[int]:
        yield 1
        await asyncio.sleep(30)
        yield 2

    received: list[int] = []
    with pytest.raises(Stopped):
        async for item in until_stopped(silent(), StreamOptions(stop_event=stop)):
            received.append(item)
            asyncio.get_running_loop().call_soon(stop.set)
    assert received == [1]


async def test_stop_from_another_thread_wakes_a_silent_wait_without_polling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The window's Stop (set on the GUI thread) ends the wait for a silent server at once, and
    nothing wakes up meanwhile to look at the flag."""
    stop = StopSignal()
    waits: list[float] = []
    real_wait = asyncio.wait

    async def wait(
        fs: Any, *, timeout: float | None = None, return_when: str = "ALL_COMPLETED"
    ) -> Any:
        waits.append(time.perf_counter())
        return await real_wait(fs, timeout=timeout, return_when=return_when)

    async def silent() -> AsyncIterator[int]:
        yield 1
        await asyncio.sleep(30)
        yield 2

    monkeypatch.setattr(asyncio, "wait", wait)
    pressed: list[float] = []

    def press() -> None:
        pressed.append(time.perf_counter())
        stop.set()

    timer = threading.Timer(0.3, press)
    timer.start()
    received: list[int] = []
    try:
        with pytest.raises(Stopped):
            async for item in until_stopped(silent(), StreamOptions(stop_event=stop)):
                received.append(item)
    finally:
        timer.cancel()
    assert received == [1] and pressed
    assert time.perf_counter() - pressed[0] < 0.25
    # one wait for the item, one for the silence (until Stop), one for the cancelled step's
    # end; a poll every 50 ms would have waited 6 times more
    assert len(waits) == 3 and waits[2] >= pressed[0], (pressed, waits)


async def chunks(*items: bytes) -> AsyncIterator[bytes]:
    for item in items:
        yield item


LIMITS = StreamLimits(idle_s=1, turn_s=1, max_line_bytes=10, max_reply_bytes=40)


async def test_bounded_lines_split_across_chunks_and_replace_bad_utf8() -> None:
    source = chunks(b"ab", b"c\nd\xff", b"e\n\nlast")
    assert [line async for line in bounded_lines(source, LIMITS, "p")] == [
        "abc",
        "d\ufffde",
        "",
        "last",
    ]


@pytest.mark.parametrize(
    ("parts", "what"),
    [
        ((b"x" * 11,), "a line"),
        ((b"x" * 6, b"x" * 6), "a line"),
        ((b"123456789\n",) * 5, "a reply"),
    ],
)
async def test_bounded_lines_enforce_the_caps(parts: tuple[bytes, ...], what: str) -> None:
    with pytest.raises(ModelError) as caught:
        [line async for line in bounded_lines(chunks(*parts), LIMITS, "p")]
    assert caught.value.code == "ai.stream_too_large"
    assert caught.value.details["what"] == what


async def test_an_event_of_many_data_lines_is_capped() -> None:
    with pytest.raises(ModelError) as caught:
        [e async for e in sse_events(lines(*["data: 12345"] * 5), max_event_chars=20)]
    assert caught.value.details["what"] == "an event"


def test_lone_surrogates_in_event_json_become_replacement_characters() -> None:
    event = SSEEvent("", '{"t": "a \\ud800 b", "k\\udc00": ["\\ud83d\\ude00"]}')
    assert event.json() == {"t": "a \ufffd b", "k\ufffd": ["\U0001f600"]}


def test_deeply_nested_event_json_is_a_coded_error() -> None:
    with pytest.raises(ModelError) as caught:
        SSEEvent("", "[" * 100_000 + "]" * 100_000).json()
    assert caught.value.code == "ai.provider_failed"


async def test_until_stopped_ends_an_idle_wait_with_the_clock_error() -> None:
    async def silent() -> AsyncIterator[int]:
        yield 1
        await asyncio.sleep(30)
        yield 2

    clock = StreamClock(StreamLimits(idle_s=0.05, turn_s=30), "p")
    received: list[int] = []
    with pytest.raises(ModelError) as caught:
        async for item in until_stopped(silent(), StreamOptions(), clock):
            received.append(item)
    assert received == [1]
    assert caught.value.code == "ai.stream_idle"


async def test_until_stopped_ends_a_busy_stream_at_the_deadline() -> None:
    async def busy() -> AsyncIterator[int]:
        while True:
            await asyncio.sleep(0.001)
            yield 1

    clock = StreamClock(StreamLimits(idle_s=30, turn_s=0.05), "p")
    with pytest.raises(ModelError) as caught:
        async for _ in until_stopped(busy(), StreamOptions(), clock):
            clock.progress()
    assert caught.value.code == "ai.stream_timeout"
