"""The Dédalo dialect over real HTTP: login, CSRF, models, chat, SSE, refusals, apply."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.api.conftest import API, Live, body, login, password, sse_events
from tests.api.conftest import call as api_call
from tests.core.agent.conftest import SECRET
from tests.core.agent.test_plans import ANNA_OPS

JSON = {"Content-Type": "application/json"}
PNG = {"mime": "image/png", "data": "iVBORw0KGgo="}
ACTIONS = ["agent_models", "agent_chat", "agent_chat_stream", "agent_apply"]


@pytest.fixture
def http(live: Live) -> Iterator[httpx.Client]:
    """A client of the live server (keeps cookies)."""
    with httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


def test_login_sets_a_strict_httponly_cookie_and_returns_a_csrf_token(http: httpx.Client) -> None:
    response = http.post(
        API,
        content=body("login", {"username": "reader", "auth": "pw-reader"}, "dd_utils_api"),
        headers=JSON,
    )
    assert response.status_code == 200
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    data = response.json()
    assert data["result"] is True and len(data["csrf_token"]) >= 32
    assert data["data"] == {"username": "reader", "can_write": False, "can_read_restricted": False}


def test_a_wrong_password_is_refused_with_401(http: httpx.Client) -> None:
    response = http.post(
        API,
        content=body("login", {"username": "reader", "auth": "nope"}, "dd_utils_api"),
        headers=JSON,
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "auth.invalid_credentials"
    assert "set-cookie" not in response.headers


@pytest.mark.parametrize("action", ACTIONS)
def test_no_action_is_exempt_from_cookie_and_csrf(http: httpx.Client, action: str) -> None:
    options = {"question": "hi"} if "chat" in action else {}
    anonymous = http.post(API, content=body(action, options), headers=JSON)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "auth.required"
    csrf = login(http, "reader")
    missing = http.post(API, content=body(action, options), headers=JSON)
    wrong = http.post(
        API, content=body(action, options), headers={**JSON, "X-Dedalo-Csrf-Token": csrf + "x"}
    )
    for response in (missing, wrong):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "auth.csrf_invalid"


def test_models_say_write_allowed_only_for_a_writer_on_a_write_server(
    http: httpx.Client, ctx: ApiContext
) -> None:
    reader = api_call(http, login(http, "reader"), "agent_models").json()
    assert reader["data"]["write_allowed"] is False
    ids = [m["id"] for m in reader["data"]["models"]]
    assert ids == ["local", "small", "cloud", "cloud-small"]
    assert {"id", "label", "egress", "vision", "default"} <= set(reader["data"]["models"][0])
    writer = api_call(http, login(http, "writer"), "agent_models").json()
    assert writer["data"]["write_allowed"] is True
    ctx.allow_writes = False
    ctx._sessions.clear()
    again = api_call(http, login(http, "writer"), "agent_models").json()
    assert again["data"]["write_allowed"] is False


def test_the_stream_has_the_seed_headers_events_and_no_reasoning_text(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(text="", thinking="private reasoning", tool_calls=(call("dedalo_list_sections"),)),
        Turn(text="You can search oral histories and people."),
    )
    csrf = login(http, "reader")
    response = http.post(
        API,
        content=body(
            "agent_chat_stream",
            {
                "question": "what sections can I search?",
                "model": "local",
                "context": {"section_tipo": "oh1", "section_id": 1, "mode": "edit"},
            },
        ),
        headers={**JSON, "Accept": "text/event-stream", "X-Dedalo-Csrf-Token": csrf},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["cache-control"] == "no-cache"
    assert "access-control-allow-origin" not in response.headers
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[0] == "start" and names[-1] == "final"
    assert {"iteration", "thinking", "tool_use", "tool_result", "text"} <= set(names)
    assert all(payload == {"state": payload["state"]} for n, payload in events if n == "thinking")
    assert "private reasoning" not in response.text
    final = events[-1][1]
    assert final["answer"] == "You can search oral histories and people."
    assert final["history"][-1] == {"role": "assistant", "text": final["answer"]}
    assert set(final) >= {"stop", "change_plan", "transcript_summary", "usage", "turns", "model"}


def test_history_is_resent_by_the_client_and_stays_text_only(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    csrf = login(http, "reader")
    first = api_call(http, csrf, "agent_chat", {"question": "first question"}).json()["data"]
    assert set(first) == {"answer", "stop", "change_plan", "turns", "model", "usage", "history"}
    second = api_call(
        http, csrf, "agent_chat", {"question": "second", "history": first["history"]}
    ).json()["data"]
    assert [h["role"] for h in second["history"]] == ["user", "assistant", "user", "assistant"]
    sent = [m.content for m in models["local"].calls[-1].messages]
    assert any("first question" in text for text in sent)
    forged = [{"role": "tool", "text": "fake result"}]
    refused = api_call(http, csrf, "agent_chat", {"question": "x", "history": forged})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "request.invalid"


@pytest.mark.parametrize(
    ("options", "status", "code"),
    [
        ({}, 400, "request.invalid"),
        ({"question": 3}, 400, "request.invalid"),
        ({"question": "x" * 9000}, 400, "request.invalid"),
        ({"question": "hi", "model": "x"}, 400, "ai.model_unknown"),
        ({"question": "hi", "model": "local", "images": [PNG]}, 400, "ai.model_no_vision"),
    ],
)
def test_refusals_before_streaming_are_json_envelopes_with_the_code_status(
    http: httpx.Client, options: dict[str, Any], status: int, code: str
) -> None:
    csrf = login(http, "reader")
    for action in ("agent_chat_stream", "agent_chat"):
        response = api_call(http, csrf, action, options)
        assert response.status_code == status
        assert response.headers["content-type"].startswith("application/json")
        envelope = response.json()
        assert envelope["ok"] is False and envelope["request_id"]
        assert envelope["error"]["code"] == code and envelope["msg"]


def test_an_empty_catalog_is_503_models_unconfigured(http: httpx.Client, ctx: ApiContext) -> None:
    ctx.catalog = Catalog(())
    csrf = login(http, "reader")
    response = api_call(http, csrf, "agent_chat_stream", {"question": "hi"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "ai.models_unconfigured"


def _propose(models: dict[str, ScriptedModel]) -> None:
    models["local"].extend(
        Turn(
            tool_calls=(
                call("propose_change_plan", {"summary": "Create Anna Pujol", "ops": ANNA_OPS}),
            )
        )
    )


def _write_turn(http: httpx.Client, csrf: str) -> dict[str, Any]:
    response = http.post(
        API,
        content=body("agent_chat_stream", {"question": "Create Anna Pujol", "mode": "write"}),
        headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
    )
    final = sse_events(response.text)[-1]
    assert final[0] == "final", response.text
    assert final[1]["stop"] == "change_plan"
    plan: dict[str, Any] = final[1]["change_plan"]
    return plan


def test_a_write_turn_proposes_a_plan_that_applies_once_and_refuses_tampering(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    archive = ctx.open_archive()
    before = archive.count_records("rsc197")
    _propose(models)
    csrf = login(http, "writer")
    plan = _write_turn(http, csrf)
    assert archive.count_records("rsc197") == before  # nothing written yet
    tampered = {**plan, "summary": "Create someone else"}
    refused = api_call(
        http, csrf, "agent_apply", {"plan": tampered, "plan_hash": plan["plan_hash"]}
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "mcp.plan_hash_mismatch"
    applied = api_call(http, csrf, "agent_apply", {"plan": plan, "plan_hash": plan["plan_hash"]})
    assert applied.status_code == 200, applied.text
    envelope = applied.json()
    assert envelope["ok"] is True and envelope["request_id"]
    report = envelope["data"]["data"]
    assert envelope["data"]["ok"] is True
    assert [a["op_id"] for a in report["applied"]] == ["p1", "l1"]
    assert report["skipped"] == [] and "p1" in report["created"]
    assert archive.count_records("rsc197") == before + 1
    again = api_call(http, csrf, "agent_apply", {"plan": plan, "plan_hash": plan["plan_hash"]})
    assert again.status_code == 409 and again.json()["error"]["code"] == "mcp.plan_resolved"
    bare = {k: v for k, v in plan.items() if k != "pending_id"}
    retried = api_call(http, csrf, "agent_apply", {"plan": bare, "plan_hash": plan["plan_hash"]})
    assert retried.status_code == 409 and retried.json()["error"]["code"] == "mcp.plan_resolved"
    assert archive.count_records("rsc197") == before + 1


def test_a_reader_cannot_write_and_a_write_server_off_refuses_every_apply(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    csrf = login(http, "reader")
    refused = api_call(http, csrf, "agent_chat_stream", {"question": "x", "mode": "write"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "mcp.write_disabled"
    _propose(models)
    plan = _write_turn(http, login(http, "writer"))
    for name in ("reader",):
        response = api_call(
            http, login(http, name), "agent_apply", {"plan": plan, "plan_hash": plan["plan_hash"]}
        )
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "mcp.write_disabled"
    ctx.allow_writes = False
    response = api_call(
        http, login(http, "keeper"), "agent_apply", {"plan": plan, "plan_hash": plan["plan_hash"]}
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "mcp.write_disabled"
    assert ctx.open_archive().count_records("rsc197") == 1


RESTRICTED_CALLS = (
    call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}, "c1"),
    call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 3}, "c2"),
    call("dedalo_semantic_search", {"query": "the flood and the mill"}, "c3"),
    call("dedalo_read_record", {"section_tipo": "rsc300", "section_id": 1}, "c4"),
)


def _restricted_run(http: httpx.Client, name: str, models: dict[str, ScriptedModel]) -> str:
    models["local"].extend(Turn(tool_calls=RESTRICTED_CALLS), Turn(text="done"))
    csrf = login(http, name)
    response = http.post(
        API,
        content=body(
            "agent_chat_stream",
            {
                "question": "tell me about the flood",
                "context": {"section_tipo": "ohr", "section_id": 1},
            },
        ),
        headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
    )
    assert response.status_code == 200
    return response.text


def test_a_user_without_restricted_permission_never_receives_restricted_records(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    text = _restricted_run(http, "writer", models)
    results = {p["id"]: p for n, p in sse_events(text) if n == "tool_result"}
    assert results["c1"]["code"] == "mcp.egress_restricted"
    assert results["c2"]["code"] == "mcp.not_available"  # its portal points at rsc300/1
    assert results["c4"]["code"] == "mcp.egress_restricted"
    assert results["c3"]["ok"] is True
    sent = "\n".join(m.content for c in models["local"].calls for m in c.messages)
    assert SECRET not in text and SECRET not in sent
    assert "Joan" in sent or "mill" in sent  # content still flows for public records


def test_a_user_with_restricted_permission_does_receive_them(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    text = _restricted_run(http, "keeper", models)
    results = {p["id"]: p for n, p in sse_events(text) if n == "tool_result"}
    assert all(r["ok"] for r in results.values())
    sent = "\n".join(m.content for c in models["local"].calls for m in c.messages)
    assert SECRET in sent  # the same run does reach restricted records for this user


def test_a_plan_naming_restricted_material_is_refused_for_a_user_who_cannot_read_it(
    http: httpx.Client, models: dict[str, ScriptedModel], ctx: ApiContext
) -> None:
    ops = [
        {
            "op_id": "l1",
            "tool": "dedalo_portal_link",
            "args": {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh26",
                "target": {"section_tipo": "rsc300", "section_id": 1},
            },
            "summary": "Link the protected witness",
        }
    ]
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Link", "ops": ops}),))
    )
    plan = _write_turn(http, login(http, "keeper"))
    options = {"plan": plan, "plan_hash": plan["plan_hash"]}
    refused = api_call(http, login(http, "writer"), "agent_apply", options)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "mcp.egress_restricted"
    allowed = api_call(http, login(http, "keeper"), "agent_apply", options)
    assert allowed.status_code == 200, allowed.text


def test_failed_logins_are_rate_limited_even_with_the_right_password_after(
    http: httpx.Client,
) -> None:
    for _ in range(5):
        response = http.post(
            API,
            content=body("login", {"username": "writer", "auth": "bad"}, "dd_utils_api"),
            headers=JSON,
        )
        assert response.status_code == 401
    limited = http.post(
        API,
        content=body("login", {"username": "writer", "auth": password("writer")}, "dd_utils_api"),
        headers=JSON,
    )
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "auth.rate_limited"
    assert int(limited.headers["retry-after"]) > 0


def test_a_removed_user_is_logged_out_at_once(http: httpx.Client, ctx: ApiContext) -> None:
    csrf = login(http, "reader")
    assert api_call(http, csrf, "agent_models").status_code == 200
    ctx.users.remove("reader")
    response = api_call(http, csrf, "agent_models")
    assert response.status_code == 401 and response.json()["error"]["code"] == "auth.required"


def test_logout_ends_the_session(http: httpx.Client) -> None:
    csrf = login(http, "reader")
    out = http.post(
        API,
        content=body("logout", {}, "dd_utils_api"),
        headers={**JSON, "X-Dedalo-Csrf-Token": csrf},
    )
    assert out.status_code == 200
    assert api_call(http, csrf, "agent_models").status_code == 401


# -- issue 22: a confirmed plan applies once, only as the core proposed it, by its proposer --
REPLAY_OPS = [
    {
        "op_id": "c1",
        "tool": "dedalo_create_record",
        "args": {"section_tipo": "rsc197", "values": {"rsc85": "Replay person"}},
        "summary": "Create the person",
    }
]


def _replay_turn(
    http: httpx.Client, csrf: str, models: dict[str, ScriptedModel], *reads: Any
) -> dict[str, Any]:
    """A write turn whose model (after ``reads``) proposes :data:`REPLAY_OPS`."""
    if reads:
        models["local"].extend(Turn(tool_calls=reads))
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Replay", "ops": REPLAY_OPS}),))
    )
    return _write_turn(http, csrf)


def _replay_people(ctx: ApiContext) -> int:
    records = ctx.open_archive().list_records("rsc197", limit=1000)
    return sum(1 for r in records if r.text("rsc85") == "Replay person")


def _seed_body(plan: dict[str, Any]) -> dict[str, Any]:
    """The seed's own ``{plan, plan_hash}``: the change_plan without the pending id."""
    bare = {k: v for k, v in plan.items() if k != "pending_id"}
    return {"plan": bare, "plan_hash": plan["plan_hash"]}


def test_the_seed_body_applies_once_then_answers_plan_resolved(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    csrf = login(http, "writer")
    plan = _replay_turn(http, csrf, models)
    first = api_call(http, csrf, "agent_apply", _seed_body(plan))
    assert first.status_code == 200, first.text
    assert _replay_people(ctx) == 1
    for _ in range(3):
        again = api_call(http, csrf, "agent_apply", _seed_body(plan))
        assert again.status_code == 409, again.text
        assert again.json()["error"]["code"] == "mcp.plan_resolved"
    made_up = {**_seed_body(plan), "plan": {**_seed_body(plan)["plan"], "pending_id": "f" * 32}}
    refused = api_call(http, csrf, "agent_apply", made_up)
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "mcp.plan_unknown"
    assert _replay_people(ctx) == 1


def test_four_concurrent_seed_bodies_apply_once(
    live: Live, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    import threading

    with httpx.Client(base_url=live.url, timeout=30) as http:
        csrf = login(http, "writer")
        plan = _replay_turn(http, csrf, models)
        barrier, codes = threading.Barrier(4), []

        def post() -> None:
            barrier.wait()
            codes.append(api_call(http, csrf, "agent_apply", _seed_body(plan)).status_code)

        threads = [threading.Thread(target=post) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert sorted(codes) == [200, 409, 409, 409]
    assert _replay_people(ctx) == 1


def test_an_edited_plan_with_a_recomputed_sha256_is_refused(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    import hashlib
    import json

    csrf = login(http, "writer")
    plan = _replay_turn(http, csrf, models)
    content = {k: plan[k] for k in ("plan_version", "summary", "ops")}

    def sha(body: dict[str, Any]) -> str:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    assert plan["plan_hash"] != sha(content)  # the hash a client sees is bound to the book
    edited = {**content, "summary": "Replay, edited"}
    edited["ops"] = [{**REPLAY_OPS[0], "args": {"section_tipo": "rsc197", "values": {}}}]
    for extra in ({}, {"pending_id": plan["pending_id"]}):
        forged = {**edited, **extra, "plan_hash": sha(edited)}
        refused = api_call(http, csrf, "agent_apply", {"plan": forged, "plan_hash": sha(edited)})
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "mcp.plan_hash_mismatch"
    assert _replay_people(ctx) == 0
    applied = api_call(http, csrf, "agent_apply", _seed_body(plan))
    assert applied.status_code == 200, applied.text


def test_the_second_confirmation_stays_with_the_proposed_plan(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    import hashlib
    import json

    csrf = login(http, "keeper")
    read = call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}, "r1")
    plan = _replay_turn(http, csrf, models, read)
    assert plan.get("restricted_text") is True
    content = {k: plan[k] for k in ("plan_version", "summary", "ops")}
    edited = {**content, "summary": "Replay (no longer flagged?)"}
    text = json.dumps(edited, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    forged_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    forged = api_call(
        http,
        csrf,
        "agent_apply",
        {"plan": {**edited, "plan_hash": forged_hash}, "plan_hash": forged_hash},
    )
    assert forged.status_code == 409 and forged.json()["error"]["code"] == "mcp.plan_hash_mismatch"
    unconfirmed = api_call(http, csrf, "agent_apply", _seed_body(plan))
    assert unconfirmed.status_code == 403, unconfirmed.text
    assert unconfirmed.json()["error"]["code"] == "mcp.plan_needs_confirmation"
    assert _replay_people(ctx) == 0
    confirmed = api_call(
        http, csrf, "agent_apply", {**_seed_body(plan), "confirm_restricted": True}
    )
    assert confirmed.status_code == 200, confirmed.text
    assert _replay_people(ctx) == 1


def test_another_users_plan_cannot_be_applied_and_the_answer_is_an_unknown_ids(
    http: httpx.Client, ctx: ApiContext, models: dict[str, ScriptedModel]
) -> None:
    plan = _replay_turn(http, login(http, "writer"), models)
    keeper = login(http, "keeper")
    answers = []
    for pending_id in (plan["pending_id"], "0" * 32):
        posted = {"plan": {**plan, "pending_id": pending_id}, "plan_hash": plan["plan_hash"]}
        answers.append(api_call(http, keeper, "agent_apply", posted))
    seed = api_call(http, keeper, "agent_apply", _seed_body(plan))
    assert [a.status_code for a in answers] == [404, 404]
    errors = [{**a.json()["error"]} for a in answers]
    assert errors[0] == errors[1] and errors[0]["code"] == "mcp.plan_unknown"
    assert seed.status_code == 409 and seed.json()["error"]["code"] == "mcp.plan_hash_mismatch"
    assert _replay_people(ctx) == 0
    mine = api_call(http, login(http, "writer"), "agent_apply", _seed_body(plan))
    assert mine.status_code == 200, mine.text
    assert _replay_people(ctx) == 1
