"""Local prompts: the GGUF chat template, tools in the stable prefix, tool-call parsing."""

from __future__ import annotations

from app.core.models.base import Message, ToolCall, ToolSpec
from app.core.models.chat_prompt import (
    parse_tool_call,
    render,
    template_messages,
    tool_call_schema,
)

SMOL = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nDefault<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
TOOL = ToolSpec("lookup", "Look up.", {"type": "object", "properties": {"q": {"type": "string"}}})


def test_tools_join_the_system_prompt_so_the_prefix_is_stable() -> None:
    first = template_messages([Message("system", "Rules."), Message("user", "a")], [TOOL])
    later = template_messages(
        [
            Message("system", "Rules."),
            Message("user", "a"),
            Message("assistant", "", tool_calls=(ToolCall("c", "lookup", {"q": "x"}),)),
            Message("tool", "found", tool_call_id="c", name="lookup"),
        ],
        [TOOL],
    )
    assert later[:2] == first
    assert "lookup" in first[0]["content"] and first[0]["content"].startswith("Rules.")
    assert later[2] == {
        "role": "assistant",
        "content": '{"name": "lookup", "arguments": {"q": "x"}}',
    }
    assert later[3]["role"] == "user" and "found" in later[3]["content"]
    rendered = render(SMOL, later)
    assert rendered.startswith("<|im_start|>system\nRules.")
    assert rendered.endswith("<|im_start|>assistant\n")
    assert render(None, first).startswith("<|im_start|>system\n")


def test_tool_call_schema_and_parsing() -> None:
    other = ToolSpec("count", "Count.", {"type": "object", "properties": {}})
    schema = tool_call_schema([TOOL, other])
    names = [option["properties"]["name"]["const"] for option in schema["anyOf"]]
    assert names == ["lookup", "count"]
    q = schema["anyOf"][0]["properties"]["arguments"]["properties"]["q"]
    assert q["maxLength"] > 0
    call = parse_tool_call(' {"name": "lookup", "arguments": {"q": "x"}} ', [TOOL])
    assert call is not None and (call.name, call.arguments) == ("lookup", {"q": "x"})
    assert parse_tool_call('<tool_call>{"name": "lookup", "arguments": "{}"}</tool_call>', [TOOL])
    assert parse_tool_call('{"name": "delete_all", "arguments": {}}', [TOOL]) is None
    assert parse_tool_call('{"name": "lookup", "arguments": ', [TOOL]) is None
    assert parse_tool_call("Hello there", [TOOL]) is None


def test_auto_mode_streams_text_but_catches_a_json_call() -> None:
    from app.core.models.base import TextDelta, ToolCallEvent
    from app.core.models.local_llama import _Reply

    prose = _Reply("auto", [TOOL])
    assert prose.text("  ") == []
    assert prose.text("Hello") == [TextDelta("Hello")]
    assert prose.text(" there") == [TextDelta(" there")]
    assert prose.finish() == ([], None)

    call = _Reply("auto", [TOOL])
    for piece in ['{"name": "look', 'up", "arguments": {"q": "x"}}']:
        assert call.text(piece) == []
    events, reason = call.finish()
    assert reason == "tool_use"
    assert isinstance(events[0], ToolCallEvent) and events[0].call.arguments == {"q": "x"}

    brace = _Reply("auto", [TOOL])
    brace.text("{not a call}")
    assert brace.finish() == ([TextDelta("{not a call}")], None)
