"""OpenAI-compatible chat completions over httpx (Ollama, vLLM, LM Studio, llama.cpp server).

Streams ``POST {endpoint}/chat/completions`` with ``stream: true`` and turns the chunks into
:mod:`~app.core.models.base` events. Tolerates the common server quirks: tool-call arguments sent
as an object instead of a JSON string, a whole call arriving in one final chunk, a missing call id
or index, reasoning text under ``reasoning_content``/``reasoning``. Retries only before the first
event; the idle timeout is the entry's ``timeout_s``.

Each chunk's JSON is narrowed with the readers of :mod:`app.core.json_types`: a chunk of an
unexpected shape raises :class:`~app.core.json_types.JsonShapeError` (a ``ValueError``), which
:class:`~app.core.models.http_model.HttpChatModel` reports as a coded ``ai.provider_failed``.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field

from app.core.errors import ModelError
from app.core.json_types import (
    JsonObject,
    JsonShapeError,
    JsonValue,
    as_object,
    objects,
)
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

PROVIDER = "OpenAI-compatible"


def chat_url(endpoint: str) -> str:
    """The chat completions URL for a base ``endpoint`` (``.../v1`` or the full URL)."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


def _content(message: Message) -> JsonValue:
    if not message.images:
        return message.content
    parts: list[JsonValue] = [{"type": "text", "text": message.content}]
    for mime, data in message.images:
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def wire_messages(messages: list[Message]) -> list[JsonObject]:
    """``messages`` in the chat completions wire format."""
    out: list[JsonObject] = []
    for message in messages:
        item: JsonObject = {"role": message.role, "content": _content(message)}
        if message.tool_calls:
            item["content"] = message.content or None
            item["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id or ""
            if message.name:
                item["name"] = message.name
        out.append(item)
    return out


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""
    parsed: JsonObject | None = None

    def add(self, delta: JsonObject) -> None:
        self.id = self.id or str(delta.get("id") or "")
        function = _object(delta.get("function"), "function")
        if function.get("name") and not self.name:
            self.name = str(function["name"])
        args = function.get("arguments")
        if isinstance(args, dict):
            self.parsed = args
        elif isinstance(args, str):
            self.arguments += args

    def finish(self) -> ToolCall:
        if self.parsed is not None:
            arguments = self.parsed
        else:
            try:
                arguments = json.loads(self.arguments) if self.arguments.strip() else {}
            except json.JSONDecodeError as error:
                raise _bad_call(self.name, Phrase.of("arguments are not valid JSON")) from error
        if not isinstance(arguments, dict):
            raise _bad_call(self.name, Phrase.of("arguments are not a JSON object"))
        if not self.name:
            raise _bad_call(self.name, Phrase.of("the call has no tool name"))
        return ToolCall(self.id or f"call_{uuid.uuid4().hex[:24]}", self.name, arguments)


def _bad_call(name: str, reason: Phrase) -> ModelError:
    return ModelError(
        "ai.tool_call_invalid",
        Phrase.of("The model sent an unusable tool call ({reason}).", reason=reason),
        retryable=True,
        details={"tool": name, "reason": reason.english()},
    )


@dataclass
class ChunkReader:
    """Accumulates chat completion chunks into events (one instance per response)."""

    calls: dict[int, _PendingCall] = field(default_factory=dict)
    thinking: bool = False
    finish_reason: str | None = None
    usage: Usage | None = None
    done: bool = False

    def read(self, sse: SSEEvent) -> list[ModelEvent]:
        """Events for one server-sent event (``[DONE]`` ends the reply)."""
        if sse.data.strip() == "[DONE]":
            self.done = True
            return []
        return self.feed(as_object(sse.json(), "the chunk"))

    def at_end(self) -> bool:
        """Whether ``[DONE]`` arrived."""
        return self.done

    def is_complete(self) -> bool:
        """Whether the reply ended properly (``[DONE]`` or a finish reason)."""
        return self.done or self.finish_reason is not None

    def feed(self, chunk: JsonObject) -> list[ModelEvent]:
        """Events for one chunk.

        Raises:
            ModelError: ``ai.provider_failed`` for an in-stream ``error`` object.
            JsonShapeError: a chunk of an unexpected shape.
        """
        error = chunk.get("error")
        if error:
            raise _stream_error(error)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        events: list[ModelEvent] = []
        for choice in objects(chunk.get("choices") or None, "'choices'"):
            delta = _object(choice.get("delta") or choice.get("message"), "delta")
            events.extend(self._delta(delta))
            reason = choice.get("finish_reason")
            self.finish_reason = str(reason) if reason else self.finish_reason
        return events

    def _delta(self, delta: JsonObject) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            if not self.thinking:
                self.thinking = True
                events.append(ThinkingStart())
            events.append(ThinkingDelta(reasoning))
        text = delta.get("content")
        if isinstance(text, str) and text:
            events.extend(self.close_thinking())
            events.append(TextDelta(text))
        for call in objects(delta.get("tool_calls") or None, "'tool_calls'"):
            self._slot(call).add(call)
        return events

    def _slot(self, call: JsonObject) -> _PendingCall:
        """The pending call a delta belongs to (by index, else by id, else the last one)."""
        given = call.get("index")
        call_id = call.get("id")
        if isinstance(given, int):
            index = given
        else:
            known = [i for i, c in self.calls.items() if call_id and c.id == call_id]
            if known:
                index = known[0]
            elif call_id or not self.calls:
                index = max(self.calls, default=-1) + 1
            else:
                index = max(self.calls)
        return self.calls.setdefault(index, _PendingCall())

    def close_thinking(self) -> list[ModelEvent]:
        """A :class:`ThinkingStop` if a thinking block is open."""
        if not self.thinking:
            return []
        self.thinking = False
        return [ThinkingStop()]

    def finish(self) -> list[ModelEvent]:
        """The closing events: pending tool calls, usage and the stop reason."""
        events = self.close_thinking()
        events.extend(ToolCallEvent(self.calls[i].finish()) for i in sorted(self.calls))
        events.append(self.usage or Usage())
        reason: StopReason = "end_turn"
        if self.calls or self.finish_reason in ("tool_calls", "function_call"):
            reason = "tool_use"
        elif self.finish_reason == "length":
            reason = "max_tokens"
        events.append(Stop(reason))
        return events


def _object(value: JsonValue, what: str) -> JsonObject:
    """``value`` as an object (empty when absent, null or empty)."""
    return as_object(value or {}, f"'{what}'")


def _count(data: JsonObject, key: str) -> int:
    """A token count (0 when absent or null; a number or a numeric string)."""
    value = data.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise JsonShapeError(f"'{key}' must be a number")
    return int(value)


def _usage(data: JsonObject) -> Usage:
    details = data.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=_count(data, "prompt_tokens"),
        output_tokens=_count(data, "completion_tokens"),
        cached_tokens=_count(details, "cached_tokens") if isinstance(details, dict) else 0,
    )


def _stream_error(error: JsonValue) -> ModelError:
    message = error.get("message") if isinstance(error, dict) else str(error)
    kind = error.get("type") if isinstance(error, dict) else None
    return ModelError(
        "ai.provider_failed",
        Phrase.of(
            "The model server reported an error mid-stream: {message}", message=str(message)[:200]
        ),
        retryable=True,
        details={"provider": PROVIDER, "type": kind, "server_message": str(message)[:500]},
    )


class OpenAICompatibleModel(HttpChatModel):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Takes the arguments of :class:`HttpChatModel`; ``entry.endpoint`` is required, and with no
    ``api_key`` no ``Authorization`` header is sent, as local servers expect.
    """

    provider = PROVIDER
    default_retry_delays = (0.5, 2.0)
    needs_endpoint = True

    def url(self) -> str:
        """The chat completions URL of the entry's endpoint."""
        return chat_url(self.entry.endpoint or "")

    def _headers(self) -> dict[str, str]:
        key = self._api_key()
        headers = {"Accept": "text/event-stream"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _reader(self) -> ChunkReader:
        return ChunkReader()

    def request_body(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> JsonObject:
        """The JSON body of the request."""
        body: JsonObject = {
            "model": self.entry.model,
            "messages": [*wire_messages(messages)],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": min(options.max_tokens, self.entry.max_tokens),
            "temperature": options.temperature,
        }
        if tools and options.tool_choice != "none":
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in tools
            ]
            body["tool_choice"] = options.tool_choice
        if options.effort and options.effort in self.entry.efforts:
            body["reasoning_effort"] = options.effort
        body.update(options.extra)
        return body
