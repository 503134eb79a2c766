"""The Stop button's flag, which tells whoever waits on a model the moment it is set.

A plain ``threading.Event`` set on the GUI thread cannot wake an event loop on another thread,
so a model that waits for its next token could only notice Stop by waking up now and then to
look. :class:`StopSignal` is an ``Event`` whose :meth:`~StopSignal.set` also calls its
listeners (on the thread that pressed Stop): the local model's listener wakes the coroutine
that reads the worker's pipe, an HTTP provider's wakes the coroutine that awaits the next
event, each through its loop's ``call_soon_threadsafe``. Nothing waits with a timeout to look
at the flag.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator


class StopSignal(threading.Event):
    """A ``threading.Event`` that calls its listeners when it is set."""

    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[Callable[[], None]] = []
        self._guard = threading.Lock()

    def set(self) -> None:
        """Set the flag and call every listener once (a listener's error is not raised here:
        the one who pressed Stop is not the one who listens)."""
        with self._guard:
            first = not self.is_set()
            super().set()
            listeners = list(self._listeners) if first else []
        for listener in listeners:
            with contextlib.suppress(Exception):
                listener()

    @contextlib.contextmanager
    def listening(self, listener: Callable[[], None]) -> Iterator[None]:
        """Call ``listener`` when the flag is set while inside the block (at once when it is
        set already)."""
        with self._guard:
            self._listeners.append(listener)
            already = self.is_set()
        try:
            if already:
                listener()
            yield
        finally:
            with self._guard:
                self._listeners.remove(listener)

    @contextlib.contextmanager
    def future(self) -> Iterator[asyncio.Future[None]]:
        """A future of the running loop, done when the flag is set (inside the block)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(_finish, done)

        with self.listening(wake):
            yield done
        done.cancel()


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
