"""The shared SSE parser and the Stop race used by the HTTP providers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from app.core.models.base import StreamOptions
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
    stop = asyncio.Event()

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
