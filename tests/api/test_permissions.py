"""Rights on what a plan *changes*, black-box through the three dialects (issue 22, item 3).

The world: the agent tests' archive plus a restricted interview ``oh1/4`` (record flag) that
links the open person ``rsc197/2`` as its informant, an open interview ``oh1/5`` linking the
same person, and an open person ``rsc197/3`` nobody links. ``writer`` may write but not read
restricted records; ``keeper`` may do both.

A writer's delete of ``rsc197/2`` must neither rewrite ``oh1/4`` (with ``unlink``) nor name it
(without): refused at proposal, at a direct apply, and at an apply of a plan that was harmless
when proposed but became restricted-touching before the apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.api.users import UserStore
from app.core.agent.plans import PLAN_VERSION, plan_hash
from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.api.conftest import API, Live, body, login, sse_events
from tests.api.conftest import call as api_call
from tests.api.test_vadalog import Served, serve
from tests.core.agent.conftest import SECRET

JSON = {"Content-Type": "application/json"}
CLOSED = RecordKey("oh1", 4)
"""The restricted interview (record flag) linking the person ``rsc197/2``."""


def _link(tipo: str, sid: int) -> list[dict[str, Any]]:
    return [{"lang": "lg-nolan", "value": {"section_tipo": tipo, "section_id": sid}}]


def _text(value: str) -> list[dict[str, Any]]:
    return [{"lang": "lg-eng", "value": value}]


def add_closed_world(archive: Archive) -> None:
    """``rsc197/2`` linked from restricted ``oh1/4`` and open ``oh1/5``; ``rsc197/3`` alone."""
    archive.create_record("rsc197", {"rsc85": _text("Rosa Vidal")})
    archive.create_record("rsc197", {"rsc85": _text("Jordi Mas")})
    closed = archive.create_record(
        "oh1",
        {"oh2": _text(f"{SECRET} closed interview"), "oh24": _link("rsc197", 2)},
        restricted=True,
    )
    assert closed == CLOSED and archive.is_restricted(CLOSED)
    archive.create_record("oh1", {"oh2": _text("Open interview"), "oh24": _link("rsc197", 2)})


def link_closed_to(archive: Archive, sid: int) -> None:
    """The restricted interview also links ``rsc197/sid`` (a change after a proposal)."""
    record = archive.get_record(CLOSED)
    items = [*record.items("oh24"), *_link("rsc197", sid)]
    archive.update_record(CLOSED, {"oh24": items}, expected_version=record.version)


def delete_op(sid: int, unlink: bool) -> dict[str, Any]:
    """One delete op of ``rsc197/sid``."""
    return {
        "op_id": "d1",
        "tool": "dedalo_delete_record",
        "args": {"section_tipo": "rsc197", "section_id": sid, "unlink": unlink},
        "summary": f"Delete rsc197/{sid}",
    }


def sealed(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """A plan as a client could post it, with its content hash."""
    plan: dict[str, Any] = {"plan_version": PLAN_VERSION, "summary": "Delete", "ops": ops}
    plan["plan_hash"] = plan_hash(plan)
    return plan


def names_closed(value: Any) -> bool:
    """Whether ``value`` (a response's JSON or text) names the restricted record anywhere."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if "oh1/4" in text or SECRET in text:
        return True
    stack = [value] if not isinstance(value, str) else []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("section_tipo") == "oh1" and item.get("section_id") == 4:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@pytest.fixture
def world(oh_archive: Archive) -> Archive:
    """The API tests' archive with the closed world added."""
    add_closed_world(oh_archive)
    return oh_archive


@pytest.fixture
def http(world: Archive, live: Live) -> Iterator[httpx.Client]:
    """A client of the live Dédalo server (keeps cookies)."""
    with httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


def _write_turn_of(http: httpx.Client, csrf: str) -> dict[str, Any]:
    """One write-mode turn; its ``final`` payload (the stream must end with one)."""
    response = http.post(
        API,
        content=body("agent_chat_stream", {"question": "Delete that person", "mode": "write"}),
        headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
    )
    assert response.status_code == 200, response.text
    final = sse_events(response.text)[-1]
    assert final[0] == "final", response.text
    payload: dict[str, Any] = {**final[1], "stream": response.text}
    return payload


def _write_turn(http: httpx.Client, csrf: str) -> dict[str, Any]:
    """A writer's write-mode turn, whose stream must name no restricted record."""
    final = _write_turn_of(http, csrf)
    assert not names_closed(final.pop("stream"))
    return final


# -- Dédalo -------------------------------------------------------------------------------------


@pytest.mark.parametrize("unlink", [True, False])
def test_a_writer_cannot_propose_a_delete_that_touches_a_restricted_linker(
    http: httpx.Client, world: Archive, models: dict[str, ScriptedModel], unlink: bool
) -> None:
    plan = {"summary": "Delete Rosa", "ops": [delete_op(2, unlink)]}
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", plan),)), Turn(text="I could not.")
    )
    final = _write_turn(http, login(http, "writer"))
    assert final["stop"] != "change_plan" and final["change_plan"] is None
    sent = "\n".join(m.content for c in models["local"].calls for m in c.messages)
    assert "oh1/4" not in sent and SECRET not in sent
    assert world.get_record(CLOSED).version == 1


def test_a_writers_direct_delete_names_only_the_open_linkers(
    http: httpx.Client, world: Archive
) -> None:
    csrf = login(http, "writer")
    plan = sealed([delete_op(2, False)])
    refused = api_call(http, csrf, "agent_apply", {"plan": plan, "plan_hash": plan["plan_hash"]})
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "archive.record_linked"
    assert error["message"] == "Record rsc197/2 cannot be deleted: other records link to it."
    assert error["details"]["linked_from"] == [
        {"section_tipo": "oh1", "section_id": 5, "field_tipo": "oh24"}
    ]
    assert not names_closed(refused.json()), refused.text
    assert world.find_record(RecordKey("rsc197", 2)) is not None


def test_a_writers_direct_unlinking_delete_rewrites_no_restricted_record(
    http: httpx.Client, world: Archive
) -> None:
    csrf = login(http, "writer")
    plan = sealed([delete_op(2, True)])
    refused = api_call(http, csrf, "agent_apply", {"plan": plan, "plan_hash": plan["plan_hash"]})
    assert refused.status_code in {403, 404, 409}, refused.text
    assert not names_closed(refused.json()), refused.text
    assert world.get_record(CLOSED).version == 1
    targets = [item["value"] for item in world.get_record(CLOSED).items("oh24")]
    assert targets == [{"section_tipo": "rsc197", "section_id": 2}]
    assert world.find_record(RecordKey("rsc197", 2)) is not None


def test_a_keeper_and_its_local_model_keep_the_precise_refusal(
    http: httpx.Client, world: Archive, models: dict[str, ScriptedModel]
) -> None:
    plan = {"summary": "Delete Rosa", "ops": [delete_op(2, False)]}
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", plan),)), Turn(text="She is linked.")
    )
    final = _write_turn_of(http, login(http, "keeper"))
    assert final["change_plan"] is None
    told = [m.content for c in models["local"].calls for m in c.messages if m.role == "tool"]
    assert any("oh1/4" in text and "archive.record_linked" in text for text in told), told


def test_a_plan_that_became_restricted_touching_is_refused_at_apply(
    http: httpx.Client, world: Archive, models: dict[str, ScriptedModel]
) -> None:
    plan = {"summary": "Delete Jordi", "ops": [delete_op(3, True)]}
    models["local"].extend(Turn(tool_calls=(call("propose_change_plan", plan),)))
    csrf = login(http, "writer")
    proposed = _write_turn(http, csrf)["change_plan"]
    assert proposed is not None  # harmless when proposed: nobody links rsc197/3
    link_closed_to(world, 3)
    refused = api_call(
        http, csrf, "agent_apply", {"plan": proposed, "plan_hash": proposed["plan_hash"]}
    )
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "mcp.egress_restricted"
    assert not names_closed(refused.json()), refused.text
    assert world.get_record(CLOSED).version == 2  # only the change made above
    assert world.find_record(RecordKey("rsc197", 3)) is not None


# -- Vadalog and Dezfil -------------------------------------------------------------------------


@pytest.fixture
def vadalog(world: Archive, ctx: ApiContext, users: UserStore) -> Iterator[Served]:
    """A Vadalog server over the closed world."""
    from tests.api.conftest import stop_server

    served = serve(ctx, users)
    yield served
    stop_server(served.live)


def test_vadalog_refuses_an_approved_plan_that_became_restricted_touching(
    vadalog: Served, world: Archive, models: dict[str, ScriptedModel]
) -> None:
    plan = {"summary": "Delete Jordi", "ops": [delete_op(3, True)]}
    models["local"].extend(Turn(tool_calls=(call("propose_change_plan", plan),)))
    lines = vadalog.chat("writer", {"message": "Delete Jordi", "session_id": "d", "mode": "write"})
    assert any(item["type"] == "authorization_request" for item in lines)
    link_closed_to(world, 3)
    reply = vadalog.post("writer", "chat", {"session_id": "d", "approved_calls": ["d1"]})
    assert not names_closed(reply.text), reply.text
    assert "mcp.egress_restricted" in reply.text
    assert world.get_record(CLOSED).version == 2
    assert world.find_record(RecordKey("rsc197", 3)) is not None


def test_vadalog_never_proposes_a_delete_unlinking_a_restricted_record(
    vadalog: Served, world: Archive, models: dict[str, ScriptedModel]
) -> None:
    plan = {"summary": "Delete Rosa", "ops": [delete_op(2, True)]}
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", plan),)), Turn(text="I could not.")
    )
    lines = vadalog.chat("writer", {"message": "Delete Rosa", "session_id": "e", "mode": "write"})
    assert not any(item["type"] == "authorization_request" for item in lines)
    assert not names_closed(lines)


def test_dezfil_refuses_a_resolution_that_became_restricted_touching(
    live: Live, world: Archive, users: UserStore, models: dict[str, ScriptedModel]
) -> None:
    headers = {"Authorization": f"Bearer {users.issue_token('writer')}"}
    run = httpx.post(live.url + "/api/assistant/runs", headers=headers, timeout=60).json()["runId"]
    plan = {"summary": "Delete Jordi", "ops": [delete_op(3, True)]}
    models["local"].extend(Turn(tool_calls=(call("propose_change_plan", plan),)))
    message = {"runId": run, "message": "Delete Jordi"}
    stream = httpx.post(live.url + "/api/assistant", json=message, headers=headers, timeout=60)
    lines = [json.loads(line) for line in stream.text.splitlines() if line]
    (confirm,) = [item["data"] for item in lines if item["event"] == "confirm_required"]
    link_closed_to(world, 3)
    resolution = {"resolution": {"pending": confirm["pending"], "approved": True}}
    answer = httpx.post(live.url + "/api/assistant", json=resolution, headers=headers, timeout=60)
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"]["code"] == "mcp.egress_restricted"
    assert not names_closed(answer.json())
    assert world.get_record(CLOSED).version == 2
    assert world.find_record(RecordKey("rsc197", 3)) is not None


# -- item 9: a record withheld for its restricted links reads as a missing one ----------------

READS = (
    call("dedalo_read_record", {"section_tipo": "rsc197", "section_id": 2}, "c1"),
    call("dedalo_read_record", {"section_tipo": "rsc197", "section_id": 999}, "c2"),
)


def _read_codes(http: httpx.Client, name: str, models: dict[str, ScriptedModel]) -> list[Any]:
    models["local"].extend(Turn(tool_calls=READS), Turn(text="Done."))
    response = http.post(
        API,
        content=body("agent_chat_stream", {"question": "Who is Rosa Vidal?"}),
        headers={**JSON, "X-Dedalo-Csrf-Token": login(http, name)},
    )
    assert response.status_code == 200
    results = {p["id"]: p for n, p in sse_events(response.text) if n == "tool_result"}
    finals = [p for n, p in sse_events(response.text) if n == "final"]
    summary = [s.get("code") for s in finals[0]["transcript_summary"] if "tool" in s]
    return [
        (results["c1"]["ok"], results["c1"]["code"]),
        (results["c2"]["ok"], results["c2"]["code"]),
        summary,
    ]


def test_a_reader_cannot_tell_a_withheld_record_from_a_missing_one(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    withheld, missing, summary = _read_codes(http, "writer", models)
    assert withheld == missing == (False, "mcp.not_available")
    assert summary == ["mcp.not_available", "mcp.not_available"]
    models["local"].calls.clear()
    withheld, missing, _ = _read_codes(http, "keeper", models)
    assert withheld == (True, None)  # the keeper reads it, restricted linker and all
    assert missing == (False, "archive.record_not_found")


def test_vadalog_shows_a_reader_the_same_code_for_withheld_and_missing(
    vadalog: Served, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(Turn(tool_calls=READS), Turn(text="Done."))
    lines = vadalog.chat("reader", {"message": "Who is Rosa Vidal?"})
    results = [item["data"]["result"] for item in lines if item["type"] == "tool_result"]
    assert [(r["ok"], r["code"]) for r in results] == [(False, "mcp.not_available")] * 2
