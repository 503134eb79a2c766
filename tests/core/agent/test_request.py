"""Requests are validated completely before anything streams, with coded errors."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.request import ChatRequest, validate_request
from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel
from app.core.session import AssistantSession
from tests.core.agent.conftest import SessionFactory, collect

MIB = 1024 * 1024
PNG = {"mime": "image/png", "data": base64.b64encode(b"\x89PNG fake").decode()}


def big_image(size: int) -> dict[str, Any]:
    return {"mime": "image/jpeg", "data": b"x" * size}


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({}, "request.invalid"),
        ({"question": "   "}, "request.invalid"),
        ({"question": "x" * 32_769}, "request.invalid"),
        ({"question": "hi", "colour": "red"}, "request.invalid"),
        ({"question": "hi", "model": "nope"}, "ai.model_unknown"),
        ({"question": "hi", "images": [PNG]}, "ai.model_no_vision"),
        ({"question": "hi", "effort": "maximum"}, "ai.effort_not_offered"),
        ({"question": "hi", "model": "small", "effort": "low"}, "ai.effort_not_offered"),
        ({"question": "hi", "mode": "delete"}, "request.invalid"),
        ({"question": "hi", "history": [{"role": "user", "text": "a"}] * 65}, "request.invalid"),
        (
            {"question": "hi", "history": [{"role": "user", "text": "é" * 140_000}]},
            "request.invalid",
        ),
        (
            {"question": "hi", "history": [{"role": "tool", "text": "fake result"}]},
            "request.invalid",
        ),
        (
            {"question": "hi", "history": [{"role": "user", "text": "a", "tool_calls": []}]},
            "request.invalid",
        ),
        ({"question": "hi", "model": "cloud", "images": [PNG] * 9}, "request.invalid"),
        (
            {"question": "hi", "model": "cloud", "images": [big_image(5 * MIB + 1)]},
            "request.invalid",
        ),
        (
            {"question": "hi", "model": "cloud", "images": [big_image(4 * MIB)] * 4},
            "request.invalid",
        ),
        (
            {
                "question": "hi",
                "model": "cloud",
                "images": [{"mime": "text/plain", "data": "eA=="}],
            },
            "request.invalid",
        ),
        (
            {
                "question": "hi",
                "context": {"section_tipo": "oh1", "section_id": 1, "summary": "s" * 2001},
            },
            "request.invalid",
        ),
        (
            {"question": "hi", "context": {"section_tipo": "oh1", "section_id": "one"}},
            "request.invalid",
        ),
        (  # issue 22, item 8: ids past SQLite's 64 bits and lone surrogates are coded
            {"question": "hi", "context": {"section_tipo": "oh1", "section_id": 10**30}},
            "archive.id_out_of_range",
        ),
        ({"question": "Who lived at \ud800 the mill?"}, "request.invalid"),
        ({"question": "hi", "history": [{"role": "user", "text": "a\udfff"}]}, "request.invalid"),
    ],
)
async def test_invalid_requests_are_refused_before_streaming(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    request_: dict[str, Any],
    code: str,
) -> None:
    session = make_session()
    with pytest.raises(ArxiuError) as caught:
        await session.chat(ChatRequest.from_dict(request_))
    assert caught.value.code == code
    assert caught.value.to_dict()["label_key"] == f"error.{code}"
    assert all(not model.calls for model in models.values())


def test_limits_themselves_are_accepted(catalog: Catalog) -> None:
    request = {
        "question": "q" * 32_768,
        "model": "cloud",
        "history": [
            {"role": "user", "text": "a"},
            {"role": "assistant", "text": "b", "tainted": True},
        ]
        * 32,
        "images": [big_image(5 * MIB)] * 3,
        "context": {"section_tipo": "oh1", "section_id": 1, "summary": "s" * 2000},
        "effort": "default",
    }
    checked = validate_request(request, catalog, write_allowed=True)
    assert checked.model_id == "cloud" and len(checked.history) == 64
    assert checked.history[1]["tainted"] is True and len(checked.images) == 3
    assert checked.context is not None and checked.effort is None


def test_no_catalog_and_an_invalid_catalog_are_coded() -> None:
    with pytest.raises(ArxiuError) as none:
        validate_request({"question": "hi"}, Catalog(()), write_allowed=True)
    assert none.value.code == "ai.models_unconfigured"


async def test_an_invalid_catalog_file_disables_the_assistant(
    arxiu_home: Path, archive: Archive
) -> None:
    (arxiu_home / "models.json").write_text('{"models": [{"id": "BAD ID", "label": "x"}]}')
    session = AssistantSession(archive)
    with pytest.raises(ArxiuError) as caught:
        await session.chat(ChatRequest.from_dict({"question": "hi"}))
    assert caught.value.code == "ai.model_catalog_invalid"
    with pytest.raises(ArxiuError):
        session.models()


async def test_a_valid_request_streams(make_session: SessionFactory) -> None:
    events = await collect(
        await (make_session()).chat(ChatRequest.from_dict({"question": "hi", "images": None}))
    )
    assert events[0].kind == "start" and events[-1].kind == "final"


def test_write_mode_needs_a_model_that_calls_tools() -> None:
    from app.core.models.catalog import load_catalog

    builtin = load_catalog()  # only the built-in local model: SmolLM2-135M, no tool calls
    request = {"question": "Create a person record for Anna Pujol", "mode": "write"}
    with pytest.raises(ArxiuError) as info:
        validate_request(request, builtin, write_allowed=True)
    assert info.value.code == "ai.model_cannot_plan"
    assert info.value.hint and "arxiu models add" in info.value.hint
    reading = validate_request({**request, "mode": "read"}, builtin, write_allowed=True)
    assert reading.mode == "read"
