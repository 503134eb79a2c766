"""OpenAI-compatible chat completions over httpx (Ollama, vLLM, LM Studio, llama.cpp server).

Streams ``POST {endpoint}/chat/completions`` with ``stream: true`` and turns the chunks into
:mod:`~app.core.models.base` events. Tolerates the common server quirks: tool-call arguments sent
as an object instead of a JSON string, a whole call arriving in one final chunk, a missing call id
or index, reasoning text under ``reasoning_content``/``reasoning``. Retries only before the first
event; the idle timeout is the entry's ``timeout_s``.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import ModelError
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

PROVIDER = "OpenAI-compatible"


def chat_url(endpoint: str) -> str:
    """The chat completions URL for a base ``endpoint`` (``.../v1`` or the full URL)."""
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


def _content(message: Message) -> Any:
    if not message.images:
        return message.content
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for mime, data in message.images:
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """``messages`` in the chat completions wire format."""
    out: list[dict[str, Any]] = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": _content(message)}
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
    parsed: dict[str, Any] | None = None

    def add(self, delta: dict[str, Any]) -> None:
        self.id = self.id or str(delta.get("id") or "")
        function = delta.get("function") or {}
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
                raise _bad_call(self.name, "arguments are not valid JSON") from error
        if not isinstance(arguments, dict):
            raise _bad_call(self.name, "arguments are not a JSON object")
        if not self.name:
            raise _bad_call(self.name, "the call has no tool name")
        return ToolCall(self.id or f"call_{uuid.uuid4().hex[:24]}", self.name, arguments)


def _bad_call(name: str, reason: str) -> ModelError:
    return ModelError(
        "ai.tool_call_invalid",
        f"The model sent an unusable tool call ({reason}).",
        retryable=True,
        details={"tool": name, "reason": reason},
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
        return self.feed(sse.json())

    def at_end(self) -> bool:
        """Whether ``[DONE]`` arrived."""
        return self.done

    def is_complete(self) -> bool:
        """Whether the reply ended properly (``[DONE]`` or a finish reason)."""
        return self.done or self.finish_reason is not None

    def feed(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        """Events for one chunk.

        Raises:
            ModelError: ``ai.provider_failed`` for an in-stream ``error`` object.
        """
        if chunk.get("error"):
            raise _stream_error(chunk["error"])
        if isinstance(chunk.get("usage"), dict):
            self.usage = _usage(chunk["usage"])
        events: list[ModelEvent] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            events.extend(self._delta(delta))
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        return events

    def _delta(self, delta: dict[str, Any]) -> list[ModelEvent]:
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
        for call in delta.get("tool_calls") or []:
            self._slot(call).add(call)
        return events

    def _slot(self, call: dict[str, Any]) -> _PendingCall:
        """The pending call a delta belongs to (by index, else by id, else the last one)."""
        index = call.get("index")
        call_id = call.get("id")
        if not isinstance(index, int):
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


def _usage(data: dict[str, Any]) -> Usage:
    details = data.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=int(data.get("prompt_tokens") or 0),
        output_tokens=int(data.get("completion_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
    )


def _stream_error(error: Any) -> ModelError:
    message = error.get("message") if isinstance(error, dict) else str(error)
    kind = error.get("type") if isinstance(error, dict) else None
    return ModelError(
        "ai.provider_failed",
        f"The model server reported an error mid-stream: {str(message)[:200]}",
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
    ) -> dict[str, Any]:
        """The JSON body of the request."""
        body: dict[str, Any] = {
            "model": self.entry.model,
            "messages": wire_messages(messages),
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
