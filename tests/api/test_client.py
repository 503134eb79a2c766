"""The httpx client of the Dédalo dialect, and ``arxiu ask --server`` (same output as local)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.api.client import DedaloClient, sse_records
from app.cli import main
from app.core.agent.events import FinalEvent, StartEvent, TextEvent, ToolUseEvent
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.api.conftest import Live, password
from tests.core.agent.test_plans import ANNA_OPS


async def test_the_client_streams_core_events_and_answers(
    live: Live, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_list_sections"),)), Turn(text="Two sections.")
    )
    async with DedaloClient(live.url) as client:
        me = await client.login("reader", password("reader"))
        assert me["can_write"] is False
        listing = await client.models()
        assert listing["write_allowed"] is False
        events = [e async for e in client.stream({"question": "what sections?"})]
        assert isinstance(events[0], StartEvent) and isinstance(events[-1], FinalEvent)
        assert any(isinstance(e, ToolUseEvent) for e in events)
        assert "".join(e.delta for e in events if isinstance(e, TextEvent)) == "Two sections."
        answer = await client.chat({"question": "again", "history": events[-1].history})
        assert len(answer["history"]) == 4


async def test_refusals_raise_the_servers_coded_error(live: Live) -> None:
    async with DedaloClient(live.url) as client:
        with pytest.raises(ArxiuError) as denied:
            await client.login("reader", "wrong")
        assert denied.value.code == "auth.invalid_credentials"
        await client.login("reader", password("reader"))
        with pytest.raises(ArxiuError) as unknown:
            [e async for e in client.stream({"question": "hi", "model": "nope"})]
        assert unknown.value.code == "ai.model_unknown" and unknown.value.category == "input"
        with pytest.raises(ArxiuError) as write:
            await client.apply({"ops": []}, "0" * 64)
        assert write.value.code == "mcp.write_disabled"


async def test_an_unreachable_server_is_a_coded_error() -> None:
    async with DedaloClient("http://127.0.0.1:9") as client:
        with pytest.raises(ArxiuError) as unreachable:
            await client.login("x", "y")
    assert unreachable.value.code == "api.unreachable"


async def test_sse_records_skip_heartbeats_and_join_data_lines() -> None:
    async def lines() -> Any:
        for line in [": ping", "", "event: text", 'data: {"delta":', "data: 1}", "", ": ping"]:
            yield line

    assert [r async for r in sse_records(lines())] == [("text", '{"delta":\n1}')]


def _ask(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ask_with_server_prints_what_a_local_ask_prints(
    live: Live,
    models: dict[str, ScriptedModel],
    tmp_path: Path,
    arxiu_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same scripted run, once over the API and once locally: identical output."""
    from tests.commands.test_ask_cmd import CATALOG
    from tests.core.agent.conftest import build_archive

    script = [Turn(tool_calls=(call("dedalo_list_sections"),)), Turn(text="Sections: oh1.")]
    monkeypatch.setenv("ARXIU_PASSWORD", password("reader"))
    models["local"].extend(*script)
    remote_json = _ask(
        ["ask", "--server", live.url, "--user", "reader", "q?", "--json-events"], capsys
    )
    models["local"].extend(*script)
    remote_text = _ask(["ask", "--server", live.url, "--user", "reader", "q?"], capsys)

    build_archive(tmp_path / "local").close()
    catalog = {"models": [{**CATALOG["models"][0], "id": "local"}]}
    (arxiu_home / "models.json").write_text(json.dumps(catalog), encoding="utf-8")
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    local = ScriptedModel(id="local")
    monkeypatch.setattr("app.core.models.factory.create_model", lambda entry: local)
    archive = ["--archive", str(tmp_path / "local")]
    local.extend(*script)
    local_json = _ask(["ask", "q?", "--json-events", *archive], capsys)
    local.extend(*script)
    local_text = _ask(["ask", "q?", *archive], capsys)

    assert remote_json[0] == local_json[0] == 0
    assert remote_json[1] == local_json[1]
    assert remote_text[1] == local_text[1] and "Sections: oh1." in remote_text[1]
    assert remote_text[2] == local_text[2]


def test_ask_with_server_confirms_and_applies_a_plan(
    live: Live,
    models: dict[str, ScriptedModel],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS}),))
    )
    monkeypatch.setenv("ARXIU_PASSWORD", password("writer"))
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    code, out, err = _ask(
        ["ask", "--server", live.url, "--user", "writer", "--write", "Create Anna Pujol"], capsys
    )
    assert code == 0, err
    assert "Change plan: Anna" in err and "dedalo_find_or_create" in err
    assert "applied p1" in out and "created p1: section_id" in out


def test_ask_with_server_without_a_user_is_an_input_error(
    live: Live, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARXIU_USER", raising=False)
    code, _, err = _ask(["ask", "--server", live.url, "hi"], capsys)
    assert code == 2 and "request.invalid" in err


def test_ask_with_server_applies_a_flagged_plan_only_after_the_second_yes(
    live: Live,
    models: dict[str, ScriptedModel],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A plan from a run that read a restricted record needs the second confirmation, which
    the client sends as ``confirm_restricted`` (one yes is not enough)."""
    read = call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1})
    plan = call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS})
    monkeypatch.setenv("ARXIU_PASSWORD", password("keeper"))
    argv = ["ask", "--server", live.url, "--user", "keeper", "--write", "Create Anna Pujol"]

    models["local"].extend(Turn(tool_calls=(read,)), Turn(tool_calls=(plan,)))
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nno\n"))
    code, out, err = _ask(argv, capsys)
    assert code == 0, err
    assert "Cancelled: nothing was written." in err and "applied p1" not in out

    models["local"].extend(Turn(tool_calls=(read,)), Turn(tool_calls=(plan,)))
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nyes\n"))
    code, out, err = _ask(argv, capsys)
    assert code == 0, err
    assert "applied p1" in out and "created p1: section_id" in out
