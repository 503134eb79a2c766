""" "A person is waiting": the signal that makes background indexing yield.

A search and a streaming turn hold :meth:`Foreground.hold` while they run; as long as any holder
is in, the indexer starts no new batch (it finishes the one in flight, then waits on this
object's condition, without polling, until the count is back to 0) and the embedding process
leaves its indexing batch between two slices (:mod:`~app.core.index.embed_worker`). Holders
nest and may come from any thread::

    with index.person_waiting():     # Index.search and AssistantSession's runs do this
        hits = index.search(...)

``ARXIU_INDEX_YIELD=0`` switches the yielding off (holding then does nothing), so that a
benchmark can measure the same path with and without it in one run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

log = logging.getLogger(__name__)

YIELD_ENV = "ARXIU_INDEX_YIELD"
"""Set to ``0`` to switch the yielding off (benchmarks compare both)."""

WaitingListener = Callable[[bool], None]
"""Called with ``True`` when the first holder enters, ``False`` when the last one leaves."""


def yielding_enabled() -> bool:
    """Whether background indexing yields to a waiting person (``ARXIU_INDEX_YIELD``)."""
    return os.environ.get(YIELD_ENV, "1").strip() not in ("0", "false", "no", "off")


class Foreground:
    """How many people wait on this index just now (searches, turns), with a condition to wait
    on until none does.

    Args:
        enabled: whether holding counts at all (default: :func:`yielding_enabled`).
    """

    def __init__(self, *, enabled: bool | None = None) -> None:
        self.enabled = yielding_enabled() if enabled is None else enabled
        self._count = 0
        self._condition = threading.Condition()
        self._listeners: list[WaitingListener] = []
        self._telling = threading.Lock()
        self._told = False
        """The state the listeners were last told (they are told each change once, in order)."""

    @property
    def waiting(self) -> bool:
        """Whether someone holds the signal now."""
        with self._condition:
            return self._count > 0

    @property
    def count(self) -> int:
        """How many holders are in."""
        with self._condition:
            return self._count

    def add_listener(self, listener: WaitingListener) -> None:
        """Call ``listener(True)`` when the first holder enters, ``listener(False)`` when the
        last leaves (on the holder's thread, outside the lock)."""
        self._listeners.append(listener)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the signal for the duration of the ``with`` block (nests; any thread)."""
        if not self.enabled:
            yield
            return
        with self._condition:
            self._count += 1
            first = self._count == 1
        if first:
            self._tell()
        try:
            yield
        finally:
            with self._condition:
                self._count -= 1
                last = self._count == 0
                if last:
                    self._condition.notify_all()
            if last:
                self._tell()

    def wait_clear(self, interrupted: Callable[[], bool], timeout: float | None = None) -> bool:
        """Block until nobody holds the signal or ``interrupted()`` is true (re-checked at
        each :meth:`interrupt`); returns whether nobody holds it."""
        with self._condition:
            self._condition.wait_for(lambda: self._count == 0 or interrupted(), timeout)
            return self._count == 0

    def interrupt(self) -> None:
        """Wake :meth:`wait_clear` so that it checks its ``interrupted`` again (cancel, close)."""
        with self._condition:
            self._condition.notify_all()

    def _tell(self) -> None:
        """Tell the listeners the state as it is now, if it is not what they were last told
        (one teller at a time: a holder leaving and another entering on other threads cannot
        leave them told the older state)."""
        with self._telling:
            waiting = self.waiting
            if waiting == self._told:
                return
            self._told = waiting
            for listener in list(self._listeners):
                try:
                    listener(waiting)
                except Exception:  # a broken listener must not fail the search or the turn
                    log.exception("foreground listener failed")


@runtime_checkable
class HoldsForeground(Protocol):
    """A searcher that yields its background work while a person waits (``Index``)."""

    def person_waiting(self) -> AbstractContextManager[None]:
        """Hold "a person is waiting" for the duration of a ``with`` block."""
        ...
