"""The thread that reads the local worker's pipe and hands each message to the waiting event loop.

One daemon thread per worker blocks in ``Connection.recv`` (no polling, no timeout) and keeps
what it reads in order; a coroutine awaiting :meth:`PipeReader.next_batch` is woken through its
loop's ``call_soon_threadsafe`` the moment a message lands, and takes every message waiting at
once. The messages live in the reader, not in a loop's callbacks, so a request served on another
event loop (tests, a second ``asyncio.run``) still finds what the previous one left unread.
When the pipe ends (the worker exited or was killed) the reader adds :data:`PIPE_CLOSED` and
stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Protocol

from app.core.models.local_messages import FromWorker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PipeClosed:
    """The worker's end of the pipe is gone: it exited, crashed or was killed."""


PIPE_CLOSED = PipeClosed()
Received = FromWorker | PipeClosed


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class PipeReader:
    """Reads ``conn`` on its own thread until it ends; :meth:`next_batch` awaits its messages."""

    def __init__(self, conn: Connection, name: str) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._items: deque[Received] = deque()
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._poked = False
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                message: Received = self._conn.recv()
            except (EOFError, OSError):
                message = PIPE_CLOSED
            except Exception:  # an unreadable message: the stream is lost, as if it ended
                log.exception("unreadable message from the local model worker")
                message = PIPE_CLOSED
            self._post(message)
            if message is PIPE_CLOSED:
                return

    def _post(self, message: Received) -> None:
        with self._lock:
            self._items.append(message)
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            loop, future = waiter
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(_wake, future)

    def wake(self) -> None:
        """Wake the coroutine waiting in :meth:`next_batch` with no message (any thread): the
        Stop button was pressed and the waiter must pass it on to the worker."""
        with self._lock:
            waiter, self._waiter = self._waiter, None
            self._poked = waiter is None  # nobody waits yet: the next wait returns at once
        if waiter is not None:
            loop, future = waiter
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(_wake, future)

    def _take(self) -> list[Received]:
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items

    async def next_batch(self, timeout: float | None = None) -> list[Received]:
        """Every message waiting, waiting up to ``timeout`` s for one (``[]``: none came, or
        :meth:`wake` was called, also just before this call)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._items or self._poked:
                items = list(self._items)
                self._items.clear()
                self._poked = False
                return items
            future: asyncio.Future[None] = loop.create_future()
            self._waiter = (loop, future)
        timer = None if timeout is None else loop.call_later(timeout, _wake, future)
        try:
            await future
        finally:
            if timer is not None:
                timer.cancel()
            with self._lock:
                if self._waiter is not None and self._waiter[1] is future:
                    self._waiter = None
        return self._take()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the thread to end (after the pipe has ended)."""
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """Whether the thread still reads (the pipe has not ended)."""
        return self._thread.is_alive()


class MessageSource(Protocol):
    """Where the local model reads its worker's messages (a :class:`PipeReader`)."""

    async def next_batch(self, timeout: float | None = None) -> list[Received]:
        """Every message waiting, waiting up to ``timeout`` s for one (``[]``: none came)."""
        ...

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the reading to end (after the pipe has ended)."""
        ...

    def wake(self) -> None:
        """Wake a waiting :meth:`next_batch` with no message (from any thread)."""
        ...
