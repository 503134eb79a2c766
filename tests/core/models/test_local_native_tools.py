"""The real llama.cpp worker on a GGUF whose chat template renders tools (SmolLM2, retemplated)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core.models.base import Message, StreamOptions, Usage
from app.core.models.catalog import builtin_local
from app.core.models.gguf import bundled_gguf
from app.core.models.local_llama import LocalLlamaModel
from tests.core.models.gguf_files import QWEN_TOOLS_TEMPLATE, with_template
from tests.core.models.test_chat_template import SEARCH

pytestmark = pytest.mark.slow


async def test_a_tool_template_model_gets_the_tools_through_its_template(tmp_path: Path) -> None:
    gguf = with_template(bundled_gguf(), tmp_path / "smol-tools.gguf", QWEN_TOOLS_TEMPLATE)
    entry = replace(builtin_local(), id="smol-tools", gguf=str(gguf), supports_tools=True)
    model = LocalLlamaModel(entry)
    ask = [Message("user", "Find the interviews about the flood.")]
    options = StreamOptions(max_tokens=8, temperature=0.0)
    try:
        with_tools = [event async for event in model.stream(ask, [SEARCH], options)]
        assert model._worker is not None and model._worker.native_tools
        without = [event async for event in model.stream(ask, [], options)]
    finally:
        await model.aclose()
    used = [next(e for e in events if isinstance(e, Usage)) for events in (with_tools, without)]
    # The template's "# Tools" block with the search_records schema is in the prompt.
    assert used[0].input_tokens > used[1].input_tokens + 40
    assert with_tools[-1].kind == "stop" and with_tools[-1].reason in (
        "end_turn",
        "max_tokens",
        "tool_use",
    )
