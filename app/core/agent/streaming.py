"""One model turn: provider-neutral model events in, ``thinking``/``text`` run events out.

:func:`model_turn` streams one turn of a run (its text and usage noted in the run's transcript);
:func:`stream_turn` is the translation itself.

A provider's coded failure (an :class:`~app.core.errors.ArxiuError`: providers code their
transport and shape errors themselves) becomes the outcome's error; anything else a provider
raises is a bug and propagates (the stream is closed first). Stop is checked after every model
event, so a provider that ignores the stop event still stops between chunks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.agent.events import TextEvent, ThinkingEvent
from app.core.errors import ArxiuError, ModelError
from app.core.models.base import (
    ChatModel,
    Message,
    ModelEvent,
    Stop,
    StreamOptions,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    ThinkingStop,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from app.core.models.stop_signal import StopSignal

if TYPE_CHECKING:
    from app.core.agent.request import CheckedRequest
    from app.core.agent.transcript import Transcript


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
    stream: AsyncIterator[ModelEvent], outcome: TurnOutcome, stop_event: StopSignal
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
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    if thinking:
        yield ThinkingEvent("stop")


def stream_options(
    request: CheckedRequest, stop_event: StopSignal, max_tokens: int | None = None
) -> StreamOptions:
    """The options of one model turn of ``request`` (``max_tokens`` caps the entry's own)."""
    limit = request.entry.max_tokens
    return StreamOptions(
        max_tokens=min(limit, max_tokens) if max_tokens else limit,
        effort=request.effort,
        stop_event=stop_event,
    )


async def model_turn(
    model: ChatModel,
    messages: Sequence[Message],
    tools: list[ToolSpec],
    options: StreamOptions,
    outcome: TurnOutcome,
    transcript: Transcript,
) -> AsyncIterator[TextEvent | ThinkingEvent]:
    """Stream one model turn into ``outcome``, its text and usage into ``transcript``.

    Raises:
        ArxiuError: the provider's coded failure (after the text that streamed before it).
    """
    stream = model.stream(list(messages), tools, options)
    stop_event: StopSignal = options.stop_event or StopSignal()
    async for event in stream_turn(stream, outcome, stop_event):
        if isinstance(event, TextEvent):
            transcript.add_text(event.delta)
        yield event
    if outcome.usage is not None:
        transcript.add_usage(outcome.usage)
    if outcome.error is not None:
        raise outcome.error


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
