"""Prompts for local GGUF models: chat template rendering, tool prompts, tool-call grammar schema.

The prompt is rendered with the GGUF's own chat template (Jinja, sandboxed), falling back to
ChatML. Tool definitions are appended to the system message, so *system prompt + tools* form a
stable prefix that the KV cache reuses across turns. Tool traffic is replayed as plain text,
since small chat templates know only ``system``/``user``/``assistant``.

With ``tool_choice="required"`` the reply is constrained by a JSON-schema grammar to
``{"name": <one tool>, "arguments": <that tool's schema>}``; :func:`parse_tool_call` reads it.
"""

from __future__ import annotations

import json

from app.core.json_types import JsonObject, JsonValue
from app.core.models.base import Message, ToolCall, ToolSpec
from app.core.models.chat_template import TemplateMessage, TemplateTool, render_template
from app.core.models.tool_call_json import call_from_json

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
DEFAULT_STRING_LIMIT = 200


def tools_prompt(tools: list[ToolSpec]) -> str:
    """The text appended to the system message that describes ``tools``."""
    lines = [
        "You can call these tools. To call one, reply with only a JSON object "
        '{"name": <tool name>, "arguments": {...}}.'
    ]
    for tool in tools:
        schema = json.dumps(tool.parameters, ensure_ascii=False, sort_keys=True)
        lines.append(f"- {tool.name}: {tool.description} Arguments schema: {schema}")
    return "\n".join(lines)


def _call_text(calls: tuple[ToolCall, ...]) -> str:
    return "\n".join(
        json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) for c in calls
    )


def template_messages(messages: list[Message], tools: list[ToolSpec]) -> list[TemplateMessage]:
    """``messages`` as ``{role, content}`` dicts for a chat template (tools in the system text)."""
    system = [m.content for m in messages if m.role == "system" and m.content]
    if tools:
        system.append(tools_prompt(tools))
    out: list[TemplateMessage] = []
    if system:
        out.append({"role": "system", "content": "\n\n".join(system)})
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            label = message.name or "tool"
            content = f"Result of {label}:\n{message.content}"
            out.append({"role": "user", "content": content})
        elif message.role == "assistant" and message.tool_calls:
            text = "\n".join(t for t in (message.content, _call_text(message.tool_calls)) if t)
            out.append({"role": "assistant", "content": text})
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def render(
    template: str | None,
    messages: list[TemplateMessage],
    *,
    tools: list[TemplateTool] | None = None,
    bos_token: str = "",
    eos_token: str = "",
) -> str:
    """Render ``messages`` with a chat ``template`` (ChatML when ``None``), ready to generate.

    ``tools`` (OpenAI function shapes) are passed to templates that render them natively.
    """
    return render_template(
        template or CHATML, messages, tools=tools, bos_token=bos_token, eos_token=eos_token
    )


def _bounded(schema: JsonValue) -> JsonValue:
    """``schema`` with a length limit on free strings, so a small model cannot ramble forever."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value) for key, value in schema.items()}
    if out.get("type") == "string" and not ({"enum", "const", "pattern"} & set(out)):
        out.setdefault("maxLength", DEFAULT_STRING_LIMIT)
    return out


def tool_call_schema(tools: list[ToolSpec]) -> JsonObject:
    """The JSON schema of one call of any of ``tools`` (for the grammar)."""
    options: list[JsonObject] = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool.name},
                "arguments": _bounded(tool.parameters or {"type": "object"}),
            },
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    return options[0] if len(options) == 1 else {"anyOf": [*options]}


def parse_tool_call(text: str, tools: list[ToolSpec]) -> ToolCall | None:
    """The call in ``text`` (a ``{"name", "arguments"}`` object), or ``None`` if it is not one."""
    stripped = text.strip()
    if stripped.startswith("<tool_call>"):
        stripped = stripped.removeprefix("<tool_call>").removesuffix("</tool_call>").strip()
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return call_from_json(data, {tool.name for tool in tools})
