"""A GGUF's own chat template: rendered sandboxed, with real tool calls when it knows tools.

Templates are Jinja (the Hugging Face convention), rendered in an
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` with the helpers those templates expect
(``raise_exception``, ``strftime_now``, ``tojson``, loop controls). A template that reads a
``tools`` variable (Qwen2.5, Llama 3.1, Mistral, Hermes…) gets the tool definitions in the
OpenAI shape and the conversation with native ``tool`` messages and ``tool_calls``; its reply is
read back from the formats those families write: ``<tool_call>{…}</tool_call>``,
``[TOOL_CALLS][…]``, ``<|python_tag|>{…}`` or a bare JSON call.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import re
from typing import Any, Literal, NotRequired, TypedDict

from app.core.models.base import Message, ToolCall, ToolSpec
from app.core.models.tool_call_json import call_from_json

MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>")
"""Where a tool call begins in the reply of a tool-calling template."""
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_MISTRAL_ARGS_RE = re.compile(
    r"\[TOOL_CALLS\]\s*([A-Za-z0-9_.-]+)\s*\[ARGS\]\s*(\{.*\})", re.DOTALL
)


class TemplateFunction(TypedDict):
    """A call inside an assistant message, as chat templates read it."""

    name: str
    arguments: dict[str, Any]


class TemplateToolCall(TypedDict):
    """One entry of an assistant message's ``tool_calls``."""

    id: str
    type: Literal["function"]
    function: TemplateFunction


class TemplateMessage(TypedDict):
    """One message as Hugging Face chat templates read it (``message['role']``...)."""

    role: str
    content: str
    tool_calls: NotRequired[list[TemplateToolCall]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


class FunctionSpec(TypedDict):
    """A tool's name, description and JSON schema, in the OpenAI function shape."""

    name: str
    description: str
    parameters: dict[str, Any]


class TemplateTool(TypedDict):
    """One entry of the ``tools`` a tool-calling template iterates over."""

    type: Literal["function"]
    function: FunctionSpec


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The sandboxed Jinja environment chat templates are rendered in."""
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    def strftime_now(fmt: str) -> str:
        return datetime.datetime.now().strftime(fmt)

    def tojson(value: Any, indent: int | None = None) -> str:
        return json.dumps(value, ensure_ascii=False, indent=indent)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now)
    env.filters["tojson"] = tojson
    return env


@functools.lru_cache(maxsize=32)
def template_supports_tools(template: str | None) -> bool:
    """Whether ``template`` renders tool definitions (it reads a ``tools`` variable)."""
    if not template:
        return False
    from jinja2 import meta
    from jinja2.exceptions import TemplateError

    try:
        names = meta.find_undeclared_variables(environment().parse(template))
    except TemplateError:
        return False
    return "tools" in names


def render_template(
    template: str,
    messages: list[TemplateMessage],
    *,
    tools: list[TemplateTool] | None = None,
    bos_token: str = "",
    eos_token: str = "",
) -> str:
    """Render ``messages`` (and ``tools``, if any) with ``template``, ready to generate.

    Raises:
        jinja2.TemplateError: the template refuses the conversation or is broken.
    """
    values: dict[str, Any] = {"messages": messages, "add_generation_prompt": True}
    values.update(bos_token=bos_token, eos_token=eos_token)
    if tools:
        values["tools"] = tools
    return str(environment().from_string(template).render(**values))


def native_tools(tools: list[ToolSpec]) -> list[TemplateTool]:
    """``tools`` in the OpenAI function shape chat templates iterate over."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def short_id(call_id: str) -> str:
    """A stable 9-character alphanumeric id (Mistral's templates refuse any other)."""
    return hashlib.sha1(call_id.encode("utf-8")).hexdigest()[:9]


def native_messages(messages: list[Message]) -> list[TemplateMessage]:
    """``messages`` with native ``tool`` results and assistant ``tool_calls``."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    out: list[TemplateMessage] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            out.append(
                {
                    "role": "tool",
                    "content": message.content,
                    "tool_call_id": short_id(message.tool_call_id or ""),
                    "name": message.name or "tool",
                }
            )
        elif message.role == "assistant" and message.tool_calls:
            calls: list[TemplateToolCall] = [
                {
                    "id": short_id(call.id),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ]
            out.append({"role": "assistant", "content": message.content, "tool_calls": calls})
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def marker_split(text: str) -> tuple[int, bool]:
    """How much of ``text`` may be shown as answer text, and whether a tool call has begun.

    The text before the first marker is safe; without a marker, everything but a tail that
    could be the start of one.
    """
    found = [text.find(marker) for marker in MARKERS if marker in text]
    if found:
        return min(found), True
    for keep in range(min(len(text), max(map(len, MARKERS)) - 1), 0, -1):
        if any(marker.startswith(text[-keep:]) for marker in MARKERS):
            return len(text) - keep, False
    return len(text), False


def _json_values(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while position < len(text):
        start = min(
            (i for i in (text.find("{", position), text.find("[", position)) if i >= 0), default=-1
        )
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        values.append(value)
        position = end
    return values


def parse_native_calls(text: str, tools: list[ToolSpec]) -> list[ToolCall]:
    """The tool calls in a reply written by a tool-calling template (``[]`` if none is valid)."""
    names = {tool.name for tool in tools}
    mistral = _MISTRAL_ARGS_RE.search(text)
    if mistral:
        call = call_from_json({"name": mistral.group(1), "arguments": mistral.group(2)}, names)
        return [call] if call else []
    segments = _TOOL_CALL_RE.findall(text) if "<tool_call>" in text else [text]
    calls: list[ToolCall] = []
    for segment in segments:
        for value in _json_values(segment):
            for item in value if isinstance(value, list) else [value]:
                call = call_from_json(item, names)
                if call is not None:
                    calls.append(call)
    return calls
