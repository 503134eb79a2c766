"""The Dezfil dialect end to end over a live uvicorn server with scripted models.

What the instance offers, reserved runs, the four choice refusals that leave a run reusable,
the first submission binding model and effort, ``confirm_required`` with its pending id, and
at most one resolution taking effect — also between two servers on one archive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.api.server import create_app
from app.api.users import UserStore
from app.core.archive import Archive, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSettings
from app.core.tools.matching import find_matches
from app.core.tools.registry import build_registry
from tests.api.conftest import Live, start_server, stop_server
from tests.api.serving import serve_env, start_serve
from tests.core.agent.conftest import RecordingSearcher, scripted_catalog

PERSON_OPS: list[dict[str, Any]] = [
    {
        "op_id": "p1",
        "tool": "dedalo_find_or_create",
        "args": {"section_tipo": "rsc197", "match": {"Name": "Anna Pujol"}, "set": {"rsc89": 1931}},
        "summary": "Find or create person Anna Pujol",
    }
]
PROPOSE = Turn(
    text="I'll add Anna Pujol.",
    tool_calls=(call("propose_change_plan", {"summary": "Anna Pujol", "ops": PERSON_OPS}),),
)


class Client:
    """Bearer-authenticated calls to one server."""

    def __init__(self, live: Live, token: str) -> None:
        self.url = live.url
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self) -> httpx.Response:
        """``GET /api/assistant``."""
        return httpx.get(self.url + "/api/assistant", headers=self.headers, timeout=60)

    def run(self) -> str:
        """A new run id."""
        response = httpx.post(self.url + "/api/assistant/runs", headers=self.headers, timeout=60)
        assert response.status_code == 201, response.text
        run_id: str = response.json()["runId"]
        return run_id

    def submit(self, body: Any) -> httpx.Response:
        """``POST /api/assistant``."""
        return httpx.post(
            self.url + "/api/assistant", content=json.dumps(body), headers=self.headers, timeout=60
        )

    def events(self, body: Any) -> list[tuple[str, dict[str, Any]]]:
        """A message's ``(event, data)`` lines."""
        response = self.submit(body)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in response.text.splitlines() if line]
        return [(item["event"], item["data"]) for item in lines]


@pytest.fixture
def tokens(users: UserStore) -> dict[str, str]:
    """A bearer token per user."""
    return {user.name: users.issue_token(user.name) for user in users.list()}


@pytest.fixture
def clients(live: Live, tokens: dict[str, str]) -> dict[str, Client]:
    """A client per user of the live server."""
    return {name: Client(live, token) for name, token in tokens.items()}


def data(events: list[tuple[str, dict[str, Any]]], name: str) -> dict[str, Any]:
    """The data of the first event ``name``."""
    return next(payload for event, payload in events if event == name)


def test_the_status_read_lists_each_model_with_its_efforts(clients: dict[str, Client]) -> None:
    response = clients["writer"].get()
    assert response.status_code == 200
    body = response.json()
    efforts = {m["id"]: m["efforts"] for m in body["models"]}
    assert efforts["local"] == ["default", "low", "high"]
    assert efforts["small"] == ["default"]
    assert body["default"] == "local" and body["write_allowed"] is True
    assert clients["reader"].get().json()["write_allowed"] is False


def test_the_first_accepted_submission_binds_model_and_effort(
    clients: dict[str, Client], models: dict[str, ScriptedModel]
) -> None:
    client = clients["writer"]
    run = client.run()
    events = client.events(
        {"runId": run, "message": "hello", "choice": {"model": "local", "effort": "high"}}
    )
    assert events[0][0] == "start" and events[-1][0] == "final"
    start, final = data(events, "start"), data(events, "final")
    assert start["runId"] == final["runId"] == run
    assert final["provenance"] == {
        "requested": {
            "model": "local",
            "effort": "high",
            "defaulted": {"model": False, "effort": False},
        },
        "resolved": {"model": "local", "effort": "high"},
    }
    assert models["local"].calls[-1].options.effort == "high"
    again = client.submit({"runId": run, "message": "and again", "choice": {"model": "small"}})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "assistant_run_bound"
    assert models["small"].calls == []


@pytest.mark.parametrize(
    ("choice", "code"),
    [
        ("local", "assistant_choice_invalid"),
        ({"model": "local", "temperature": 0}, "assistant_choice_invalid"),
        ({"model": 3}, "assistant_choice_invalid"),
        ({"model": "gpt-9"}, "assistant_model_not_offered"),
        ({"model": "small", "effort": "high"}, "assistant_effort_not_supported"),
        ({"model": "local", "effort": "maximum"}, "assistant_effort_not_offered"),
    ],
)
def test_a_refused_choice_leaves_the_run_unbound_and_reusable(
    clients: dict[str, Client], models: dict[str, ScriptedModel], choice: Any, code: str
) -> None:
    client = clients["writer"]
    run = client.run()
    refused = client.submit({"runId": run, "message": "hello", "choice": choice})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == code
    assert all(model.calls == [] for model in models.values())  # no provider call was made
    events = client.events({"runId": run, "message": "hello", "choice": {"model": "small"}})
    assert data(events, "final")["provenance"]["resolved"] == {
        "model": "small",
        "effort": "default",
    }


def test_default_and_an_omitted_effort_differ_only_in_provenance(
    clients: dict[str, Client], models: dict[str, ScriptedModel]
) -> None:
    client = clients["writer"]
    named = client.events({"runId": client.run(), "message": "a", "choice": {"effort": "default"}})
    omitted = client.events({"runId": client.run(), "message": "b", "choice": {}})
    first, second = data(named, "final")["provenance"], data(omitted, "final")["provenance"]
    assert first["resolved"] == second["resolved"] == {"model": "local", "effort": "default"}
    assert first["requested"]["defaulted"] == {"model": True, "effort": False}
    assert second["requested"]["defaulted"] == {"model": True, "effort": True}
    assert [c.options.effort for c in models["local"].calls] == [None, None]


@pytest.mark.parametrize(
    "body",
    [
        {"message": "hi", "resolution": {"pending": "x", "approved": True}},
        {"message": "hi", "temperature": 1},
        {"resolution": {"pending": "x"}},
        {"resolution": {"pending": "x", "approved": "yes"}},
        ["message"],
        {},
    ],
)
def test_anything_but_a_message_or_a_resolution_is_refused(
    clients: dict[str, Client], body: Any
) -> None:
    if isinstance(body, dict) and "message" in body:
        body = {"runId": clients["writer"].run(), **body}
    refused = clients["writer"].submit(body)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "assistant_request_invalid"


def test_runs_and_tokens_are_per_user(clients: dict[str, Client], live: Live) -> None:
    run = clients["writer"].run()
    foreign = clients["keeper"].submit({"runId": run, "message": "hi"})
    assert foreign.status_code == 404
    assert foreign.json()["error"]["code"] == "assistant_run_unknown"
    anonymous = httpx.post(live.url + "/api/assistant/runs", timeout=60)
    assert anonymous.status_code == 401


def propose(client: Client, models: dict[str, ScriptedModel]) -> tuple[str, dict[str, Any]]:
    """Run a message whose model proposes :data:`PERSON_OPS`; the pending id and the plan."""
    models["local"].extend(PROPOSE)
    events = client.events({"runId": client.run(), "message": "Add Anna Pujol, born 1931"})
    names = [e for e, _ in events]
    assert names[-2:] == ["confirm_required", "final"]
    confirm = data(events, "confirm_required")
    assert confirm["pending"] == data(events, "final")["change_plan"]["pending_id"]
    return confirm["pending"], confirm["plan"]


def test_a_confirmation_resolves_once(
    clients: dict[str, Client], models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    pending, _ = propose(clients["writer"], models)
    assert find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"}) == []
    answer = clients["writer"].submit({"resolution": {"pending": pending, "approved": True}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "applied"
    assert list(answer.json()["report"]["created"]) == ["p1"]
    assert len(find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1
    late = clients["writer"].submit({"resolution": {"pending": pending, "approved": False}})
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "mcp.plan_resolved"


def test_a_reader_sees_no_confirmation_and_cannot_resolve_one(
    clients: dict[str, Client], models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(PROPOSE)
    events = clients["reader"].events({"runId": clients["reader"].run(), "message": "Add Anna"})
    assert "confirm_required" not in [e for e, _ in events]  # read mode: no plan is proposed
    pending, _ = propose(clients["writer"], models)
    stolen = clients["keeper"].submit({"resolution": {"pending": pending, "approved": True}})
    assert stolen.status_code == 404


def resolve_together(targets: list[tuple[Client, str]]) -> list[httpx.Response]:
    """Send the approvals at the same moment from threads; their answers."""
    barrier = threading.Barrier(len(targets))
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def send(client: Client, pending: str) -> None:
        barrier.wait()
        answer = client.submit({"resolution": {"pending": pending, "approved": True}})
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=send, args=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def assert_applied_once(
    clients: dict[str, Client], other: Client, models: dict[str, ScriptedModel], archive: Archive
) -> None:
    """The writer's proposed plan approved at the same moment by the writer and by ``other``
    (the writer again, or the writer on another server): one applies it, one is refused, and
    the person is created once."""
    pending, _ = propose(clients["writer"], models)
    answers = resolve_together([(clients["writer"], pending), (other, pending)])
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    assert len(find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1


def test_two_concurrent_resolutions_take_effect_once(
    clients: dict[str, Client], models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    assert_applied_once(clients, clients["writer"], models, oh_archive)


@pytest.fixture
def second_server(
    ctx: ApiContext, users: UserStore, models: dict[str, ScriptedModel]
) -> Iterator[Live]:
    """Another server on the same archive: its own connection, sessions and memory."""
    archive = open_archive(ctx.open_archive().location)
    other = ApiContext(
        archive_dir=archive.location,
        users=users,
        allow_writes=True,
        archive=archive,
        searcher=RecordingSearcher(archive),
        catalog=scripted_catalog(),
        registry=build_registry(),
        model_factory=lambda entry: models[entry.id],
        settings=AssistantSettings(),
    )
    live = start_server(create_app(other))
    yield live
    stop_server(live)
    archive.close()


def test_resolutions_on_two_servers_take_effect_once(
    clients: dict[str, Client],
    tokens: dict[str, str],
    second_server: Live,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
) -> None:
    assert_applied_once(clients, Client(second_server, tokens["writer"]), models, oh_archive)


def test_with_the_archive_writes_off_a_writer_asks_in_read_mode(
    clients: dict[str, Client], oh_archive: Archive
) -> None:
    set_writes_allowed(oh_archive, False)
    assert clients["writer"].get().json()["write_allowed"] is False
    events = clients["writer"].events({"runId": clients["writer"].run(), "message": "hello"})
    assert data(events, "start")["mode"] == "read"
    assert events[-1][0] == "final"


def test_a_message_that_supersedes_a_pending_action_declines_it(
    clients: dict[str, Client], models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    client = clients["writer"]
    pending, _ = propose(client, models)
    client.events({"runId": client.run(), "message": "Never mind that", "supersedes": pending})
    late = client.submit({"resolution": {"pending": pending, "approved": True}})
    assert late.status_code == 409
    assert late.json()["error"]["details"]["status"] == "superseded"
    assert find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"}) == []


@pytest.fixture
def serve_child(
    oh_archive: Archive, users: UserStore, tokens: dict[str, str], tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``arxiu serve --allow-writes`` on the same archive, as a separate process; it and its
    URL."""
    home = tmp_path / "child-home"
    home.mkdir()
    shutil.copy(users.path, home / "api_users.json")  # after the tokens were issued
    args = ["--allow-writes", "--port", "0", "--archive", oh_archive.location]
    errors = (tmp_path / "serve.err").open("w")
    child = start_serve(args, serve_env(home), stderr=errors)
    try:
        assert child.stdout is not None
        first_line = child.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", first_line)
        assert found, first_line + (tmp_path / "serve.err").read_text()
        yield child, found.group(1)
    finally:
        if child.poll() is None:
            child.terminate()
        child.wait(timeout=30)
        errors.close()


@pytest.fixture
def serve_process(serve_child: tuple[subprocess.Popen[str], str]) -> str:
    """The URL of :func:`serve_child`."""
    return serve_child[1]


def test_resolutions_in_two_processes_take_effect_once(
    clients: dict[str, Client],
    tokens: dict[str, str],
    serve_process: str,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
) -> None:
    other = Client(Live(serve_process, None, None), tokens["writer"])  # type: ignore[arg-type]
    assert_applied_once(clients, other, models, oh_archive)


def test_another_users_plan_cannot_be_declined_from_another_server(
    clients: dict[str, Client],
    tokens: dict[str, str],
    second_server: Live,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
) -> None:
    pending, _ = propose(clients["writer"], models)
    elsewhere = Client(second_server, tokens["keeper"])  # this server never saw the run
    answers = [
        elsewhere.submit({"resolution": {"pending": plan_id, "approved": approved}})
        for plan_id in (pending, "0" * 32)
        for approved in (False, True)
    ]
    assert [a.status_code for a in answers] == [404] * 4, [a.text for a in answers]
    bodies = [a.json()["error"] for a in answers]
    assert all(b == bodies[0] for b in bodies) and bodies[0]["code"] == "mcp.plan_unknown"
    mine = clients["writer"].submit({"resolution": {"pending": pending, "approved": True}})
    assert mine.status_code == 200 and mine.json()["status"] == "applied", mine.text
    assert len(find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1


def test_another_users_message_cannot_supersede_a_plan(
    clients: dict[str, Client], models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    pending, _ = propose(clients["writer"], models)
    keeper = clients["keeper"]
    models["local"].extend(Turn(text="Fine."))
    keeper.events({"runId": keeper.run(), "message": "Never mind", "supersedes": pending})
    mine = clients["writer"].submit({"resolution": {"pending": pending, "approved": True}})
    assert mine.status_code == 200 and mine.json()["status"] == "applied", mine.text
    assert len(find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1


TWIN_OPS = [
    {
        "op_id": f"c{n}",
        "tool": "dedalo_create_record",
        "args": {"section_tipo": "rsc197", "values": {"rsc85": f"Twin person {n}"}},
        "summary": f"Create twin person {n}",
    }
    for n in range(1, 61)
]


def twins(archive: Archive) -> int:
    records = archive.list_records("rsc197", limit=10_000)
    return sum(1 for r in records if r.text("rsc85").startswith("Twin person"))


def test_three_identical_plans_one_killed_mid_apply_each_create_once(
    clients: dict[str, Client],
    tokens: dict[str, str],
    serve_child: tuple[subprocess.Popen[str], str],
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
) -> None:
    from app.core.agent.plan_book import PlanBook

    writer = clients["writer"]
    pendings = []
    for _ in range(3):  # one plan, proposed three times: one content hash
        models["local"].extend(
            Turn(tool_calls=(call("propose_change_plan", {"summary": "Twins", "ops": TWIN_OPS}),))
        )
        events = writer.events({"runId": writer.run(), "message": "Add the sixty twins"})
        pendings.append(data(events, "confirm_required")["pending"])
    first, second, third = pendings
    reports = [writer.submit({"resolution": {"pending": first, "approved": True}}).json()]
    child, url = serve_child
    elsewhere = Client(Live(url, None, None), tokens["writer"])  # type: ignore[arg-type]

    def send() -> None:
        with contextlib.suppress(httpx.HTTPError):  # the server is killed mid-answer
            elsewhere.submit({"resolution": {"pending": third, "approved": True}})

    threading.Thread(target=send, daemon=True).start()
    book = PlanBook(oh_archive)
    deadline = time.monotonic() + 120
    while twins(oh_archive) < 60 + 17:  # the third plan has made 17 records (or more)
        assert time.monotonic() < deadline, "the other server never applied the plan"
        time.sleep(0.002)
    child.kill()  # SIGKILL, mid-apply
    child.wait(timeout=30)
    killed = asyncio.run(book.get(third))
    assert killed is not None and (killed.status, killed.interrupted) == ("applying", True)
    made_before = twins(oh_archive) - 60
    assert 17 <= made_before < 60
    for plan_id in (second, third):
        answer = writer.submit({"resolution": {"pending": plan_id, "approved": True}})
        assert answer.status_code == 200 and answer.json()["status"] == "applied", answer.text
        reports.append(answer.json())
    resumed = [a for a in reports[2]["report"]["applied"] if a.get("resumed")]
    assert len(resumed) == made_before  # its own audit rows, not the first plan's
    assert twins(oh_archive) == 180
    created = [set(r["report"]["created"].values()) for r in reports]
    assert all(len(c) == 60 for c in created) and len(set.union(*created)) == 180
    print(f"\nidentical hashes over HTTP: 3 plans of 60 ops, one killed after {made_before}")
