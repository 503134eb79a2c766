"""The bridge from a run's core events to Qt signals, with text deltas coalesced.

The core streams :mod:`app.core.agent.events` frames from an async iterator; the bridge
consumes it on the qasync loop and re-emits each frame as a typed signal. Text (and thinking
text) deltas are buffered and emitted at most once per ``interval_ms`` so the answer repaints
a few times a second, not once per token; any other frame flushes the buffer first, so the
order of what the widgets see is the order of the stream. Widgets never see provider chunks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import assert_never

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.agent.events import (
    ErrorEvent,
    Event,
    FinalEvent,
    IterationEvent,
    StartEvent,
    TextEvent,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
)
from app.core.errors import ArxiuError

log = logging.getLogger(__name__)

COALESCE_MS = 60


class RunBridge(QObject):
    """Runs one event stream at a time and turns it into signals.

    Signals:
        run_started: (StartEvent) the first frame.
        text_received: (str) answer text since the last emission (coalesced).
        thinking_started: the model began thinking.
        thinking_received: (str) thinking text since the last emission (coalesced).
        thinking_stopped: the model stopped thinking.
        tool_started: (id, name, summary) a tool call began.
        tool_finished: (id, name, ok, code) the call ended; ``code`` is "" when ok.
        iteration_started: (n, max) a new model turn.
        run_finished: (FinalEvent) the run ended with an answer, a plan or a stop.
        run_failed: (ErrorEvent) the run ended with an error.
        busy_changed: (bool) a run started or ended.
    """

    run_started = Signal(object)
    text_received = Signal(str)
    thinking_started = Signal()
    thinking_received = Signal(str)
    thinking_stopped = Signal()
    tool_started = Signal(str, str, str)
    tool_finished = Signal(str, str, bool, str)
    iteration_started = Signal(int, int)
    run_finished = Signal(object)
    run_failed = Signal(object)
    busy_changed = Signal(bool)

    def __init__(self, interval_ms: int = COALESCE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.flush)
        self._task: asyncio.Task[None] | None = None
        self.emissions = 0
        """How many text emissions the current run made (for tests and the benchmark)."""

    # -- running ---------------------------------------------------------------------------------
    def is_running(self) -> bool:
        """Whether a stream is being consumed."""
        return self._task is not None and not self._task.done()

    def start(self, events: AsyncIterator[Event]) -> asyncio.Task[None]:
        """Consume ``events`` in a task (cancelling a stream still running)."""
        self.cancel()
        self.emissions = 0
        self._task = asyncio.get_event_loop().create_task(self._consume(events), name="arxiu-run")
        self.busy_changed.emit(True)
        return self._task

    def cancel(self) -> None:
        """Abandon the current stream (Stop goes through the session instead, keeping text)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._timer.stop()
        self._text.clear()
        self._thinking.clear()

    async def wait(self) -> None:
        """Wait for the current stream to end (its outcome is not raised here: a bug goes to
        the crash handler through the task that awaited :meth:`start`)."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task])

    async def _consume(self, events: AsyncIterator[Event]) -> None:
        try:
            async for event in events:
                self.dispatch(event)
        except ArxiuError as error:
            self.dispatch(ErrorEvent.from_error(error))
        except asyncio.CancelledError:
            log.debug("run cancelled")
            raise
        finally:
            self.flush()
            closer = getattr(events, "aclose", None)
            if closer is not None:
                await closer()
            self.busy_changed.emit(False)

    # -- events ----------------------------------------------------------------------------------
    def dispatch(self, event: Event) -> None:
        """Turn one frame into signals."""
        if isinstance(event, TextEvent):
            self._buffer(self._text, event.delta)
            return
        if isinstance(event, ThinkingEvent) and event.state == "delta":
            self._buffer(self._thinking, event.text or "")
            return
        self.flush()
        self._emit(event)

    def _emit(self, event: Event) -> None:
        match event:
            case StartEvent():
                self.run_started.emit(event)
            case ThinkingEvent(state="start"):
                self.thinking_started.emit()
            case ThinkingEvent():
                self.thinking_stopped.emit()
            case TextEvent():
                self.text_received.emit(event.delta)
            case ToolUseEvent(id=call_id, name=name, summary=summary):
                self.tool_started.emit(call_id, name, summary)
            case ToolResultEvent(id=call_id, name=name, ok=ok, code=code):
                self.tool_finished.emit(call_id, name, ok, code or "")
            case IterationEvent(n=n, max=most):
                self.iteration_started.emit(n, most)
            case FinalEvent():
                self.run_finished.emit(event)
            case ErrorEvent():
                self.run_failed.emit(event)
            case _:
                assert_never(event)

    def _buffer(self, buffer: list[str], text: str) -> None:
        if not text:
            return
        buffer.append(text)
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Emit buffered text now."""
        self._timer.stop()
        if self._thinking:
            text, self._thinking = "".join(self._thinking), []
            self.thinking_received.emit(text)
        if self._text:
            text, self._text = "".join(self._text), []
            self.emissions += 1
            self.text_received.emit(text)
