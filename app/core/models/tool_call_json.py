"""One tool call read from the JSON a local model wrote: the one reader both prompt styles share.

A local model writes a call as ``{"name": ..., "arguments": {...}}`` (the arguments may also be
a JSON string, or be named ``parameters``; OpenAI-shaped templates nest it under
``"function"``). :func:`call_from_json` accepts those shapes for a tool that was offered and
nothing else; :mod:`~app.core.models.chat_prompt` (text-described tools) and
:mod:`~app.core.models.chat_template` (tool-calling templates) both use it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection

from app.core.models.base import ToolCall


def call_from_json(data: object, names: Collection[str]) -> ToolCall | None:
    """The call ``data`` (decoded JSON) describes, if it names one of ``names``; else ``None``."""
    if not isinstance(data, dict):
        return None
    function = data.get("function")
    if isinstance(function, dict):
        data = function
    name = data.get("name")
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if not isinstance(name, str) or name not in names or not isinstance(arguments, dict):
        return None
    return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, arguments)
