"""Chat templates from the GGUF: sandboxed rendering, native tools, tool calls read back."""

from __future__ import annotations

from typing import Any

import pytest
from jinja2.exceptions import TemplateError

from app.core.models.base import (
    Message,
    StreamOptions,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
)
from app.core.models.catalog import ModelEntry
from app.core.models.chat_template import (
    marker_split,
    native_messages,
    native_tools,
    parse_native_calls,
    render_template,
    template_supports_tools,
)
from app.core.models.gguf import bundled_gguf
from app.core.models.gguf_facts import read_facts
from app.core.models.local_llama import LocalLlamaModel, _Reply
from app.core.models.local_messages import Generate
from app.core.models.local_worker import prompt_text
from tests.core.models.gguf_files import QWEN_TOOLS_TEMPLATE

SEARCH = ToolSpec(
    "search_records",
    "Search the archive.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
LLAMA31_LIKE = (
    "{{- bos_token }}{%- if tools is not none %}<|start_header_id|>system<|end_header_id|>\n"
    "Date: {{ strftime_now('%d %b %Y') }}\n{%- for t in tools %}{{ t | tojson(indent=4) }}"
    "{%- endfor %}<|eot_id|>{%- endif %}"
    "{%- for m in messages %}{%- if m.role == 'tool' %}<|start_header_id|>ipython"
    "<|end_header_id|>\n{{ m.content }}<|eot_id|>{%- else %}<|start_header_id|>{{ m.role }}"
    "<|end_header_id|>\n{{ m.content }}<|eot_id|>{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n{%- endif %}"
)


def test_tool_support_is_read_from_the_template() -> None:
    assert template_supports_tools(QWEN_TOOLS_TEMPLATE)
    assert template_supports_tools(LLAMA31_LIKE)
    assert not template_supports_tools(read_facts(bundled_gguf()).chat_template)
    assert not template_supports_tools(None)
    assert not template_supports_tools("{% if %}broken")


def test_native_rendering_carries_tools_calls_and_results() -> None:
    call = ToolCall("call_abc", "search_records", {"query": "reservoir"})
    messages = [
        Message("system", "You are an archivist's assistant."),
        Message("user", "Find the flood interviews."),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", '{"hits": 2}', tool_call_id="call_abc", name="search_records"),
    ]
    text = render_template(
        QWEN_TOOLS_TEMPLATE, native_messages(messages), tools=native_tools([SEARCH])
    )
    assert '"name": "search_records"' in text and "# Tools" in text
    assert '<tool_call>{"name": "search_records", "arguments": {"query": "reservoir"}}' in text
    assert '<tool_response>{"hits": 2}</tool_response>' in text
    assert text.endswith("<|im_start|>assistant")
    llama = render_template(
        LLAMA31_LIKE, native_messages(messages), tools=native_tools([SEARCH]), bos_token="<s>"
    )
    assert llama.startswith("<s>") and "ipython" in llama and '    "type": "function"' in llama
    ids = {m.get("tool_call_id") for m in native_messages(messages)} - {None}
    assert len(ids) == 1 and all(len(i) == 9 and i.isalnum() for i in ids)


def test_the_sandbox_refuses_reaching_python_internals() -> None:
    evil = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
    with pytest.raises(TemplateError):
        render_template(evil, [{"role": "user", "content": "hi"}])
    with pytest.raises(TemplateError):
        render_template("{{ raise_exception('no system role') }}", [])


@pytest.mark.parametrize(
    "reply",
    [
        '<tool_call>\n{"name": "search_records", "arguments": {"query": "flood"}}\n</tool_call>',
        '[TOOL_CALLS] [{"name": "search_records", "arguments": {"query": "flood"}}]',
        '[TOOL_CALLS]search_records[ARGS]{"query": "flood"}',
        '<|python_tag|>{"name": "search_records", "parameters": {"query": "flood"}}',
        '{"type": "function", "function": {"name": "search_records", '
        '"arguments": "{\\"query\\": \\"flood\\"}"}}',
    ],
)
def test_tool_calls_are_read_back_from_each_familys_format(reply: str) -> None:
    calls = parse_native_calls(reply, [SEARCH])
    assert [(c.name, c.arguments) for c in calls] == [("search_records", {"query": "flood"})]


def test_unknown_tools_and_plain_text_are_not_calls() -> None:
    assert (
        parse_native_calls('<tool_call>{"name": "rm", "arguments": {}}</tool_call>', [SEARCH]) == []
    )
    assert parse_native_calls("The reservoir was built in 1962.", [SEARCH]) == []
    two = '<tool_call>{"name": "search_records", "arguments": {"query": "a"}}</tool_call>' * 2
    assert len(parse_native_calls(two, [SEARCH])) == 2


def test_marker_split_holds_back_what_may_start_a_call() -> None:
    assert marker_split("Let me search.") == (len("Let me search."), False)
    assert marker_split("Let me search.<tool") == (len("Let me search."), False)
    assert marker_split("Looking.<tool_call>{") == (len("Looking."), True)


def _feed(reply: _Reply, pieces: list[str]) -> tuple[str, list[Any], str | None]:
    shown = []
    for piece in pieces:
        shown += reply.text(piece)
    events, reason = reply.finish()
    text = "".join(e.text for e in [*shown, *events] if isinstance(e, TextDelta))
    return text, [e for e in events if isinstance(e, ToolCallEvent)], reason


def test_a_native_reply_streams_text_then_yields_the_call() -> None:
    pieces = ["I will ", "search.", "<tool", '_call>{"name": "search_records", ', '"arguments": ']
    pieces += ['{"query": "flood"}}</tool_call>']
    text, calls, reason = _feed(_Reply("native", [SEARCH]), pieces)
    assert text == "I will search." and reason == "tool_use"
    assert calls[0].call.arguments == {"query": "flood"}
    text, calls, reason = _feed(_Reply("native", [SEARCH]), ["The dam ", "<b>was</b> built."])
    assert text == "The dam <b>was</b> built." and calls == [] and reason is None


def test_a_tool_template_model_gets_native_tools_not_the_grammar() -> None:
    entry = ModelEntry("qwen", "Qwen", "local", "qwen", supports_tools=True)
    model = LocalLlamaModel(entry)
    messages = [Message("user", "Find the flood interviews.")]
    request, reply = model._request(messages, [SEARCH], StreamOptions(), native=True)
    assert reply.mode == "native" and request.native and not request.constrained
    assert request.tools == (SEARCH,) and request.messages == tuple(messages)
    plain, plain_reply = model._request(messages, [SEARCH], StreamOptions(), native=False)
    assert plain_reply.mode == "auto" and not plain.native and plain.tools == (SEARCH,)
    required = StreamOptions(tool_choice="required")
    forced, forced_reply = model._request(messages, [SEARCH], required, native=True)
    assert forced_reply.mode == "tool" and forced.constrained and not forced.native
    assert model._request(messages, [SEARCH], StreamOptions(tool_choice="none"))[0].tools == ()


class _Vocab:
    def token_get_text(self, token: int) -> str:
        return {1: "<s>", 2: "</s>"}[token]


class _Llm:
    """The parts of ``llama_cpp.Llama`` the prompt renderer reads."""

    def __init__(self, template: str) -> None:
        self.metadata = {"tokenizer.chat_template": template}
        self._model = _Vocab()

    def token_bos(self) -> int:
        return 1

    def token_eos(self) -> int:
        return 2


def test_the_worker_renders_native_tools_and_falls_back_when_the_template_refuses() -> None:
    request = Generate((Message("user", "hi"),), (SEARCH,), native=True)
    native = prompt_text(_Llm(QWEN_TOOLS_TEMPLATE), request)
    assert "# Tools" in native and '"name": "search_records"' in native
    assert "You can call these tools" not in native
    picky = "{% if tools %}{{ raise_exception('no tools here') }}{% endif %}" + QWEN_TOOLS_TEMPLATE
    fallback = prompt_text(_Llm(picky), request)
    assert "You can call these tools" in fallback and "search_records" in fallback
    assert "# Tools" not in fallback
