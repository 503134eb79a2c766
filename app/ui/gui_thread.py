"""Keep Qt objects dying on the GUI thread: work handed to a worker thread lets go of what it
captured on the GUI thread, and Python's cyclic garbage is collected there only.

A Qt object may only be destroyed on the thread it lives on. Two ways Python frees one on a
worker thread instead, each of which crashes the process (a segfault in ``~QObject``):

- a job run on a worker holds the **last reference** to something that reaches a widget (an
  import's progress callback reaches its dialog). ``concurrent.futures`` drops the job after it
  ran, on the worker; if the GUI thread let go of the dialog first, the worker frees it. The
  worker in :func:`run_released` hands its references back to the loop's thread instead.
- Python's **cyclic collector** runs on whichever thread crosses an allocation threshold: a
  worker reading the archive collects a dialog left in a reference cycle on the GUI thread.
  :class:`GuiThreadCollector` turns the automatic collector off and collects on a GUI-thread
  timer instead, as calibre, pyqtgraph and novelWriter do.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, QTimer

T = TypeVar("T")

COLLECT_EVERY_MS = 500
"""How often the GUI thread looks whether Python's collector is due (it is due when a
generation's count passed its threshold, as the automatic collector would decide)."""

Submit = Callable[[Callable[[], T]], Awaitable[T]]
"""How a job reaches its worker: ``loop.run_in_executor(pool, job)``, or an archive read."""


class _Handover(Generic[T]):
    """What a job holds, handed back to the loop's thread: the function to run and, if it
    raised, its exception (whose traceback's frames hold what the function captured)."""

    def __init__(self, fn: Callable[[], T]) -> None:
        self.fn: Callable[[], T] | None = fn
        self.error: BaseException | None = None
        self.finished = False
        self.abandoned = False

    def release(self) -> None:
        """On the loop's thread, once the job has ended: drop the function, and the exception
        too when nobody waits for it any more."""
        self.fn = None
        self.finished = True
        if self.abandoned:
            self.error = None


async def run_released(submit: Submit[T | None], fn: Callable[[], T]) -> T:
    """Run ``fn`` on a worker through ``submit`` and return (or raise) what it did, so that
    the worker never drops the last reference to ``fn``, to what it captured, or to its
    exception: each is released on the awaiting loop's thread.

    A cancelled caller does not stop ``fn``; what ``fn`` holds is released on the loop once
    it has ended.
    """
    loop = weakref.ref(_current_loop())  # the job must not keep the loop alive
    handover = _Handover(fn)
    del fn

    def job() -> T | None:
        try:
            run = handover.fn
            assert run is not None
            try:
                return run()
            finally:
                del run
        except BaseException as error:  # raised again on the loop's thread, below
            handover.error = error
            return None
        finally:
            running = loop()
            try:
                if running is None:
                    raise RuntimeError("the loop is gone")
                running.call_soon_threadsafe(handover.release)
            except RuntimeError:  # the loop is closed: the process is ending
                _KEPT.append(handover)
            finally:
                del running

    try:
        value = await submit(job)
    except asyncio.CancelledError:
        handover.abandoned = True
        if handover.finished:
            handover.error = None
        raise
    error, handover.error = handover.error, None
    if error is not None:
        try:
            raise error
        finally:
            del error  # no cycle between this frame and the traceback that holds it
    return value  # type: ignore[return-value]  # None only with an error, raised above


def _current_loop() -> asyncio.AbstractEventLoop:
    """The loop running this coroutine: qasync also steps tasks while Qt spins a nested event
    loop (a modal dialog, ``qtbot.wait``), where no asyncio loop counts as running."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.get_event_loop_policy().get_event_loop()


_KEPT: list[_Handover[Any]] = []
"""Jobs' captures kept when their loop had closed already (the process is ending): keeping
them is safe, freeing them on the worker is not."""


class GuiThreadCollector(QObject):
    """Python's cyclic garbage collector, run on the GUI thread only.

    Made on the GUI thread, it turns the automatic collector off and, every
    :data:`COLLECT_EVERY_MS`, collects the generations that are due by the thresholds the
    automatic collector used. :meth:`stop` turns the automatic collector back on.
    """

    def __init__(self, parent: QObject | None = None, every_ms: int = COLLECT_EVERY_MS) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(every_ms)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start()

    def collect_due(self) -> int:
        """Collect the oldest generation that is due, with the younger ones (none when none is
        due); returns the generation collected, or -1."""
        counts = gc.get_count()
        due = -1
        for generation, (count, threshold) in enumerate(zip(counts, self._thresholds, strict=True)):
            if threshold <= 0 or count <= threshold:
                break
            due = generation
        if due >= 0:
            gc.collect(due)
        return due

    def stop(self) -> None:
        """Stop the timer, collect once more here, and turn the automatic collector back on
        (as it was)."""
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()
