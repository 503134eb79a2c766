"""Anthropic's streaming Messages API over httpx.

Maps the SSE events (``message_start``, ``content_block_start/delta/stop``, ``message_delta``,
``message_stop``, ``ping``, ``error``) to :mod:`~app.core.models.base` events: text, thinking
blocks, ``tool_use`` assembled from ``input_json_delta`` fragments, usage and the stop reason. An
in-band ``error`` event after a 200 (``overloaded_error``) raises a retryable coded error; it is
retried only if nothing was yielded yet. Images are sent as base64 blocks for vision models.

Each event's JSON is narrowed with the readers of :mod:`app.core.json_types`: an event of an
unexpected shape raises :class:`~app.core.json_types.JsonShapeError` (a ``ValueError``), which
:class:`~app.core.models.http_model.HttpChatModel` reports as a coded ``ai.provider_failed``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

from app.core.errors import ModelError
from app.core.json_types import JsonObject, JsonShapeError, as_object
from app.core.models.base import (
    Message,
    ModelEvent,
    Stop,
    StopReason,
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
from app.core.models.http_model import HttpChatModel
from app.core.models.transport import SSEEvent
from app.core.phrases import Phrase

PROVIDER = "Anthropic"
API_VERSION = "2023-06-01"
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576, "max": 32000}
STOP_REASONS: dict[str, StopReason] = {"tool_use": "tool_use", "max_tokens": "max_tokens"}


def messages_url(endpoint: str | None) -> str:
    """The Messages API URL for a base ``endpoint`` (default: Anthropic's API)."""
    base = (endpoint or "https://api.anthropic.com").rstrip("/")
    if base.endswith("/v1/messages"):
        return base
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def _user_blocks(message: Message) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for mime, data in message.images:
        source: JsonObject = {
            "type": "base64",
            "media_type": mime,
            "data": base64.b64encode(data).decode(),
        }
        blocks.append({"type": "image", "source": source})
    if message.content or not blocks:
        blocks.append({"type": "text", "text": message.content})
    return blocks


def _blocks(message: Message) -> tuple[str, list[JsonObject]]:
    if message.role == "tool":
        result: JsonObject = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content,
        }
        return "user", [result]
    if message.role == "assistant":
        blocks: list[JsonObject] = []
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            )
        return "assistant", blocks
    return "user", _user_blocks(message)


def wire_messages(messages: list[Message]) -> tuple[str, list[JsonObject]]:
    """The system prompt and the alternating user/assistant messages of the Messages API."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    turns: list[tuple[str, list[JsonObject]]] = []
    for message in messages:
        if message.role == "system":
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return system, [{"role": role, "content": [*blocks]} for role, blocks in turns]


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    json_parts: list[str] = field(default_factory=list)


@dataclass
class EventReader:
    """Turns one response's SSE events into model events."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    complete: bool = False

    def read(self, sse: SSEEvent) -> list[ModelEvent]:
        """Events for one SSE event.

        Raises:
            ModelError: for an in-band ``error`` event.
        """
        data = as_object(sse.json(), "the event")
        kind = data.get("type") or sse.event
        handler = getattr(self, "_on_" + str(kind), None)
        if handler is None:
            return []  # ping and future event types
        events: list[ModelEvent] = handler(data)
        return events

    def at_end(self) -> bool:
        """Whether ``message_stop`` arrived."""
        return self.complete

    def is_complete(self) -> bool:
        """Whether the reply is complete (``message_stop`` arrived)."""
        return self.complete

    def _on_error(self, data: JsonObject) -> list[ModelEvent]:
        raise in_band_error(_object(data, "error"))

    def _on_message_start(self, data: JsonObject) -> list[ModelEvent]:
        self._add_usage(_object(_object(data, "message"), "usage"))
        return []

    def _on_message_stop(self, data: JsonObject) -> list[ModelEvent]:
        self.complete = True
        return []

    def _on_message_delta(self, data: JsonObject) -> list[ModelEvent]:
        reason = _object(data, "delta").get("stop_reason")
        self.stop_reason = str(reason) if reason else self.stop_reason
        self._add_usage(_object(data, "usage"))
        return []

    def _add_usage(self, usage: JsonObject) -> None:
        for key, value in usage.items():
            if isinstance(value, int):
                self.usage[key] = value

    def _on_content_block_start(self, data: JsonObject) -> list[ModelEvent]:
        block = _object(data, "content_block")
        kind = str(block.get("type"))
        self.blocks[_index(data)] = _Block(
            kind, str(block.get("id") or ""), str(block.get("name") or "")
        )
        if kind in ("thinking", "redacted_thinking"):
            text = block.get("thinking")
            return [ThinkingStart(), *([ThinkingDelta(str(text))] if text else [])]
        if kind == "text" and block.get("text"):
            return [TextDelta(str(block["text"]))]
        return []

    def _on_content_block_delta(self, data: JsonObject) -> list[ModelEvent]:
        delta = _object(data, "delta")
        block = self.blocks.get(_index(data))
        kind = delta.get("type")
        if kind == "text_delta":
            return [TextDelta(str(delta.get("text", "")))]
        if kind == "thinking_delta":
            return [ThinkingDelta(str(delta.get("thinking", "")))]
        if kind == "input_json_delta" and block is not None:
            block.json_parts.append(str(delta.get("partial_json", "")))
        return []

    def _on_content_block_stop(self, data: JsonObject) -> list[ModelEvent]:
        block = self.blocks.get(_index(data))
        if block is None:
            return []
        if block.kind in ("thinking", "redacted_thinking"):
            return [ThinkingStop()]
        if block.kind in ("tool_use", "server_tool_use"):
            return [ToolCallEvent(ToolCall(block.id, block.name, _tool_input(block)))]
        return []

    def finish(self) -> list[ModelEvent]:
        """Usage and the stop reason, after ``message_stop`` (or the end of the stream)."""
        usage = Usage(
            input_tokens=self.usage.get("input_tokens", 0)
            + self.usage.get("cache_read_input_tokens", 0)
            + self.usage.get("cache_creation_input_tokens", 0),
            output_tokens=self.usage.get("output_tokens", 0),
            cached_tokens=self.usage.get("cache_read_input_tokens", 0),
        )
        return [usage, Stop(STOP_REASONS.get(self.stop_reason or "", "end_turn"))]


def _object(data: JsonObject, key: str) -> JsonObject:
    """``data[key]`` as an object (empty when absent, null or empty)."""
    return as_object(data.get(key) or {}, f"'{key}'")


def _index(data: JsonObject) -> int:
    """An event's content block ``index`` (0 when absent; a number or a numeric string)."""
    value = data.get("index", 0)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise JsonShapeError("'index' must be a number")
    return int(value)


def _tool_input(block: _Block) -> JsonObject:
    text = "".join(block.json_parts).strip()
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError as error:
        raise ModelError(
            "ai.tool_call_invalid",
            "The model sent a tool call whose input is not valid JSON.",
            retryable=True,
            details={"tool": block.name},
        ) from error
    if not isinstance(value, dict):
        raise ModelError("ai.tool_call_invalid", "The tool input is not an object.", retryable=True)
    return value


def in_band_error(error: JsonObject) -> ModelError:
    """The coded error for an ``error`` event sent inside a 200 stream."""
    kind = str(error.get("type") or "api_error")
    message = str(error.get("message") or kind)[:300]
    details = {"provider": PROVIDER, "type": kind, "server_message": message}
    if kind in ("overloaded_error", "rate_limit_error"):
        return ModelError(
            "ai.provider_overloaded",
            Phrase.of("Anthropic is overloaded ({message}); try again shortly.", message=message),
            retryable=True,
            details=details,
        )
    if kind in ("authentication_error", "permission_error"):
        return ModelError(
            "ai.provider_auth",
            Phrase.of("Anthropic refused the request: {message}", message=message),
            details=details,
        )
    retryable = kind in ("api_error", "timeout_error")
    return ModelError(
        "ai.provider_failed",
        Phrase.of("Anthropic reported an error mid-stream: {message}", message=message),
        retryable=retryable,
        details=details,
    )


class AnthropicModel(HttpChatModel):
    """A Claude model through the streaming Messages API (see :class:`HttpChatModel`)."""

    provider = PROVIDER
    default_retry_delays = (1.0, 4.0)

    def url(self) -> str:
        """The Messages API URL of the entry's endpoint."""
        return messages_url(self.entry.endpoint)

    def _headers(self) -> dict[str, str]:
        key = self._api_key()
        if not key:
            raise ModelError(
                "ai.api_key_missing",
                Phrase.of('No API key for model "{model}".', model=self.id),
                hint="Store one with `arxiu models add ... --api-key-stdin` or set api_key_env.",
                details={"model": self.id},
            )
        return {"x-api-key": key, "anthropic-version": API_VERSION, "accept": "text/event-stream"}

    def _reader(self) -> EventReader:
        return EventReader()

    def request_body(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> JsonObject:
        """The JSON body of the request."""
        system, wire = wire_messages(messages)
        max_tokens = min(options.max_tokens, self.entry.max_tokens)
        body: JsonObject = {
            "model": self.entry.model,
            "max_tokens": max_tokens,
            "messages": [*wire],
            "stream": True,
        }
        if system:
            body["system"] = system
        if tools and options.tool_choice != "none":
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in tools
            ]
            body["tool_choice"] = {"type": "any" if options.tool_choice == "required" else "auto"}
        budget = self._thinking_budget(messages, options)
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max(max_tokens, budget + 1024)
            if "tool_choice" in body:  # forced tool use is not allowed with thinking
                body["tool_choice"] = {"type": "auto"}
        else:
            body["temperature"] = options.temperature
        body.update(options.extra)
        return body

    def _thinking_budget(self, messages: list[Message], options: StreamOptions) -> int:
        """Extended-thinking budget for ``options.effort`` (0: no thinking).

        Thinking is left off when the conversation replays earlier tool calls, since their
        signed thinking blocks are not kept in the provider-neutral messages.
        """
        if not options.effort or options.effort not in self.entry.efforts:
            return 0
        if any(m.tool_calls for m in messages):
            return 0
        return THINKING_BUDGETS.get(options.effort, 0)
