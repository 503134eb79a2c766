"""``arxiu ask`` and a bug: a tool with a programming error in it ends the command with a
non-zero exit code and its traceback logged once, never as a coded ``error [...]`` line."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app.cli import main
from app.commands.exits import EXIT_BUG
from app.core.models.scripted import ScriptedModel
from tests.core.agent.broken_tool import BROKEN_TOOL, STREAMED, broken_registry, broken_turn
from tests.core.agent.conftest import build_archive

CATALOG = {
    "models": [{"id": "tools", "label": "Tools", "provider": "scripted", "model": "s"}],
}


@pytest.fixture
def folder(tmp_path: Path, arxiu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An archive, a scripted catalog and the hashing embedder."""
    build_archive(tmp_path / "oh").close()
    (arxiu_home / "models.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    return tmp_path / "oh"


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    """The catalog's model (the provider edge), the CLI's registry holding the broken tool."""
    built = ScriptedModel(id="tools")
    built.extend(broken_turn())
    monkeypatch.setattr("app.core.models.factory.create_model", lambda entry: built)
    monkeypatch.setattr("app.core.tools.registry.build_registry", broken_registry)
    return built


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The log records carrying a traceback."""
    return [r for r in caplog.records if r.exc_info is not None]


@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
def test_a_tool_bug_exits_non_zero_with_its_traceback_logged_once(
    folder: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    code = main(["ask", "how many sections?", "--archive", str(folder)])
    captured = capsys.readouterr()
    assert code == EXIT_BUG != 0
    assert captured.out.strip() == STREAMED  # what streamed before the bug was printed
    assert "arxiu hit a bug (ZeroDivisionError)" in captured.err
    assert "error [" not in captured.err  # a bug is not a coded error
    (logged,) = tracebacks(caplog)  # the loop logged it; the CLI did not log it again
    assert logged.name == "app.core.agent.loop"
    assert "ZeroDivisionError" in logged.getMessage() and "in dedalo_broken_count" in caplog.text


@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
def test_json_events_end_without_a_terminal_frame_when_a_bug_ends_the_run(
    folder: Path, model: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", "how many sections?", "--json-events", "--archive", str(folder)])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    names = [e["event"] for e in events]
    assert code == EXIT_BUG
    assert names[0] == "start" and names[-1] == "tool_use"
    assert events[-1]["data"]["name"] == BROKEN_TOOL
    assert "error" not in names and "final" not in names
