"""One model turn: provider-neutral model events in, ``thinking``/``text`` run events out.

Provider failures become coded errors on the outcome (``ai.provider_failed`` for anything a
provider raises that is not already coded — a bug, so it is logged with its traceback first);
Stop is checked after every model event, so a provider that ignores the stop event still stops
between chunks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from app.core.agent.events import TextEvent, ThinkingEvent
from app.core.errors import ArxiuError, ModelError
from app.core.models.base import (
    ModelEvent,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    ThinkingStop,
    ToolCall,
    ToolCallEvent,
    Usage,
)

log = logging.getLogger(__name__)


@dataclass
class TurnOutcome:
    """What one model turn produced."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    stopped: bool = False
    error: ArxiuError | None = None
    reason: str = ""


async def stream_turn(
    stream: AsyncIterator[ModelEvent], outcome: TurnOutcome, stop_event: threading.Event
) -> AsyncIterator[TextEvent | ThinkingEvent]:
    """Translate ``stream`` into run events, filling ``outcome``."""
    thinking = False
    try:
        async for event in stream:
            translated, thinking = _translate(event, outcome, thinking)
            for item in translated:
                yield item
            if stop_event.is_set():
                outcome.stopped = True
                break
    except ArxiuError as error:
        outcome.error = error
    except Exception as error:  # a provider bug: logged with its traceback, reported, no crash
        log.exception("model stream failed (%s)", type(error).__name__)
        outcome.error = ModelError(
            "ai.provider_failed",
            f"The model failed while answering ({type(error).__name__}: {error}).",
            hint="Try again, or pick another model.",
            retryable=True,
            details={"type": type(error).__name__},
        )
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    if thinking:
        yield ThinkingEvent("stop")


def _translate(
    event: ModelEvent, outcome: TurnOutcome, thinking: bool
) -> tuple[list[TextEvent | ThinkingEvent], bool]:
    out: list[TextEvent | ThinkingEvent] = []
    match event:
        case TextDelta(text=text):
            if thinking:
                out.append(ThinkingEvent("stop"))
                thinking = False
            if text:
                outcome.text += text
                out.append(TextEvent(text))
        case ThinkingStart():
            if not thinking:
                out.append(ThinkingEvent("start"))
            thinking = True
        case ThinkingDelta(text=text):
            if not thinking:
                out.append(ThinkingEvent("start"))
                thinking = True
            out.append(ThinkingEvent("delta", text))
        case ThinkingStop():
            if thinking:
                out.append(ThinkingEvent("stop"))
            thinking = False
        case ToolCallEvent(call=call):
            outcome.calls.append(call)
        case Usage():
            outcome.usage = event
        case Stop(reason=reason):
            outcome.reason = reason
            outcome.stopped = outcome.stopped or reason == "stopped"
            if reason == "error" and outcome.error is None:
                outcome.error = ModelError(
                    "ai.provider_failed", "The model stopped with an error.", retryable=True
                )
    return out, thinking
