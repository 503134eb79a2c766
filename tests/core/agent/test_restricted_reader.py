"""A reader who may not see restricted records (``can_read_restricted=False``, set by the API
for such users): the gate guards even a local model's run like an external one's."""

from __future__ import annotations

from typing import Any

from app.core.agent.events import FinalEvent, ToolResultEvent
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.core.agent.conftest import SECRET, SessionFactory, collect, sent_text

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),
    ("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}),
    ("dedalo_read_record", {"section_tipo": "oh1", "section_id": 3}),
    ("dedalo_semantic_search", {"query": "the flood and the mill"}),
]


async def _run(make_session: SessionFactory, model: ScriptedModel, **settings: Any) -> list[Any]:
    model.extend(
        Turn(tool_calls=tuple(call(name, args, f"c{i}") for i, (name, args) in enumerate(CALLS))),
        Turn(text="done"),
    )
    session = make_session(**settings)
    context = {"section_tipo": "ohr", "section_id": 1, "summary": f"{SECRET} summary"}
    return await collect(await session.chat({"question": "the flood", "context": context}))


async def test_a_restricted_reader_on_a_local_model_gets_public_content_only(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    events = await _run(make_session, models["local"], can_read_restricted=False)
    results = [(e.ok, e.code) for e in events if isinstance(e, ToolResultEvent)]
    assert results == [
        (True, None),  # public content flows although external_content is off
        (False, "mcp.egress_restricted"),
        (False, "mcp.egress_restricted"),  # its portal points at a restricted record
        (True, None),
    ]
    sent = sent_text(models["local"])
    assert "Joan remembers" in sent and SECRET not in sent
    assert isinstance(events[-1], FinalEvent) and SECRET not in events[-1].answer
    assert events[0].egress == "local"  # the model's own class is still reported


async def test_the_same_run_for_a_reader_who_may_see_restricted_records_reaches_them(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    events = await _run(make_session, models["local"])
    assert all(e.ok for e in events if isinstance(e, ToolResultEvent))
    assert SECRET in sent_text(models["local"])


async def test_a_restricted_reader_on_an_external_model_keeps_the_content_setting(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["cloud"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),)),
        Turn(text="done"),
    )
    session = make_session(can_read_restricted=False)
    events = await collect(await session.chat({"question": "x", "model": "cloud"}))
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.code == "mcp.egress_restricted"  # content is off for external models
