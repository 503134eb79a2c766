"""The Vadalog dialect end to end: NDJSON chat over a live uvicorn server, scripted models.

Read turns, sessions (history, titles, reset, LRU eviction, per user), authorization of a
change plan before anything is written, the monthly allowance (HTTP 402), bearer tokens, and
restricted records never reaching a user who may not read them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext, Limits
from app.api.reports import plain
from app.api.server import create_app
from app.api.users import UserStore
from app.api.vadalog_sessions import MessageQuota
from app.core.archive import Archive, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSettings
from app.core.tools.matching import find_matches
from app.core.tools.registry import build_registry
from tests.api.conftest import Live, start_server, stop_server
from tests.core.agent.conftest import SECRET, RecordingSearcher, scripted_catalog, sent_text
from tests.core.agent.test_demo_recipe import DEMO_OPS

PLAN_OPS = DEMO_OPS[:3]  # find or create Súria and Anna Pujol, link her birthplace
PEOPLE_TURN = Turn(
    thinking="The person asks about the Pujol family; search the people.",
    tool_calls=(call("dedalo_search_section", {"section_tipo": "rsc197", "query": "Pujol"}),),
)
PEOPLE_ANSWER = Turn(text="Teresa Pujol i Serrallonga (rsc197/12) is in the archive.")


@dataclasses.dataclass
class Served:
    """A live server over a context, with a token per user."""

    live: Live
    ctx: ApiContext
    tokens: dict[str, str]
    archive_name: str

    def path(self, action: str) -> str:
        """The dialect's URL for ``action`` (``chat`` or ``reset``)."""
        return f"{self.live.url}/api/v1/agent/{self.archive_name}/{action}"

    def post(self, user: str, action: str, body: dict[str, Any]) -> httpx.Response:
        """POST ``body`` as ``user`` (bearer token)."""
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return httpx.post(self.path(action), json=body, headers=headers, timeout=60)

    def chat(self, user: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        """One chat turn's NDJSON lines (asserting a stream came back)."""
        response = self.post(user, "chat", body)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(line) for line in response.text.splitlines() if line]


def serve(ctx: ApiContext, users: UserStore) -> Served:
    """Serve ``ctx`` and issue a token to every user."""
    tokens = {user.name: users.issue_token(user.name) for user in users.list()}
    return Served(start_server(create_app(ctx)), ctx, tokens, ctx.open_archive().folder.name)


def types(lines: list[dict[str, Any]]) -> list[str]:
    """The line types, consecutive repeats folded (content and thinking come in chunks)."""
    out: list[str] = []
    for item in lines:
        if not out or out[-1] != item["type"]:
            out.append(item["type"])
    return out


def first(lines: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The data of the first line of ``kind``."""
    return next(item["data"] for item in lines if item["type"] == kind)


def text_of(lines: list[dict[str, Any]], kind: str = "content") -> str:
    """The concatenated chunks of ``kind``."""
    return "".join(item["data"]["chunk"] for item in lines if item["type"] == kind)


@pytest.fixture
def demo_models() -> dict[str, ScriptedModel]:
    """The scripted models of the demo server."""
    return {"local": ScriptedModel(id="local"), "small": ScriptedModel(id="small")}


@pytest.fixture
def demo_archive(demo_archive_dir: Path, tmp_path: Path) -> Iterator[Archive]:
    """A copy of the demo archive with its writes turned on."""
    folder = Path(shutil.copytree(demo_archive_dir, tmp_path / "demo"))
    with open_archive(folder) as archive:
        set_writes_allowed(archive, True)
        yield archive


@pytest.fixture
def demo(
    demo_archive: Archive, users: UserStore, demo_models: dict[str, ScriptedModel]
) -> Iterator[Served]:
    """A write-enabled server over the demo archive (scripted models, hashing index)."""
    searcher = RecordingSearcher(demo_archive)
    ctx = ApiContext(
        archive_dir=demo_archive.folder,
        users=users,
        allow_writes=True,
        limits=Limits(agent_sessions=3),
        archive=demo_archive,
        searcher=searcher,
        catalog=scripted_catalog(),
        registry=build_registry(),
        model_factory=lambda entry: demo_models.setdefault(entry.id, ScriptedModel(id=entry.id)),
        settings=AssistantSettings(),
    )
    served = serve(ctx, users)
    yield served
    stop_server(served.live)
    searcher.index.close()


@pytest.fixture
def oh(ctx: ApiContext, users: UserStore) -> Iterator[Served]:
    """A server over the agent tests' archive (restricted records hold SECRET)."""
    served = serve(ctx, users)
    yield served
    stop_server(served.live)


def test_a_turn_streams_the_seed_lines_and_the_first_one_names_the_session(
    demo: Served, demo_models: dict[str, ScriptedModel]
) -> None:
    demo_models["local"].extend(PEOPLE_TURN, PEOPLE_ANSWER)
    lines = demo.chat(
        "keeper", {"message": "Who of the Pujol family do we hold?", "session_id": "s1"}
    )
    assert types(lines) == [
        "metadata",
        "context_loaded",
        "thinking",
        "tool_start",
        "tool_result",
        "content",
        "done",
        "session_meta",
    ]
    assert first(lines, "metadata") == {
        "ontology_id": demo.archive_name,
        "model": "local",
        "context_loaded": False,
        "session_id": "s1",
    }
    assert text_of(lines, "thinking") == PEOPLE_TURN.thinking
    assert first(lines, "tool_start")["tool"] == "dedalo_search_section"
    assert first(lines, "tool_result") == {
        "tool": "dedalo_search_section",
        "result": {"id": "call_dedalo_search_section", "ok": True, "code": None},
    }
    assert text_of(lines) == PEOPLE_ANSWER.text
    assert first(lines, "done") == {"ontology_id": demo.archive_name}
    assert first(lines, "session_meta") == {
        "session_id": "s1",
        "title": "Who of the Pujol family do we hold",
    }


def test_the_session_carries_the_history_until_it_is_reset(
    demo: Served, demo_models: dict[str, ScriptedModel]
) -> None:
    model = demo_models["local"]
    demo.chat("keeper", {"message": "Remember the word heron.", "session_id": "s1"})
    second = demo.chat("keeper", {"message": "Which word?", "session_id": "s1"})
    assert "session_meta" not in types(second)
    assert first(second, "context_loaded")["count"] == 2
    assert first(second, "metadata")["context_loaded"] is True
    assert "Remember the word heron." in [m.content for m in model.calls[-1].messages]

    reset = demo.post("keeper", "reset", {"session_id": "s1"})
    assert reset.status_code == 200 and reset.json()["reset"] is True
    third = demo.chat("keeper", {"message": "Which word?", "session_id": "s1"})
    assert first(third, "context_loaded") == {"count": 0, "notes": []}
    assert "session_meta" in types(third)
    assert "Remember the word heron." not in [m.content for m in model.calls[-1].messages]


def test_sessions_are_per_user_and_the_least_recently_used_is_evicted(demo: Served) -> None:
    for sid in ("a", "b", "c"):
        demo.chat("keeper", {"message": f"Hello from {sid}", "session_id": sid})
    demo.chat("keeper", {"message": "Again a", "session_id": "a"})  # a is now the most recent
    other = demo.chat("writer", {"message": "Hello", "session_id": "a"})  # evicts b (capacity 3)
    assert first(other, "context_loaded")["count"] == 0
    kept = demo.chat("keeper", {"message": "Still a", "session_id": "a"})
    assert first(kept, "context_loaded")["count"] == 4
    evicted = demo.chat("keeper", {"message": "Back to b", "session_id": "b"})
    assert first(evicted, "context_loaded")["count"] == 0
    assert "session_meta" in types(evicted)


def test_a_plan_waits_for_authorization_and_applies_when_every_call_is_approved(
    demo: Served, demo_models: dict[str, ScriptedModel], demo_archive: Archive
) -> None:
    demo_models["local"].extend(
        Turn(
            text="I'll add Anna Pujol, born in Súria.",
            tool_calls=(call("propose_change_plan", {"summary": "Anna Pujol", "ops": PLAN_OPS}),),
        )
    )
    lines = demo.chat(
        "keeper", {"message": "Add Anna Pujol, born in Súria", "session_id": "w", "mode": "write"}
    )
    assert types(lines)[-4:] == ["proposal", "authorization_request", "done", "session_meta"]
    request = first(lines, "authorization_request")
    assert [c["call_id"] for c in request["calls"]] == ["s1", "p1", "b1"]
    assert first(lines, "proposal")["definition"]["plan_hash"] == request["plan_hash"]
    assert find_matches(demo_archive, "rsc197", {"rsc84": "Anna Pujol"}) == []

    reply = demo.chat("keeper", {"session_id": "w", "approved_calls": ["s1", "p1", "b1"]})
    assert types(reply) == ["metadata", "tool_start", "tool_result", "content", "done"]
    results = [item["data"]["result"] for item in reply if item["type"] == "tool_result"]
    assert [(r["op_id"], r["ok"]) for r in results] == [("s1", True), ("p1", True), ("b1", True)]
    (anna,) = find_matches(demo_archive, "rsc197", {"rsc84": "Anna Pujol"})
    assert results[1]["section_id"] == anna.section_id
    again = demo.post("keeper", "chat", {"session_id": "w", "approved_calls": ["s1"]})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "agent.nothing_to_authorize"


def test_a_plan_not_wholly_approved_writes_nothing(
    demo: Served, demo_models: dict[str, ScriptedModel], demo_archive: Archive
) -> None:
    demo_models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": PLAN_OPS}),))
    )
    lines = demo.chat("keeper", {"message": "Add Anna Pujol", "session_id": "w", "mode": "write"})
    pending = first(lines, "authorization_request")["pending_id"]
    reply = demo.chat("keeper", {"session_id": "w", "approved_calls": ["s1", "p1"]})
    assert "tool_start" not in types(reply)
    assert "nothing was written" in text_of(reply)
    assert find_matches(demo_archive, "rsc197", {"rsc84": "Anna Pujol"}) == []
    keeper = demo.ctx.users.get("keeper")
    assert keeper is not None
    record = plain(asyncio.run(demo.ctx.session_for(keeper).plans.get(pending)))
    assert record is not None and record["status"] == "declined"


def test_authorized_tools_let_later_plans_apply_without_pausing(
    demo: Served, demo_models: dict[str, ScriptedModel], demo_archive: Archive
) -> None:
    propose = Turn(
        tool_calls=(call("propose_change_plan", {"summary": "Súria", "ops": PLAN_OPS[:1]}),)
    )
    demo_models["local"].extend(propose, propose)
    demo.chat("keeper", {"message": "Add Súria", "session_id": "w", "mode": "write"})
    demo.chat("keeper", {"session_id": "w", "authorized_tools": ["dedalo_find_or_create"]})
    lines = demo.chat("keeper", {"message": "Add Súria again", "session_id": "w", "mode": "write"})
    assert "authorization_request" not in types(lines)
    assert "tool_result" in types(lines)
    assert len(find_matches(demo_archive, "tp1", {"tp2": "Súria"})) == 1


def test_over_the_monthly_allowance_the_answer_is_402(demo: Served) -> None:
    capped = dataclasses.replace(demo.ctx.limits, agent_messages_per_month=2)
    demo.ctx.limits = capped
    served = serve(demo.ctx, demo.ctx.users)
    try:
        for n in range(2):
            served.chat("keeper", {"message": f"question {n}"})
        over = served.post("keeper", "chat", {"message": "one more"})
        assert over.status_code == 402
        body = over.json()
        assert body["code"] == "AGENT_MESSAGE_LIMIT_REACHED"
        assert (body["used"], body["limit"]) == (2, 2)
        assert datetime.fromisoformat(body["resets_at"].replace("Z", "+00:00")).day == 1
        served.chat("writer", {"message": "mine still count from zero"})
    finally:
        stop_server(served.live)


def test_the_month_turns_over_on_the_first() -> None:
    now = [datetime(2026, 12, 31, 23, 59, tzinfo=UTC)]
    quota = MessageQuota(1, lambda: now[0])
    assert quota.take("ana") is None
    refused = quota.take("ana")
    assert refused is not None and refused.to_dict()["resets_at"] == "2027-01-01T00:00:00Z"
    now[0] = datetime(2027, 1, 1, tzinfo=UTC)
    assert quota.take("ana") is None


def test_a_bearer_token_is_required(demo: Served) -> None:
    missing = demo.post("", "chat", {"message": "hi"})
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "auth.token_invalid"
    assert missing.headers["www-authenticate"].startswith("Bearer")
    demo.tokens["forged"] = "arxiu_" + "x" * 43
    assert demo.post("forged", "chat", {"message": "hi"}).status_code == 401
    other = httpx.post(
        f"{demo.live.url}/api/v1/agent/another-archive/chat",
        json={"message": "hi"},
        headers={"Authorization": f"Bearer {demo.tokens['keeper']}"},
    )
    assert other.status_code == 404 and other.json()["error"]["code"] == "archive.unknown"


def test_write_mode_is_refused_before_streaming_for_a_reader(demo: Served) -> None:
    refused = demo.post("reader", "chat", {"message": "Add Anna", "mode": "write"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "mcp.write_disabled"
    bad = demo.post("keeper", "chat", {"message": "hi", "mode": "fast"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "request.invalid"


def test_a_reader_never_receives_a_restricted_record(
    oh: Served, models: dict[str, ScriptedModel]
) -> None:
    reads = (
        call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}, "c1"),
        call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 3}, "c2"),
        call("dedalo_search_section", {"section_tipo": "ohr", "query": "flood"}, "c3"),
    )
    model = models["local"]
    model.extend(Turn(tool_calls=reads), Turn(text="Done."))
    reader = oh.chat("reader", {"message": "What does the testimony say?"})
    assert SECRET not in json.dumps(reader) and SECRET not in sent_text(model)
    results = [item["data"]["result"] for item in reader if item["type"] == "tool_result"]
    # oh1/3 is withheld for its restricted portal, as a missing record would be (issue 22)
    codes = ["mcp.egress_restricted", "mcp.not_available", "mcp.egress_restricted"]
    assert [r["code"] for r in results] == codes

    model.calls.clear()
    model.extend(Turn(tool_calls=reads), Turn(text="Done."))
    keeper = oh.chat("keeper", {"message": "What does the testimony say?"})
    assert SECRET in sent_text(model)  # the keeper's local model may read it...
    assert SECRET not in json.dumps(keeper)  # ...and the stream still carries no tool data
    assert [r["data"]["result"]["ok"] for r in keeper if r["type"] == "tool_result"] == [True] * 3


def test_a_plan_written_after_reading_restricted_records_needs_a_second_confirmation(
    demo: Served, demo_models: dict[str, ScriptedModel], demo_archive: Archive
) -> None:
    demo_models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),)),
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": PLAN_OPS}),)),
    )
    lines = demo.chat(
        "keeper", {"message": "Add the informant", "session_id": "t", "mode": "write"}
    )
    assert first(lines, "authorization_request")["restricted_text"] is True
    every = ["s1", "p1", "b1"]
    unconfirmed = demo.chat("keeper", {"session_id": "t", "approved_calls": every})
    assert first(unconfirmed, "error")["code"] == "mcp.plan_needs_confirmation"
    assert find_matches(demo_archive, "rsc197", {"rsc84": "Anna Pujol"}) == []
    confirmed = demo.chat(
        "keeper", {"session_id": "t", "approved_calls": every, "confirm_restricted": True}
    )
    assert [r["data"]["result"]["ok"] for r in confirmed if r["type"] == "tool_result"] == [
        True
    ] * 3
    assert len(find_matches(demo_archive, "rsc197", {"rsc84": "Anna Pujol"})) == 1


def test_a_client_that_goes_away_mid_stream_frees_its_session(
    demo: Served, demo_models: dict[str, ScriptedModel]
) -> None:
    demo_models["local"].extend(Turn(text="word " * 40_000, chunk_size=5))
    path, headers = demo.path("chat"), {"Authorization": f"Bearer {demo.tokens['keeper']}"}
    with httpx.stream(
        "POST", path, json={"message": "Talk", "session_id": "d"}, headers=headers, timeout=60
    ) as response:
        lines = response.iter_lines()
        assert json.loads(next(lines))["type"] == "metadata"
    deadline = time.monotonic() + 30
    answer = demo.post("keeper", "chat", {"message": "Again", "session_id": "d"})
    while answer.status_code == 409 and time.monotonic() < deadline:
        time.sleep(0.1)
        answer = demo.post("keeper", "chat", {"message": "Again", "session_id": "d"})
    assert answer.status_code == 200, answer.text
    assert "Again" in answer.text or "done" in answer.text
