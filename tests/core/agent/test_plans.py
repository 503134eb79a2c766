"""Change plans: proposal, validation, hash, apply, refs, stop-on-first-error, resolutions."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.events import FinalEvent, ToolResultEvent
from app.core.agent.plans import MAX_OPS, plan_hash, validate_plan
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.archive.plan_seal import plan_key, seal
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.matching import find_matches
from app.core.tools.registry import ToolRegistry
from tests.core.agent.conftest import SessionFactory, collect

ANNA_OPS: list[dict[str, Any]] = [
    {
        "op_id": "p1",
        "tool": "dedalo_find_or_create",
        "args": {
            "section_tipo": "People",
            "match": {"Name": "Anna Pujol"},
            "set": {"Birth year": 1931, "Birthplace": "Súria"},
        },
        "summary": "Find or create person Anna Pujol",
    },
    {
        "op_id": "l1",
        "tool": "dedalo_portal_link",
        "args": {
            "section_tipo": "oh1",
            "section_id": 1,
            "field": "Informant",
            "target": {"ref": "p1"},
        },
        "summary": "Link the person as informant of this interview",
    },
]
LINK_PERE: dict[str, Any] = {
    "op_id": "x",
    "tool": "dedalo_portal_link",
    "args": {
        "section_tipo": "oh1",
        "section_id": 2,
        "field": "oh24",
        "target": {"section_tipo": "rsc197", "section_id": 1},
    },
    "summary": "link Pere",
}
ANNA_QUESTION = (
    "Create a person record for Anna Pujol, born 1931 in Súria, and link her as the informant "
    "of this interview"
)


def anna_keys(archive: Archive) -> list[RecordKey]:
    return find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})


def env(archive: Archive, registry: ToolRegistry) -> ApplyContext:
    return ApplyContext(archive, registry, model_id="local")


async def test_the_seed_recipe_end_to_end(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    models["local"].extend(
        Turn(
            text="I'll create Anna Pujol and link her to this interview.",
            tool_calls=(
                call(
                    "propose_change_plan",
                    {"summary": "Create Anna Pujol as informant", "ops": ANNA_OPS},
                ),
            ),
        )
    )
    session = make_session()
    cid = (await session.conversations.new()).id
    request = {
        "question": ANNA_QUESTION,
        "mode": "write",
        "context": {"section_tipo": "oh1", "section_id": 1},
    }
    events = await collect(await session.chat(ChatRequest.from_dict(request), conversation_id=cid))
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.stop == "change_plan"
    pending = final.change_plan
    assert pending is not None and pending.plan.ops[0].tool == "dedalo_find_or_create"
    plan = pending.to_dict()  # the wire form a client sends back
    assert [op["tool"] for op in plan["ops"]] == ["dedalo_find_or_create", "dedalo_portal_link"]
    assert plan["ops"][0]["args"]["section_tipo"] == "rsc197"
    assert plan["ops"][0]["args"]["match"] == {"rsc85": "Anna Pujol"}
    assert plan["ops"][1]["args"]["field"] == "oh24"
    assert plan["ops"][1]["args"]["target"] == {"ref": "p1"}
    body = {k: plan[k] for k in ("plan_version", "summary", "ops")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    content = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    with oh_archive.db.reading() as conn:  # the hash a client sees is bound to the book entry
        assert plan["plan_hash"] == seal(plan_key(conn), plan["pending_id"], content) != content
    assert anna_keys(oh_archive) == []  # nothing written by proposing
    tools = {spec.name for spec in models["local"].calls[0].tools}
    assert "propose_change_plan" in tools and "dedalo_find_or_create" not in tools

    report = await session.plans.resolve(plan["pending_id"], True)
    assert report is not None
    assert [a.op_id for a in report.applied] == ["p1", "l1"]
    assert report.skipped == () and report.failed is None
    (anna,) = anna_keys(oh_archive)
    assert report.created == {"p1": anna.section_id}
    with pytest.raises(ArxiuError) as again:  # applied once, by any route
        await session.plans.apply_posted(plan, plan["plan_hash"])
    assert again.value.code == "mcp.plan_resolved" and anna_keys(oh_archive) == [anna]
    informants = oh_archive.get_record(RecordKey("oh1", 1)).items("oh24")
    assert [i["value"] for i in informants].count(anna.to_locator()) == 1
    audit = [r for r in oh_archive.audit_rows() if r["plan_id"] == plan["pending_id"]]
    assert [(r["op_id"], r["action"]) for r in audit][:2] == [("p1", "create"), ("l1", "update")]
    assert audit[0]["model"] == "local"
    # who applied: on a shared archive the archivist's server role, on a folder the assistant
    applier = "postgres" if oh_archive.shared else "assistant"
    assert {r["actor"] for r in audit} == {applier}
    stored = (await session.conversations.get(cid)).pending_plan
    assert stored is not None and stored.status == "applied"


async def test_an_edited_plan_is_refused_with_hash_mismatch(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    plan = validate_plan({"summary": "Anna", "ops": ANNA_OPS}, oh_archive, registry).to_dict()
    edited = copy.deepcopy(plan)
    edited["ops"][0]["args"]["match"]["rsc85"] = "Someone Else"
    with pytest.raises(ArxiuError) as caught:
        await apply_plan(edited, plan["plan_hash"], env(oh_archive, registry))
    assert caught.value.code == "mcp.plan_hash_mismatch"
    with pytest.raises(ArxiuError) as wrong_hash:
        await apply_plan(plan, "0" * 64, env(oh_archive, registry))
    assert wrong_hash.value.code == "mcp.plan_hash_mismatch"
    assert anna_keys(oh_archive) == [] and oh_archive.audit_rows() == []


async def test_refs_chain_created_records_into_later_ops(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    ops = [
        {
            "op_id": "c1",
            "tool": "dedalo_create_record",
            "args": {"section_tipo": "rsc197", "values": {"rsc85": "Nil"}},
            "summary": "new",
        },
        {
            "op_id": "s1",
            "tool": "dedalo_set_field",
            "args": {
                "section_tipo": "rsc197",
                "section_id": {"ref": "c1"},
                "field": "Birthplace",
                "value": "Cardona",
            },
            "summary": "set",
        },
        {
            "op_id": "l1",
            "tool": "dedalo_portal_link",
            "args": {
                "section_tipo": "oh1",
                "section_id": 2,
                "field": "oh24",
                "target": {"ref": "c1"},
            },
            "summary": "link",
        },
    ]
    plan = validate_plan({"summary": "chain", "ops": ops}, oh_archive, registry).to_dict()
    report = await apply_plan(plan, plan["plan_hash"], env(oh_archive, registry))
    new = RecordKey("rsc197", report.created["c1"])
    assert oh_archive.get_record(new).text("rsc90") == "Cardona"
    assert oh_archive.links_to(new)[0].source == RecordKey("oh1", 2)


@pytest.mark.parametrize(
    ("ops", "code"),
    [
        (
            [
                {
                    "op_id": "l1",
                    "tool": "dedalo_portal_link",
                    "args": {
                        "section_tipo": "oh1",
                        "section_id": 1,
                        "field": "oh24",
                        "target": {"ref": "p1"},
                    },
                    "summary": "",
                },
                ANNA_OPS[0],
            ],
            "mcp.plan_invalid",
        ),
        (
            [LINK_PERE, {**ANNA_OPS[1], "args": {**ANNA_OPS[1]["args"], "target": {"ref": "x"}}}],
            "mcp.plan_invalid",
        ),
        (
            [
                {
                    "op_id": "n1",
                    "tool": "dedalo_set_field",
                    "args": {
                        "section_tipo": "numisdata4",
                        "section_id": 1,
                        "field": "nd2",
                        "value": "x",
                    },
                    "summary": "",
                }
            ],
            "mcp.section_not_writable",
        ),
        (
            [
                {
                    "op_id": "r1",
                    "tool": "dedalo_read_record",
                    "args": {"section_tipo": "oh1", "section_id": 1},
                    "summary": "",
                }
            ],
            "mcp.plan_invalid",
        ),
        (
            [{**ANNA_OPS[0], "args": {"section_tipo": "rsc197", "match": {"Nickname": "Anna"}}}],
            "mcp.field_unknown",
        ),
        ([{**ANNA_OPS[0], "op_id": f"p{i}"} for i in range(MAX_OPS + 1)], "mcp.plan_too_large"),
    ],
    ids=[
        "ref-forward",
        "ref-to-non-creating-op",
        "not-writable",
        "not-a-write-tool",
        "unknown-label",
        "65-ops",
    ],
)
def test_invalid_plans_are_refused(
    oh_archive: Archive, registry: ToolRegistry, ops: list[dict[str, Any]], code: str
) -> None:
    with pytest.raises(ArxiuError) as caught:
        validate_plan({"summary": "bad", "ops": ops}, oh_archive, registry)
    assert caught.value.code == code


def test_sixty_four_ops_are_allowed(oh_archive: Archive, registry: ToolRegistry) -> None:
    ops = [{**ANNA_OPS[0], "op_id": f"p{i}"} for i in range(MAX_OPS)]
    plan = validate_plan({"summary": "many", "ops": ops}, oh_archive, registry).to_dict()
    assert len(plan["ops"]) == MAX_OPS and plan["plan_hash"] == plan_hash(plan)
    single = validate_plan({"summary": "one", "ops": [LINK_PERE]}, oh_archive, registry).to_dict()
    assert single["ops"][0]["args"]["target"] == {"section_tipo": "rsc197", "section_id": 1}


async def test_apply_stops_at_the_first_error_and_reports(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    ops = [
        {
            "op_id": "d1",
            "tool": "dedalo_delete_record",
            "args": {"section_tipo": "oh1", "section_id": 2},
            "summary": "delete",
        },
        {
            "op_id": "s1",
            "tool": "dedalo_set_field",
            "args": {"section_tipo": "oh1", "section_id": 2, "field": "oh2", "value": "x"},
            "summary": "set",
        },
        ANNA_OPS[0],
    ]
    plan = validate_plan({"summary": "fails midway", "ops": ops}, oh_archive, registry).to_dict()
    report = await apply_plan(plan, plan["plan_hash"], env(oh_archive, registry))
    assert [a.op_id for a in report.applied] == ["d1"]
    assert report.failed is not None and report.failed.op_id == "s1"
    assert report.failed.code == "archive.record_not_found"
    assert report.failed.message  # the reason reaches the confirm card and the CLI
    assert report.skipped == ("p1",) and report.created == {}
    assert anna_keys(oh_archive) == []


async def test_an_invalid_proposal_goes_back_to_the_model(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    too_many = [{**ANNA_OPS[0], "op_id": f"p{i}"} for i in range(MAX_OPS + 1)]
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "x", "ops": too_many}),)),
        Turn(text="I cannot do that many at once."),
    )
    events = await collect(
        await (make_session()).chat(
            ChatRequest.from_dict({"question": "add people", "mode": "write"})
        )
    )
    assert not any(isinstance(e, ToolResultEvent) for e in events)  # synthetic: no tool events
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.stop == "end_turn" and final.change_plan is None
    assert "mcp.plan_too_large" in models["local"].calls[1].messages[-1].content


async def propose(session: Any, models: dict[str, ScriptedModel], cid: str) -> dict[str, Any]:
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS}),))
    )
    events = await collect(
        await session.chat(
            ChatRequest.from_dict({"question": ANNA_QUESTION, "mode": "write"}), conversation_id=cid
        )
    )
    plan = events[-1].to_dict()["change_plan"]
    assert plan is not None
    return dict(plan)


async def test_a_new_message_supersedes_the_pending_plan(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "actually, never mind"}), conversation_id=cid
        )
    )
    with pytest.raises(ArxiuError) as caught:
        await session.plans.resolve(plan["pending_id"], True)
    assert caught.value.code == "mcp.plan_resolved"
    assert caught.value.details["status"] == "superseded"
    assert anna_keys(oh_archive) == []


async def test_only_the_first_resolution_takes_effect(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    session = make_session()
    cid = (await session.conversations.new()).id
    plan = await propose(session, models, cid)
    assert await session.plans.resolve(plan["pending_id"], False) is None
    with pytest.raises(ArxiuError) as caught:
        await session.plans.resolve(plan["pending_id"], True)
    assert caught.value.code == "mcp.plan_resolved"
    assert anna_keys(oh_archive) == []
    # a fresh session (app restart) still knows the resolution from the archive
    fresh = make_session()
    with pytest.raises(ArxiuError):
        await fresh.plans.resolve(plan["pending_id"], True)
    with pytest.raises(ArxiuError) as unknown:
        await fresh.plans.resolve("no-such-id", True)
    assert unknown.value.code == "mcp.plan_unknown"


async def test_write_mode_and_apply_need_writes_allowed(
    make_session: SessionFactory, oh_archive: Archive, registry: ToolRegistry
) -> None:
    session = make_session(write_allowed=False)
    with pytest.raises(ArxiuError) as refused:
        await session.chat(ChatRequest.from_dict({"question": "x", "mode": "write"}))
    assert refused.value.code == "mcp.write_disabled"
    plan = validate_plan({"summary": "Anna", "ops": ANNA_OPS}, oh_archive, registry).to_dict()
    with pytest.raises(ArxiuError):
        await session.plans.apply_posted(plan, plan["plan_hash"])
    assert anna_keys(oh_archive) == []
