"""The one streaming protocol every chat model implements.

``ChatModel.stream(messages, tools, options)`` yields :data:`ModelEvent` values: text deltas,
thinking start/delta/stop, tool calls, usage and a final stop. Providers translate their wire
format into these; nothing above this layer ever sees a provider's chunk shapes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from app.core.json_types import JsonObject
from app.core.models.stop_signal import StopSignal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for."""

    id: str
    name: str
    arguments: JsonObject


@dataclass(frozen=True)
class Message:
    """One chat message in provider-neutral form.

    ``tool_calls`` is set on assistant messages that requested tools; ``tool_call_id`` and
    ``name`` on tool results. ``images`` are raw image bytes with their mime type.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description, JSON schema of its arguments."""

    name: str
    description: str
    parameters: JsonObject


@dataclass(frozen=True)
class StreamOptions:
    """Per-call options."""

    max_tokens: int = 1024
    temperature: float = 0.2
    effort: str | None = None
    tool_choice: Literal["auto", "required", "none"] = "auto"
    stop_event: StopSignal | None = None
    """The Stop button's flag: set from any thread, it wakes the model's wait at once."""
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class TextDelta:
    """A chunk of visible answer text."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingStart:
    """The model began a thinking block."""

    kind: Literal["thinking_start"] = "thinking_start"


@dataclass(frozen=True)
class ThinkingDelta:
    """A chunk of thinking text (where the provider streams it)."""

    text: str
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True)
class ThinkingStop:
    """The thinking block ended."""

    kind: Literal["thinking_stop"] = "thinking_stop"


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete tool call (arguments parsed into a dict)."""

    call: ToolCall
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class Usage:
    """Token counts for the call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    kind: Literal["usage"] = "usage"


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stopped", "error"]


@dataclass(frozen=True)
class Stop:
    """The stream ended; always the last event."""

    reason: StopReason = "end_turn"
    kind: Literal["stop"] = "stop"


ModelEvent = TextDelta | ThinkingStart | ThinkingDelta | ThinkingStop | ToolCallEvent | Usage | Stop


@runtime_checkable
class ChatModel(Protocol):
    """A chat model that streams."""

    id: str
    supports_tools: bool
    """``False`` for models too small to plan tool calls: the agent grounds answers itself."""

    def stream(
        self,
        messages: list[Message],
        tools: list[ToolSpec],
        options: StreamOptions,
    ) -> AsyncIterator[ModelEvent]:
        """Stream the model's reply to ``messages`` with ``tools`` available."""
        ...

    async def aclose(self) -> None:
        """Release the model's resources (threads, processes, connections)."""
        ...
