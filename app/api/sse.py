"""Server-Sent Events: frames, heartbeats, and a stream that frees its run when the client goes.

:func:`with_heartbeats` yields each item of an async iterator as it comes and ``None`` whenever
``interval`` seconds pass without one (the caller sends ``: ping``). When the consumer stops
early — the client disconnected and the server cancelled the response — the task reading the
source is cancelled and the source closed, so the run and its model stop at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, TypeVar

T = TypeVar("T")

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "X-Accel-Buffering": "no",
    "Cache-Control": "no-cache",
}
PING = b": ping\n\n"


def frame(event: str, data: Any) -> bytes:
    """One named SSE record (the JSON payload is a single ``data:`` line)."""
    payload = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


_DONE = object()


async def with_heartbeats(source: AsyncIterator[T], interval: float) -> AsyncIterator[T | None]:
    """Items of ``source``, with ``None`` after each ``interval`` seconds of silence.

    One task drains ``source`` into a bounded queue and a timer adds a ``None`` whenever the
    queue has stayed empty for ``interval``; the consumer only reads the queue, so an event
    costs a queue hand-off, not a timeout per item.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=256)

    async def drain() -> None:
        try:
            async for item in source:
                await queue.put(item)
        except Exception as error:  # handed to the consumer, raised there
            await queue.put(_Failure(error))
        await queue.put(_DONE)

    async def beat() -> None:
        while True:
            await asyncio.sleep(interval)
            if queue.empty():
                queue.put_nowait(None)

    producer = asyncio.ensure_future(drain())
    timer = asyncio.ensure_future(beat())
    try:
        while True:
            item = await queue.get()
            if item is _DONE:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        timer.cancel()
        if not producer.done():
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await producer
        close = getattr(source, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()


class _Failure:
    """An exception raised by the source, carried through the queue."""

    def __init__(self, error: Exception) -> None:
        self.error = error
