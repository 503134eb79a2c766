"""``arxiu ask`` on a model that does not write the question's language: the core composes the
answer, says so on stderr and in the ``final`` frame (a scripted model that must not be asked;
the hashing embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.ask_events import COMPOSED_NOTE
from app.core.models.scripted import ScriptedModel
from tests.core.agent.conftest import build_archive

CATALOG = {
    "models": [
        {
            "id": "english",
            "label": "Scripted, English only",
            "provider": "scripted",
            "model": "s",
            "supports_tools": False,
            "languages": ["en"],
            "default": True,
        }
    ]
}
QUESTION = "Qui va haver de marxar de Sant Romà quan el pantà va negar la vall?"


@pytest.fixture
def folder(tmp_path: Path, arxiu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An archive folder, the English-only catalog and the hashing embedder."""
    build_archive(tmp_path / "oh").close()
    (arxiu_home / "models.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    return tmp_path / "oh"


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    """The catalog's one model, with nothing scripted: asking it would fail the run."""
    built = ScriptedModel(id="english", supports_tools=False)
    monkeypatch.setattr("app.core.models.factory.create_model", lambda entry: built)
    return built


def test_a_composed_answer_is_printed_with_its_note(
    folder: Path, model: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", QUESTION, "--archive", str(folder)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("He trobat ") and "(oh1/1)" in captured.out
    assert COMPOSED_NOTE in captured.err and model.calls == []


def test_the_final_frame_says_the_answer_was_composed(
    folder: Path, model: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ask", QUESTION, "--json-events", "--archive", str(folder)])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert code == 0
    assert [e["event"] for e in events].count("tool_use") == 2
    final = events[-1]["data"]
    assert final["composed"] is True and final["answer"].startswith("He trobat ")
    assert all(c["verified"] for c in final["citations"]) and final["citations"]
