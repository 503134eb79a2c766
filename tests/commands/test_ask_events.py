"""``arxiu ask`` prints an error streamed by a run as it prints a raised one: its code, its
label in the CLI's language and its hint; ``--json-events`` and the exit code are the same in
every language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.exits import exit_code
from app.core.errors import ModelError
from app.core.models.scripted import ScriptedModel, Turn
from tests.commands.test_ask_cmd import folder, scripted

__all__ = ["folder", "scripted"]  # the fixtures of test_ask_cmd, used here too

STOPPED = ModelError(
    "ai.stream_idle",
    "The model server sent nothing for 60 s.",
    hint="Check that the server is still running.",
)
LABELS = {
    "ca": "El servidor del model ha deixat de respondre: ",
    "es": "El servidor del modelo ha dejado de responder: ",
    "en": "",
}


def _ask(folder: Path, scripted: dict[str, ScriptedModel], *extra: str) -> int:
    """Ask a question whose answer stops with :data:`STOPPED` after a few words."""
    scripted["small"].extend(Turn(text="Joan left", error=STOPPED))
    return main(["ask", "who left?", "--model", "small", "--archive", str(folder), *extra])


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_a_streamed_error_is_labelled_in_the_language(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    assert _ask(folder, scripted) == exit_code(STOPPED.category)
    err = capsys.readouterr().err.splitlines()
    at = err.index(f"error [ai.stream_idle]: {LABELS[lang]}{STOPPED.message}")
    assert err[at - 1] == ""  # set apart from the streamed answer, as before
    assert err[at + 1] == f"hint: {STOPPED.hint}"


def test_the_json_events_are_the_same_in_every_language(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frames = []
    for lang in ("ca", "es", "en"):
        monkeypatch.setenv("ARXIU_LANG", lang)
        assert _ask(folder, scripted, "--json-events") == exit_code(STOPPED.category)
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
        error = events[-1]
        assert error["event"] == "error"
        frames.append(error["data"])
    assert frames[0] == frames[1] == frames[2]
    assert frames[0]["code"] == "ai.stream_idle"
    assert frames[0]["message"] == STOPPED.message
    assert frames[0]["label_key"] == "error.ai.stream_idle"
