"""Bad bodies get a coded 4xx in every dialect, never a 5xx (issue 22, item 8).

Deep JSON, ids past SQLite's 64-bit range (a chat's ``context.section_id``, a plan op's
``section_id``) and lone surrogates in a question, each sent over real HTTP to the Dédalo,
Vadalog and Dezfil dialects of one live server; the server answers the next call as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.api.users import UserStore
from app.core.agent.plans import PLAN_VERSION, plan_hash
from app.core.archive import Archive
from tests.api.conftest import API, Live, login

HUGE = 10**30
DEEP = 30_000
MAX_JSON_DEPTH = 64
Sender = Callable[[bytes], httpx.Response]


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _plan(section_id: int) -> dict[str, Any]:
    op = {
        "op_id": "d1",
        "tool": "dedalo_delete_record",
        "args": {"section_tipo": "rsc197", "section_id": section_id},
        "summary": "Delete",
    }
    plan: dict[str, Any] = {"plan_version": PLAN_VERSION, "summary": "Delete", "ops": [op]}
    plan["plan_hash"] = plan_hash(plan)
    return plan


@pytest.fixture
def senders(
    live: Live, users: UserStore, oh_archive: Archive
) -> Iterator[dict[str, Callable[[str], Sender]]]:
    """``dialect → (kind → send(body bytes))``: the body is wrapped as each dialect wants."""
    token = users.issue_token("writer")
    bearer = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    archive = oh_archive.folder.name  # a folder's name, or a shared archive's database
    with httpx.Client(base_url=live.url, timeout=60) as client:
        csrf = login(client, "writer")
        dedalo = {"Content-Type": "application/json", "X-Dedalo-Csrf-Token": csrf}

        def for_dedalo(action: str) -> Sender:
            def send(options: bytes) -> httpx.Response:
                text = b'{"action":"%s","dd_api":"dd_mcp_api","options":%s}' % (
                    action.encode(),
                    options,
                )
                return client.post(API, content=text, headers=dedalo)

            return send

        def for_vadalog(_: str) -> Sender:
            path = f"/api/v1/agent/{archive}/chat"
            return lambda options: client.post(path, content=options, headers=bearer)

        def for_dezfil(_: str) -> Sender:
            def send(options: bytes) -> httpx.Response:
                run = client.post("/api/assistant/runs", headers=bearer).json()["runId"]
                data = options.replace(b"{", b'{"runId":"%s",' % run.encode(), 1)
                return client.post("/api/assistant", content=data, headers=bearer)

            return send

        yield {"dedalo": for_dedalo, "vadalog": for_vadalog, "dezfil": for_dezfil}


def _coded_4xx(response: httpx.Response) -> str:
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    error = response.json()["error"]
    assert isinstance(error["code"], str) and "." in error["code"] and error["message"]
    assert "Traceback" not in response.text and "SQLite" not in response.text
    return str(error["code"])


MESSAGE = {"dedalo": "question", "vadalog": "message", "dezfil": "message"}


@pytest.mark.parametrize("dialect", ["dedalo", "vadalog", "dezfil"])
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 10, 900, DEEP])
def test_deep_json_is_a_coded_400_in_every_dialect(
    senders: dict[str, Callable[[str], Sender]], dialect: str, depth: int
) -> None:
    key = MESSAGE[dialect]
    options = f'{{"{key}":"hi","history":{_nested(depth)}}}'.encode()
    code = _coded_4xx(senders[dialect]("agent_chat")(options))
    assert code in {"request.json_too_deep", "request.invalid"}


@pytest.mark.parametrize("dialect", ["dedalo", "dezfil"])
def test_a_context_id_past_64_bits_is_id_out_of_range(
    senders: dict[str, Callable[[str], Sender]], dialect: str
) -> None:
    context = {"section_tipo": "rsc197", "section_id": HUGE}
    options = json.dumps({MESSAGE[dialect]: "Who is this?", "context": context}).encode()
    assert _coded_4xx(senders[dialect]("agent_chat")(options)) == "archive.id_out_of_range"


def test_an_apply_with_an_id_past_64_bits_is_id_out_of_range(
    senders: dict[str, Callable[[str], Sender]], ctx: ApiContext
) -> None:
    plan = _plan(HUGE)
    options = json.dumps({"plan": plan, "plan_hash": plan["plan_hash"]}).encode()
    assert _coded_4xx(senders["dedalo"]("agent_apply")(options)) == "archive.id_out_of_range"
    assert ctx.open_archive().count_records("rsc197") == 1


@pytest.mark.parametrize("dialect", ["dedalo", "vadalog", "dezfil"])
def test_a_lone_surrogate_in_a_question_is_request_invalid(
    senders: dict[str, Callable[[str], Sender]], dialect: str
) -> None:
    options = json.dumps({MESSAGE[dialect]: "Who lived at \ud800 the mill?"}).encode()
    assert b"\\ud800" in options
    response = senders[dialect]("agent_chat")(options)
    assert _coded_4xx(response) == "request.invalid"
    assert response.json()["error"]["details"]["field"].endswith(MESSAGE[dialect])
    again = json.dumps({MESSAGE[dialect]: "Who lived at the mill?"}).encode()
    assert senders[dialect]("agent_chat")(again).status_code == 200


def test_parse_body_refuses_each_shape_with_its_code() -> None:
    from app.api import bodies
    from app.core.errors import ArxiuError

    assert bodies.MAX_JSON_DEPTH == MAX_JSON_DEPTH
    cases = {
        b"{": "request.invalid",
        b"\xff\xfe": "request.invalid",
        _nested(MAX_JSON_DEPTH + 1).encode(): "request.json_too_deep",
        _nested(DEEP).encode(): "request.json_too_deep",
        b'{"\\udc00": 1}': "request.invalid",
        b'{"a": ["\\ud83d"]}': "request.invalid",
        b'{"section_id": 9223372036854775808}': "archive.id_out_of_range",
        b'{"x": [{"id": -9223372036854775809}]}': "archive.id_out_of_range",
    }
    for raw, code in cases.items():
        with pytest.raises(ArxiuError) as caught:
            bodies.parse_body(raw)
        assert caught.value.code == code, raw[:40]
    assert bodies.parse_body(b'{"section_id": 9223372036854775807, "q": "\\ud83d\\ude00"}') == {
        "section_id": 2**63 - 1,
        "q": "😀",
    }
    assert bodies.parse_body(b"", empty={}) == {}
    bodies.check_shape(json.loads(_nested(MAX_JSON_DEPTH)))  # at the limit: accepted
