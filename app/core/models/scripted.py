"""A deterministic chat model, scripted turn by turn (tests and demos; provider ``scripted``).

Each call to :meth:`ScriptedModel.stream` plays the next :class:`Turn` of the script: optional
thinking, the text in chunks, tool calls, usage, then ``Stop``. A script step may also be a
callable that inspects the messages it receives and returns the turn to play. Every call's
messages and tools are recorded in :attr:`ScriptedModel.calls`, so a test can assert exactly
what a model was sent. The stop event in the options is honoured between chunks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.errors import ArxiuError
from app.core.json_types import JsonValue
from app.core.models.base import (
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

if TYPE_CHECKING:
    from app.core.models.catalog import ModelEntry


@dataclass(frozen=True)
class Turn:
    """One scripted model reply.

    Attributes:
        text: the visible answer, streamed in ``chunk_size`` pieces.
        thinking: reasoning text streamed inside a thinking block (``None``: no block).
        tool_calls: calls requested after the text.
        usage: token counts reported before ``Stop`` (``None``: counted from the text).
        chunk_size: characters per text delta.
        error: raised after the text has streamed (a provider failure mid-answer).
    """

    text: str = ""
    thinking: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    chunk_size: int = 8
    error: ArxiuError | None = None


def call(
    name: str, arguments: Mapping[str, JsonValue] | None = None, call_id: str = ""
) -> ToolCall:
    """A tool call for a script (``call_id`` defaults to ``call_<name>``)."""
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=dict(arguments or {}))


Step = Turn | Callable[[list[Message]], Turn]


@dataclass
class RecordedCall:
    """What one ``stream`` call received."""

    messages: list[Message]
    tools: list[ToolSpec]
    options: StreamOptions


@dataclass
class ScriptedModel:
    """A :class:`~app.core.models.base.ChatModel` that plays a script.

    When the script runs out, the model answers with :func:`default_turn` (a short
    deterministic reply quoting the last user message), so demos never hang.
    """

    script: list[Step] = field(default_factory=list)
    id: str = "scripted"
    supports_tools: bool = True
    calls: list[RecordedCall] = field(default_factory=list)
    closed: bool = False

    @classmethod
    def from_entry(cls, entry: ModelEntry, script: Iterable[Step] = ()) -> ScriptedModel:
        """A scripted model for a catalog entry (provider ``scripted``)."""
        return cls(list(script), id=entry.id, supports_tools=entry.supports_tools)

    def extend(self, *steps: Step) -> None:
        """Append turns to the script."""
        self.script.extend(steps)

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> AsyncIterator[ModelEvent]:
        """Play the next turn of the script."""
        self.calls.append(RecordedCall(list(messages), list(tools), options))
        step = self.script.pop(0) if self.script else default_turn
        turn = step if isinstance(step, Turn) else step(list(messages))
        async for event in _play(turn, options):
            yield event

    async def aclose(self) -> None:
        """Nothing to release."""
        self.closed = True


def default_turn(messages: list[Message]) -> Turn:
    """The reply when the script is exhausted: quotes the first line of the last user turn."""
    last = next((m.content for m in reversed(messages) if m.role == "user"), "")
    first_line = last.strip().splitlines()[-1] if last.strip() else ""
    return Turn(text=f"(scripted reply) {first_line[:200]}")


def _stopped(options: StreamOptions) -> bool:
    event = options.stop_event
    return bool(event is not None and event.is_set())


async def _play(turn: Turn, options: StreamOptions) -> AsyncIterator[ModelEvent]:
    if turn.thinking is not None:
        yield ThinkingStart()
        for piece in _chunks(turn.thinking, turn.chunk_size):
            await asyncio.sleep(0)
            yield ThinkingDelta(piece)
        yield ThinkingStop()
    for piece in _chunks(turn.text, turn.chunk_size):
        await asyncio.sleep(0)
        if _stopped(options):
            yield Stop("stopped")
            return
        yield TextDelta(piece)
    if turn.error is not None:
        raise turn.error
    for tool_call in turn.tool_calls:
        yield ToolCallEvent(tool_call)
    yield turn.usage or Usage(input_tokens=0, output_tokens=max(1, len(turn.text) // 4))
    yield Stop("tool_use" if turn.tool_calls else "end_turn")


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]
