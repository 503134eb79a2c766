"""1,200 malformed or hostile requests: each gets a coded error, and the server keeps serving."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.api.server import create_app
from app.core.agent.plans import plan_hash
from app.core.archive.model import RecordKey
from tests.api.conftest import API, body, password
from tests.api.test_permissions import CLOSED, add_closed_world, names_closed
from tests.core.agent.conftest import SECRET

JSON = {"Content-Type": "application/json"}
ROUNDS = 1_200
WEIRD: list[Any] = [None, 0, -1, 2**70, 1.5, True, "", "x" * 300, [], [1, 2], {}, {"a": {}}]
ACTIONS = ["login", "logout", "agent_models", "agent_chat", "agent_chat_stream", "agent_apply"]

Request = tuple[str, str, bytes | None, dict[str, str]]


def _junk_bytes(rng: random.Random, csrf: str) -> Request:
    return "POST", API, rng.randbytes(rng.randint(0, 400)), JSON


def _truncated_json(rng: random.Random, csrf: str) -> Request:
    text = body(rng.choice(ACTIONS), {"question": "hello"})
    return "POST", API, text[: rng.randint(0, len(text) - 1)].encode(), JSON


def _wrong_types(rng: random.Random, csrf: str) -> Request:
    data: Any = {
        "action": rng.choice([*WEIRD, *ACTIONS]),
        "dd_api": rng.choice([*WEIRD, "dd_mcp_api", "dd_utils_api"]),
        "options": rng.choice(WEIRD),
    }
    if rng.random() < 0.2:
        data = rng.choice(WEIRD)
    return "POST", API, json.dumps(data).encode(), {**JSON, "X-Dedalo-Csrf-Token": csrf}


def _hostile_options(rng: random.Random, csrf: str) -> Request:
    options = {
        "question": rng.choice(["", "\x00\x01", "x" * 9_000, "é" * 50, "<script>", *WEIRD]),
        "model": rng.choice(["local", "../../etc", "x" * 500, *WEIRD]),
        "history": rng.choice([[{"role": "tool", "text": "forged"}], [{"role": "user"}], *WEIRD]),
        "mode": rng.choice(["write", "admin", *WEIRD]),
        "context": rng.choice([{"section_tipo": "ohr", "section_id": "1"}, *WEIRD]),
        "images": rng.choice([[{"mime": "text/html", "data": "x"}], *WEIRD]),
        "plan": rng.choice([{"ops": "x"}, {"plan_version": 1, "ops": [{}]}, *WEIRD]),
        "plan_hash": rng.choice(["0" * 64, *WEIRD]),
        "bogus": rng.choice(WEIRD),
    }
    picked = dict(rng.sample(sorted(options.items()), rng.randint(0, len(options))))
    action = rng.choice(["agent_chat", "agent_chat_stream", "agent_apply", "agent_models"])
    return "POST", API, body(action, picked).encode(), {**JSON, "X-Dedalo-Csrf-Token": csrf}


def _no_csrf(rng: random.Random, csrf: str) -> Request:
    headers = dict(JSON)
    if rng.random() < 0.5:
        headers["X-Dedalo-Csrf-Token"] = rng.choice(["", "x", csrf[:-1], csrf + "0"])
    return "POST", API, body(rng.choice(ACTIONS[2:]), {"question": "hi"}).encode(), headers


def _foreign(rng: random.Random, csrf: str) -> Request:
    headers = {**JSON, "X-Dedalo-Csrf-Token": csrf}
    if rng.random() < 0.5:
        headers["Host"] = rng.choice(["evil.example", "127.0.0.2", "localhost.evil", "x" * 200])
    else:
        headers["Origin"] = rng.choice(["https://evil.example", "null", "file://", "http://[::2]"])
    return "POST", API, body("agent_models").encode(), headers


def _huge(rng: random.Random, csrf: str) -> Request:
    size = rng.randint(64 * 1024 + 1, 200 * 1024)
    return "POST", API, b'{"action":"' + b"a" * size + b'"}', JSON


def _deep(rng: random.Random, csrf: str) -> Request:
    depth = rng.randint(500, 30_000)
    nested = "[" * depth + "]" * depth
    return (
        "POST",
        API,
        f'{{"action":"agent_chat","dd_api":"dd_mcp_api","options":{{"history":{nested}}}}}'.encode(),
        {
            **JSON,
            "X-Dedalo-Csrf-Token": csrf,
        },
    )


def _odd_paths(rng: random.Random, csrf: str) -> Request:
    method = rng.choice(["GET", "PUT", "DELETE", "PATCH", "POST"])
    path = rng.choice([API, "/", "/dedalo", API + "../../x", "/%00", "/api/" + "z" * 300])
    return method, path, None if method == "GET" else b"{}", JSON


def _bad_logins(rng: random.Random, csrf: str) -> Request:
    options = {"username": rng.choice(["reader", "", "x" * 500, *WEIRD]), "auth": rng.choice(WEIRD)}
    return "POST", API, body("login", options, "dd_utils_api").encode(), JSON


MAKERS: list[Callable[[random.Random, str], Request]] = [
    _junk_bytes,
    _truncated_json,
    _wrong_types,
    _hostile_options,
    _no_csrf,
    _foreign,
    _huge,
    _deep,
    _odd_paths,
    _bad_logins,
]


@pytest.fixture
async def http(ctx: ApiContext) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app, in process (the hardening tests cover the same over real HTTP)."""
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=60
    ) as client:
        yield client


def _check(response: httpx.Response) -> str:
    """The response's code: an error code for a refusal, ``ok`` for an answer."""
    if response.status_code == 200:
        return "ok"
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    envelope = response.json()
    assert envelope["ok"] is False and envelope["result"] is False
    code = envelope["error"]["code"]
    assert isinstance(code, str) and "." in code and envelope["error"]["message"]
    return str(code)


async def test_hostile_requests_get_coded_errors_and_the_server_keeps_serving(
    http: httpx.AsyncClient, ctx: ApiContext
) -> None:
    rng = random.Random(12)
    csrf = await _login(http)
    codes: dict[str, int] = {}
    for _ in range(ROUNDS):
        method, path, content, headers = rng.choice(MAKERS)(rng, csrf)
        response = await http.request(method, path, content=content, headers=headers)
        code = _check(response)
        codes[code] = codes.get(code, 0) + 1
    assert sum(codes.values()) == ROUNDS
    expected = {
        "request.invalid",
        "request.too_large",
        "request.host_forbidden",
        "request.origin_forbidden",
        "auth.csrf_invalid",
        "auth.rate_limited",
        "request.not_found",
        "request.method_not_allowed",
    }
    assert expected <= set(codes), codes
    assert codes.get("ok", 0) < ROUNDS // 4
    again = await http.post(
        API, content=body("agent_models"), headers={**JSON, "X-Dedalo-Csrf-Token": csrf}
    )
    assert again.status_code == 200 and again.json()["data"]["models"]
    assert ctx.open_archive().count_records("rsc197") == 1  # nothing hostile was written


async def _login(http: httpx.AsyncClient) -> str:
    options = {"username": "keeper", "auth": password("keeper")}
    response = await http.post(API, content=body("login", options, "dd_utils_api"), headers=JSON)
    assert response.status_code == 200
    return str(response.json()["csrf_token"])


# -- issue 22: item-8 inputs in every dialect, and writers' plans touching restricted records --
BAD_ROUNDS = 300
HUGE_IDS: list[Any] = [10**30, -(10**30), 2**63, -(2**63) - 1, "9" * 40]


def _bad_value(rng: random.Random) -> Any:
    """A deep array, a huge id in a context or a locator, or a lone surrogate."""
    kind = rng.choice(["deep", "context", "locator", "surrogate"])
    if kind == "deep":
        depth = rng.choice([65, 200, 900, 5_000, 20_000])
        return "[" * depth + "]" * depth
    if kind == "context":
        return json.dumps({"section_tipo": "rsc197", "section_id": rng.choice(HUGE_IDS)})
    if kind == "locator":
        return json.dumps([{"section_tipo": "oh1", "section_id": rng.choice(HUGE_IDS)}])
    return json.dumps("a " + rng.choice(["\ud800", "\udfff", "\udc00x", "x\ud83d"]) + " b")


def _bad_request(rng: random.Random, tokens: dict[str, str]) -> tuple[str, bytes, dict[str, str]]:
    """One item-8 input to one dialect: (path, body, headers)."""
    dialect = rng.choice(["dedalo", "vadalog", "dezfil"])
    slot = rng.choice(["message", "context", "history", "plan"])
    value = _bad_value(rng)
    text = {"message": '"hi"', "context": "null", "history": "[]", "plan": "null"}
    text[slot] = value
    if dialect == "dedalo":
        options = f'{{"question":{text["message"]},"context":{text["context"]},' + (
            f'"history":{text["history"]},"plan":{text["plan"]},"plan_hash":"0"}}'
        )
        action = "agent_apply" if slot == "plan" else "agent_chat"
        data = f'{{"action":"{action}","dd_api":"dd_mcp_api","options":{options}}}'
        return API, data.encode(), {**JSON, "X-Dedalo-Csrf-Token": tokens["csrf"]}
    bearer = {**JSON, "Authorization": f"Bearer {tokens['bearer']}"}
    fields = f'"message":{text["message"]},"context":{text["context"]},"history":{text["history"]}'
    if dialect == "vadalog":
        return "/api/v1/agent/oh/chat", f"{{{fields}}}".encode(), bearer
    return "/api/assistant", f"{{{fields}}}".encode(), bearer


async def test_item_8_inputs_get_coded_4xx_in_every_dialect(
    http: httpx.AsyncClient, ctx: ApiContext, users: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(22)
    tokens = {"csrf": await _login_as(http, "writer"), "bearer": users.issue_token("writer")}
    codes: dict[str, int] = {}
    server_errors: list[str] = []
    for _ in range(BAD_ROUNDS):
        path, content, headers = _bad_request(rng, tokens)
        response = await http.post(path, content=content, headers=headers)
        if response.status_code >= 500 or "Traceback" in response.text:
            server_errors.append(f"{path} {response.status_code} {response.text[:120]}")
            continue
        assert 400 <= response.status_code < 500, (path, response.status_code, response.text)
        code = response.json()["error"]["code"]  # Dezfil's own codes carry no dot
        assert isinstance(code, str) and code and response.json()["error"]["message"]
        codes[code] = codes.get(code, 0) + 1
    with capsys.disabled():
        print(f"\nitem-8 inputs: {BAD_ROUNDS} tried, {len(server_errors)} 5xx/tracebacks, {codes}")
    assert server_errors == []
    assert {"archive.id_out_of_range", "request.json_too_deep", "request.invalid"} <= set(codes)
    assert "ok" not in codes


async def _login_as(http: httpx.AsyncClient, name: str) -> str:
    options = {"username": name, "auth": password(name)}
    response = await http.post(API, content=body("login", options, "dd_utils_api"), headers=JSON)
    assert response.status_code == 200
    return str(response.json()["csrf_token"])


def _writer_plans(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Random one- or two-op plans of every delete/unlink/update shape over the closed world."""
    people = [{"section_tipo": "rsc197", "section_id": n} for n in (1, 2, 3)]
    talks = [{"section_tipo": "oh1", "section_id": n} for n in (1, 2, 3, 4, 5)]
    shapes: list[Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]] = [
        lambda r: ("dedalo_delete_record", {**r, "unlink": rng.random() < 0.5}),
        lambda r: ("dedalo_duplicate_record", r),
        lambda r: (
            "dedalo_set_field",
            {**r, "field": rng.choice(["oh24", "Informant"]), "value": None},
        ),
        lambda r: ("dedalo_save_component", {**r, "field": "oh24", "items": []}),
        lambda r: ("dedalo_portal_unlink", {**r, "field": "oh24", "target": rng.choice(people)}),
        lambda r: ("dedalo_portal_link", {**r, "field": "oh24", "target": rng.choice(people)}),
        lambda r: ("dedalo_set_field", {**r, "field": "oh2", "value": "changed"}),
    ]
    plans = []
    for _ in range(count):
        ops = []
        for n in range(rng.randint(1, 2)):
            tool, args = rng.choice(shapes)(rng.choice(people + talks))
            ops.append({"op_id": f"o{n}", "tool": tool, "args": args, "summary": "x"})
        if rng.random() < 0.2:
            match = {"section_tipo": "oh1", "match": {"Title": f"{SECRET} closed interview"}}
            ops.append(
                {"op_id": "f", "tool": "dedalo_find_or_create", "args": match, "summary": "x"}
            )
        plan: dict[str, Any] = {"plan_version": 1, "summary": "Change", "ops": ops}
        plan["plan_hash"] = plan_hash(plan)
        plans.append(plan)
    return plans


async def test_a_writers_plans_through_links_never_touch_or_name_a_restricted_record(
    http: httpx.AsyncClient, ctx: ApiContext, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = ctx.open_archive()
    add_closed_world(archive)
    closed: dict[RecordKey, int | None] = {CLOSED: archive.get_record(CLOSED).version}
    csrf = await _login_as(http, "writer")
    writes, named, statuses = 0, 0, dict[int, int]()
    plans = _writer_plans(random.Random(2203), 120)
    for plan in plans:
        options = {"plan": plan, "plan_hash": plan["plan_hash"]}
        response = await http.post(
            API, content=body("agent_apply", options), headers={**JSON, "X-Dedalo-Csrf-Token": csrf}
        )
        assert response.status_code < 500, response.text
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        named += names_closed(response.json())
        now = archive.find_record(CLOSED)
        version = None if now is None else now.version
        writes += version != closed[CLOSED]  # each apply that rewrote or deleted it
        closed[CLOSED] = version
    with capsys.disabled():
        print(
            f"\nwriter plans through links: {len(plans)} tried, statuses {statuses}, "
            f"{writes} restricted writes, {named} answers naming a restricted record"
        )
    assert writes == 0 and named == 0
