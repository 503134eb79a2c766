"""A reader who may not see restricted records (``can_read_restricted=False``, set by the API
for such users): the gate guards even a local model's run like an external one's."""

from __future__ import annotations

import json
from typing import Any

from app.core.agent.events import FinalEvent, ToolResultEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.errors import ArxiuError
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
    return await collect(
        await session.chat(ChatRequest.from_dict({"question": "the flood", "context": context}))
    )


async def test_a_restricted_reader_on_a_local_model_gets_public_content_only(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    events = await _run(make_session, models["local"], can_read_restricted=False)
    results = [(e.ok, e.code) for e in events if isinstance(e, ToolResultEvent)]
    assert results == [
        (True, None),  # public content flows although external_content is off
        (False, "mcp.egress_restricted"),
        (False, "mcp.not_available"),  # its portal points at a restricted record: withheld
        # as a missing record would be (issue 22, item 9)
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
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": "x", "model": "cloud"}))
    )
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.code == "mcp.egress_restricted"  # content is off for external models


async def test_a_readers_confirmed_plan_that_became_restricted_touching_is_refused_at_apply(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    """Issue 22, item 3, in the core: the apply of a reader checks each op's effects again."""
    person = oh_archive.create_record("rsc197", {"rsc85": [{"lang": "lg-eng", "value": "Jordi"}]})
    title = {"oh2": [{"lang": "lg-eng", "value": SECRET}]}
    closed = oh_archive.create_record("oh1", title, restricted=True)
    op = {"section_tipo": "rsc197", "section_id": person.section_id, "unlink": True}
    plan = {
        "summary": "Delete",
        "ops": [{"op_id": "d1", "tool": "dedalo_delete_record", "args": op, "summary": "x"}],
    }
    models["local"].extend(Turn(tool_calls=(call("propose_change_plan", plan),)))
    session = make_session(write_allowed=True, can_read_restricted=False)
    final = (
        await collect(
            await session.chat(ChatRequest.from_dict({"question": "delete", "mode": "write"}))
        )
    )[-1]
    assert isinstance(final, FinalEvent) and final.change_plan is not None
    link = [{"lang": "lg-nolan", "value": person.to_locator()}]
    oh_archive.update_record(closed, {**title, "oh24": link})  # a restricted linker, now
    version = oh_archive.get_record(closed).version
    try:
        report = await session.plans.resolve(str(final.change_plan.pending_id), True)
        answer = json.dumps(None if report is None else report.to_dict())
    except ArxiuError as error:
        answer = json.dumps(error.to_dict())
    assert "egress_restricted" in answer
    assert (
        f"oh1/{closed.section_id}" not in answer
        and f'"section_id": {closed.section_id}' not in answer
    )
    assert oh_archive.get_record(closed).version == version
    assert oh_archive.find_record(person) is not None
