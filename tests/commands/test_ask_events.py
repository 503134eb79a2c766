"""``arxiu ask`` prints an error streamed by a run as it prints a raised one: its code, its
label in the CLI's language and its hint; ``--json-events`` and the exit code are the same in
every language. The model line's badge and mode, the thinking note, a tool call's summary and
its refusal are in the CLI's language too."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.ask_events import render
from app.commands.exits import exit_code
from app.core.agent.events import StartEvent
from app.core.errors import ModelError
from app.core.models.scripted import ScriptedModel, Turn, call
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
HINTS = {"ca": "suggeriment: ", "es": "sugerencia: ", "en": "hint: "}


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
    assert err[at + 1] == f"{HINTS[lang]}{STOPPED.hint}"  # the hint as the core wrote it


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


RUN_LINES = {
    "ca": (
        "[tools · local / privat · lectura]",
        "(pensant…)",
        "→ Llegeix el registre oh1/999",
        "  refusat: archive.record_not_found",
    ),
    "es": (
        "[tools · local / privado · lectura]",
        "(pensando…)",
        "→ Lee el registro oh1/999",
        "  rechazado: archive.record_not_found",
    ),
    "en": (
        "[tools · local / private · read]",
        "(thinking…)",
        "→ Read record oh1/999",
        "  refused: archive.record_not_found",
    ),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_model_line_thinking_and_a_refused_tool_are_said_in_the_language(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """The model's id and the refusal's code stay as they are; ``--json-events`` summarises
    the call in English, as ``--json`` gives labels in every language."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    missing = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 999})
    for _ in range(2):
        scripted["tools"].extend(
            Turn(thinking="Which record?", tool_calls=(missing,)), Turn(text="No.")
        )
    assert main(["ask", "who is oh1/999?", "--archive", str(folder)]) == 0
    err = capsys.readouterr().err.splitlines()
    model, thinking, tool, refused = RUN_LINES[lang]
    assert err[err.index(model) + 1] == thinking
    assert err[err.index(refused) - 1] == tool
    argv = ["ask", "who is oh1/999?", "--json-events", "--archive", str(folder)]
    assert main(argv) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    summaries = [e["data"]["summary"] for e in events if e["event"] == "tool_use"]
    assert summaries == ["Read record oh1/999"]


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("ca", "[cloud · EXTERN · escriptura]"),
        ("es", "[cloud · EXTERNO · escritura]"),
        ("en", "[cloud · EXTERNAL · write]"),
    ],
)
def test_an_external_model_is_flagged_in_the_language(
    monkeypatch: pytest.MonkeyPatch, lang: str, line: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    out, err = io.StringIO(), io.StringIO()
    render(StartEvent(model="cloud", mode="write", egress="external"), out, err)
    assert (out.getvalue(), err.getvalue()) == ("", line + "\n")
