"""``arxiu archive set write_allowed``: writes are opt-in per archive, and the CLI obeys them."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.archive import open_archive
from app.core.archive.demo import create_demo_archive
from app.core.archive.write_switch import set_writes_allowed, writes_allowed
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.matching import find_matches
from tests.commands.test_ask_cmd import folder, scripted  # noqa: F401  (fixtures)
from tests.core.agent.test_plans import ANNA_OPS, ANNA_QUESTION


def info(where: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["archive", "info", "--json", "--archive", str(where)]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_a_new_archive_and_the_demo_have_writes_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_archive(tmp_path / "new", create=True).close()
    assert info(tmp_path / "new", capsys)["write_allowed"] is False
    create_demo_archive(tmp_path / "demo").close()
    assert info(tmp_path / "demo", capsys)["write_allowed"] is False


def test_archive_set_turns_writes_on_and_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "a"
    open_archive(where, create=True).close()
    assert main(["archive", "set", "write_allowed", "true", "--archive", str(where)]) == 0
    assert "write_allowed = true" in capsys.readouterr().out
    assert info(where, capsys)["write_allowed"] is True
    assert main(["archive", "set", "write_allowed", "false", "--archive", str(where)]) == 0
    capsys.readouterr()
    with open_archive(where) as archive:
        assert not writes_allowed(archive)
    assert main(["archive", "set", "write_allowed", "maybe", "--archive", str(where)]) == 2
    assert "request.invalid" in capsys.readouterr().err


def propose_anna(model: ScriptedModel) -> None:
    plan = {"summary": "Anna as informant", "ops": ANNA_OPS}
    model.extend(Turn(text="Here is the plan.", tool_calls=(call("propose_change_plan", plan),)))


def test_ask_write_obeys_the_settings_switch_write_mode_off(
    folder: Path,  # noqa: F811
    scripted: dict[str, ScriptedModel],  # noqa: F811
    arxiu_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The archive allows writes, but Settings has write mode off: nothing may be written."""
    (arxiu_home / "settings.json").write_text(json.dumps({"write_mode": False}), "utf-8")
    propose_anna(scripted["tools"])
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    code = main(["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--archive", str(folder)])
    assert code != 0
    assert "mcp.write_disabled" in capsys.readouterr().err
    with open_archive(folder) as archive:
        assert find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"}) == []
        assert archive.audit_rows() == []


def test_ask_write_is_refused_when_the_archive_has_writes_off(
    folder: Path,  # noqa: F811
    scripted: dict[str, ScriptedModel],  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with open_archive(folder) as archive:
        set_writes_allowed(archive, False)
    propose_anna(scripted["tools"])
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    code = main(["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--archive", str(folder)])
    assert code != 0 and "mcp.write_disabled" in capsys.readouterr().err
    with open_archive(folder) as archive:
        assert archive.audit_rows() == []


def test_a_flagged_plan_needs_a_second_yes_on_the_terminal(
    folder: Path,  # noqa: F811
    scripted: dict[str, ScriptedModel],  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A local run reads a restricted testimony, then proposes writing into People (open)."""
    read = call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1})
    scripted["tools"].extend(Turn(tool_calls=(read,)))
    propose_anna(scripted["tools"])
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nno\n"))
    code = main(["ask", ANNA_QUESTION, "--write", "--archive", str(folder)])
    captured = capsys.readouterr()
    assert "contains text from restricted records" in captured.err
    assert "Type yes again" in captured.err
    assert code == 0 and "Cancelled: nothing was written." in captured.err
    with open_archive(folder) as archive:
        assert find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"}) == []

    scripted["tools"].extend(Turn(tool_calls=(read,)))
    propose_anna(scripted["tools"])
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nyes\n"))
    assert main(["ask", ANNA_QUESTION, "--write", "--archive", str(folder)]) == 0
    assert "applied p1\napplied l1" in capsys.readouterr().out
    with open_archive(folder) as archive:
        assert len(find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1
