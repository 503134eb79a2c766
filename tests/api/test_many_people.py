"""Many people on one shared archive: two app processes and one ``arxiu serve`` at once.

Each app process is the app's core (an :class:`~app.core.session.AssistantSession` on the
archive's URL, as the window holds one), in a process of its own; the server is the real
``arxiu serve --archive postgresql://…`` command. One plan that both app processes approve at
the same moment is applied exactly once; the record that apply changes is heard by a third
process listening as an open window listens (``LISTEN arxiu_records``), and served by
``arxiu serve`` (its OAI-PMH lists the new person), each within a second.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.agent.plan_book import NewPlan, PlanBook
from app.core.agent.plans import validate_plan
from app.core.archive import Archive, RecordKey
from app.core.tools.matching import find_matches
from app.core.tools.registry import build_registry
from tests.api.serving import serve_env, start_serve
from tests.core.agent import plan_children

SHOWN_WITHIN_S = 1.0
NAME = "Anna Pujol i Serra"


def _listen_in_child(url: str, key: str, ready: Any, heard: Any) -> None:
    """Another workstation's window: listen for record changes, report when ``key`` changes."""
    from app.core.archive.postgres.record_changes import RecordChangeListener

    listener = RecordChangeListener(url)
    ready.set()
    for change in listener.changes(timeout=120):
        if f"{change.section_tipo}/{change.section_id}" == key:
            heard.put(time.time())
            return
    heard.put(None)


@pytest.fixture
def served(oh_archive: Archive, tmp_path: Path) -> Iterator[str]:
    """``arxiu serve`` on the shared archive, as its own process; its URL."""
    home = tmp_path / "serve-home"
    home.mkdir()
    errors = (tmp_path / "serve.err").open("w")
    child = start_serve(
        ["--port", "0", "--archive", oh_archive.location], serve_env(home), stderr=errors
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", first)
        assert found, first + (tmp_path / "serve.err").read_text()
        yield found.group(1)
    finally:
        if child.poll() is None:
            child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
        errors.close()


def _people_served(url: str) -> set[str]:
    """The identifiers of the people ``arxiu serve`` lists over OAI-PMH."""
    answer = httpx.get(
        f"{url}/oai",
        params={"verb": "ListIdentifiers", "metadataPrefix": "oai_dc", "set": "rsc197"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return set(re.findall(r"<identifier>([^<]+)</identifier>", answer.text))


def _plan(archive: Archive) -> dict[str, Any]:
    ops = [
        {
            "op_id": "p1",
            "tool": "dedalo_create_record",
            "args": {"section_tipo": "rsc197", "values": {"rsc85": NAME}},
            "summary": f"create {NAME}",
        },
        {
            "op_id": "l1",
            "tool": "dedalo_portal_link",
            "args": {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh24",
                "target": {"ref": "p1"},
            },
            "summary": "link her as the informant of oh1/1",
        },
    ]
    return {"summary": "two app processes approve this at once", "ops": ops}


@pytest.mark.postgresql_only("many people at once on one archive: a server's")
async def test_two_apps_and_a_server_apply_a_plan_once_and_see_its_change(
    oh_archive: Archive, served: str
) -> None:
    checked = validate_plan(_plan(oh_archive), oh_archive, build_registry())
    record = await PlanBook(oh_archive).add(
        NewPlan(checked, conversation_id=None, model_id="local", egress="local")
    )
    before = _people_served(served)
    ctx = plan_children.context()
    ready, go, events, heard = ctx.Event(), ctx.Event(), ctx.Queue(), ctx.Queue()
    window = ctx.Process(target=_listen_in_child, args=(oh_archive.location, "oh1/1", ready, heard))
    window.start()
    assert ready.wait(60)
    apps = [
        ctx.Process(
            target=plan_children.resolve_in_child,
            args=(oh_archive.location, record.id, ["p1", "l1"], None, events, go),
        )
        for _ in range(2)
    ]
    for app in apps:
        app.start()
    time.sleep(1.0)  # both app processes have opened the archive and wait on `go`
    go.set()
    outcomes = [events.get(timeout=120) for _ in apps]
    applied_at = time.time()
    for app in apps:
        app.join(timeout=60)
    reports = [value for kind, value in outcomes if kind == "report" and value is not None]
    refused = [value for kind, value in outcomes if kind == "error"]
    applied = [r for r in reports if [a["op_id"] for a in r["applied"]] == ["p1", "l1"]]
    assert len(applied) == 1, outcomes  # exactly one of the two apps applied it
    assert refused in ([], ["mcp.plan_resolved"]), outcomes
    people = find_matches(oh_archive, "rsc197", {"rsc85": NAME})
    assert len(people) == 1, people  # written once
    informants = oh_archive.get_record(RecordKey("oh1", 1)).items("oh24")
    assert [i["value"] for i in informants].count(people[0].to_locator()) == 1

    heard_at = heard.get(timeout=30)
    window.join(timeout=30)
    assert heard_at is not None and heard_at - applied_at < SHOWN_WITHIN_S
    print(
        f"\none plan resolved by two apps: applied {len(applied)} time(s), refused {refused}; "
        f"the other app heard the change {heard_at - applied_at:+.3f} s from the end of the "
        "applying call (negative: before that call had returned)"
    )
    deadline = time.monotonic() + SHOWN_WITHIN_S
    new: set[str] = set()
    while not new and time.monotonic() < deadline:
        new = _people_served(served) - before
    assert [n.rsplit(":", 1)[1] for n in new] == [str(people[0])], new
