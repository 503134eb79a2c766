"""A bug in a served run (a real tool with a programming error, in the real registry): every
dialect answers a coded ``api.internal`` (a 500 where it answers with a status) and the server
goes on serving; the bug is logged once with its traceback."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import httpx
import pytest

from app.api.context import ApiContext
from app.api.server import create_app
from app.api.users import UserStore
from app.core.archive import Archive
from app.core.models.scripted import ScriptedModel, Turn
from tests.api.conftest import Live, login, sse_events, start_server, stop_server
from tests.api.conftest import call as api_call
from tests.core.agent.broken_tool import STREAMED, broken_registry, broken_turn

pytestmark = pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")


@pytest.fixture
def broken_live(ctx: ApiContext) -> Iterator[Live]:
    """A live server over the usual context, its registry holding the broken tool."""
    live = start_server(create_app(dataclasses.replace(ctx, registry=broken_registry())))
    yield live
    stop_server(live)


@pytest.fixture
def http(broken_live: Live) -> Iterator[httpx.Client]:
    """A client of the live server (keeps cookies)."""
    with httpx.Client(base_url=broken_live.url, timeout=30) as client:
        yield client


def assert_internal(error: dict[str, object]) -> None:
    """``error`` is the coded answer to a bug, and says nothing of it."""
    assert error["code"] == "api.internal" and error["category"] == "internal"
    assert "ZeroDivision" not in json.dumps(error)  # the traceback stays in the server's log


def test_the_json_answer_is_a_coded_500_and_the_server_goes_on(
    http: httpx.Client, models: dict[str, ScriptedModel], caplog: pytest.LogCaptureFixture
) -> None:
    models["local"].extend(broken_turn(), Turn(text="Still here."))
    csrf = login(http, "keeper")
    response = api_call(http, csrf, "agent_chat", {"question": "how many sections?"})
    assert response.status_code == 500
    assert_internal(response.json()["error"])
    again = api_call(http, csrf, "agent_chat", {"question": "are you there?"})
    assert again.status_code == 200 and again.json()["data"]["answer"] == "Still here."
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert [r.name for r in tracebacks] == ["app.core.agent.loop"]  # logged once


def test_a_stream_ends_with_one_coded_error_frame(
    http: httpx.Client, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(broken_turn())
    csrf = login(http, "keeper")
    response = api_call(http, csrf, "agent_chat_stream", {"question": "how many sections?"})
    assert response.status_code == 200
    frames = sse_events(response.text)
    names = [name for name, _ in frames]
    assert names[0] == "start" and names[-1] == "error" and "final" not in names
    assert "".join(data["delta"] for name, data in frames if name == "text") == STREAMED
    assert_internal(frames[-1][1])


def test_the_vadalog_and_dezfil_streams_end_with_the_coded_error(
    broken_live: Live, users: UserStore, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    models["local"].extend(broken_turn(), broken_turn())
    token = {"Authorization": f"Bearer {users.issue_token('keeper')}"}
    vadalog = httpx.post(
        f"{broken_live.url}/api/v1/agent/{oh_archive.folder.name}/chat",
        json={"message": "how many sections?", "model": "local"},
        headers=token,
        timeout=60,
    )
    lines = [json.loads(line) for line in vadalog.text.splitlines() if line]
    kinds = [item["type"] for item in lines]
    assert vadalog.status_code == 200 and kinds[-2:] == ["error", "done"]  # as any coded error
    assert_internal(lines[-2]["data"])
    run = httpx.post(f"{broken_live.url}/api/assistant/runs", headers=token, timeout=60)
    dezfil = httpx.post(
        f"{broken_live.url}/api/assistant",
        json={"runId": run.json()["runId"], "message": "how many?", "choice": {"model": "local"}},
        headers=token,
        timeout=60,
    )
    events = [json.loads(line) for line in dezfil.text.splitlines() if line]
    assert dezfil.status_code == 200 and events[-1]["event"] == "error"
    assert "final" not in [e["event"] for e in events]
    assert_internal(events[-1]["data"])
