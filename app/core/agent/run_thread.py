"""The runs' own event loop, on a thread of its own: a run never works on its caller's loop.

A run's work between its frames is the core's: tool calls that read the archive, the egress
gate's look-ups, plan validation, citation checks. Run on the caller's loop, that work would
hold the app's GUI thread (qasync runs the loop there) for as long as each piece takes. So
:meth:`RunThread.relay` makes each item of a run's event stream on the ``arxiu-agent`` thread's
loop and hands it to the caller's loop; the caller still pulls one frame at a time, so Stop and
a client that goes away act between frames exactly as before. One loop thread serves every
session of the process (it is started on first use and lives as long as the process, a daemon
that holds no archive), so models, which a session creates once, always run on the same loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

THREAD_NAME = "arxiu-agent"


@dataclass
class _Step:
    """The run-loop task producing the item in flight (what a close waits for)."""

    task: asyncio.Task[Any] | None = None


class _End:
    """The stream ended."""


_END = _End()


class RunThread:
    """An event loop running forever on a daemon thread, started on first use."""

    def __init__(self, name: str = THREAD_NAME) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        """Whether the loop thread is running."""
        return self._loop is not None

    def loop(self) -> asyncio.AbstractEventLoop:
        """The runs' loop (its thread started on first use)."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=_serve, args=(loop,), name=self.name, daemon=True).start()
                self._loop = loop
            return self._loop

    def here(self) -> bool:
        """Whether the caller already runs on the runs' loop."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the runs' loop (at once when already there)."""
        if self.here():
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop()))

    async def relay(self, source: AsyncIterator[T]) -> AsyncIterator[T]:
        """The items of ``source``, each made on the runs' loop when the caller asks for it.

        Closing (or cancelling) the relay stops the item in flight and closes ``source`` there;
        an exception ``source`` raises reaches the caller with its traceback.
        """
        if self.here():
            async for item in source:
                yield item
            return
        loop, step = self.loop(), _Step()
        try:
            while True:
                made: concurrent.futures.Future[Any]
                made = asyncio.run_coroutine_threadsafe(_next(source, step), loop)
                item = await asyncio.wrap_future(made)
                if isinstance(item, _End):
                    return
                yield item
        finally:
            closing = asyncio.run_coroutine_threadsafe(_close(source, step), loop)
            await asyncio.shield(asyncio.wrap_future(closing))


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


async def _next(source: AsyncIterator[Any], step: _Step) -> Any:
    """The next item of ``source`` (:data:`_END` once it ends), made on this loop."""
    step.task = asyncio.current_task()
    try:
        return await anext(source)
    except StopAsyncIteration:
        return _END
    finally:
        step.task = None


async def _close(source: AsyncIterator[Any], step: _Step) -> None:
    """Close ``source`` once the item in flight (cancelled with its caller) has stopped."""
    running = step.task
    if running is not None and not running.done():
        running.cancel()
        await asyncio.wait([running])
    closer = getattr(source, "aclose", None)
    if closer is not None:
        await closer()


RUNS = RunThread()
"""The loop every session's runs stream on."""
