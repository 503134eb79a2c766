"""``arxiu ask``: streamed answers, JSON events, the confirm card, errors (scripted models)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.commands.ask_cmd import open_index
from app.core.archive import Field, Section, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.index.embedders import HashingEmbedder
from app.core.index.hits import SearchFilter
from app.core.index.service import Index
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.matching import find_matches
from tests.core.agent.conftest import build_archive
from tests.core.agent.test_plans import ANNA_OPS, ANNA_QUESTION

CATALOG = {
    "models": [
        {
            "id": "tools",
            "label": "Scripted with tools",
            "provider": "scripted",
            "model": "s",
            "default": True,
        },
        {
            "id": "small",
            "label": "Scripted small",
            "provider": "scripted",
            "model": "s",
            "supports_tools": False,
        },
    ]
}


@pytest.fixture
def folder(tmp_path: Path, arxiu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An archive folder, a scripted catalog and the hashing embedder."""
    build_archive(tmp_path / "oh").close()
    (arxiu_home / "models.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    return tmp_path / "oh"


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> dict[str, ScriptedModel]:
    """The models the catalog's entries are built as (the provider edge)."""
    built = {
        "tools": ScriptedModel(id="tools"),
        "small": ScriptedModel(id="small", supports_tools=False),
    }
    monkeypatch.setattr("app.core.models.factory.create_model", lambda entry: built[entry.id])
    return built


def lines_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


QUESTION = "who had to leave when the reservoir flooded the valley?"


def test_json_events_stream_one_event_per_line_with_citations_from_the_search(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    scripted["small"].extend(Turn(text="Joan left his village."))
    code = main(["ask", QUESTION, "--model", "small", "--json-events", "--archive", str(folder)])
    out = capsys.readouterr().out
    events = lines_of(out)
    assert code == 0
    names = [e["event"] for e in events]
    assert names[:4] == ["start", "tool_use", "tool_result", "iteration"] and names[-1] == "final"
    assert all(set(e) == {"event", "data"} for e in events)
    final = events[-1]["data"]
    assert final["answer"] == "".join(e["data"]["delta"] for e in events if e["event"] == "text")
    with open_archive(folder) as archive:
        index = Index(archive, HashingEmbedder())
        hits = index.search(QUESTION, k=8, filter=SearchFilter())
        index.close()
    found = {f"{h.label} ({h.key})" for h in hits}
    cited = [line[2:] for line in final["answer"].split("Sources:\n")[1].splitlines()]
    assert cited and set(cited) <= found
    assert "Interview with Joan Vila (oh1/1)" in cited


def test_text_mode_streams_the_answer_and_tool_activity(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    scripted["tools"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),)),
        Turn(text="Joan Vila left (Interview with Joan Vila (oh1/1))."),
    )
    code = main(["ask", "Who is in oh1/1?", "--archive", str(folder)])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.strip() == "Joan Vila left (Interview with Joan Vila (oh1/1))."
    assert "[tools · local / private · read]" in captured.err
    assert "→ Read record oh1/1" in captured.err and "  ok" in captured.err


@pytest.mark.parametrize(("typed", "applied"), [("yes\n", True), ("no\n", False), ("", False)])
def test_write_mode_shows_the_confirm_card_and_applies_only_after_yes(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    typed: str,
    applied: bool,
) -> None:
    scripted["tools"].extend(
        Turn(
            text="I'll create Anna Pujol and link her.",
            tool_calls=(
                call("propose_change_plan", {"summary": "Anna as informant", "ops": ANNA_OPS}),
            ),
        )
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main(["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--archive", str(folder)])
    captured = capsys.readouterr()
    assert code == 0
    assert "Change plan: Anna as informant" in captured.err
    assert (
        "dedalo_find_or_create" in captured.err
        and '"match": {"rsc85": "Anna Pujol"}' in captured.err
    )
    assert '"target": {"ref": "p1"}' in captured.err and "Type yes to apply it" in captured.err
    with open_archive(folder) as archive:
        annas = find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})
    assert len(annas) == (1 if applied else 0)
    if applied:
        assert "applied p1\napplied l1" in captured.out
    else:
        assert "Cancelled: nothing was written." in captured.err


def test_a_refused_request_prints_the_coded_error(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "hi", "--model", "nope", "--archive", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "error [ai.model_unknown]" in err and "hint:" in err
    assert main(["ask", "hi", "--context", "oh1", "--archive", str(folder)]) == 2
    assert "error [request.invalid]" in capsys.readouterr().err
    assert scripted["tools"].calls == []  # no model was asked


def test_a_context_the_archive_does_not_hold_is_refused_before_asking(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--context oh1/999`` names no record: the question is not asked about a record that is
    not there (the model is never called); the error says so in the CLI's language."""
    for lang, said in (
        ("en", "error [request.invalid]: The archive has no record oh1/999."),
        ("ca", "error [request.invalid]: L'arxiu no té cap registre oh1/999."),
        ("es", "error [request.invalid]: El archivo no tiene ningún registro oh1/999."),
    ):
        monkeypatch.setenv("ARXIU_LANG", lang)
        assert main(["ask", "hi", "--context", "oh1/999", "--archive", str(folder)]) == 2
        assert capsys.readouterr().err.splitlines()[0] == said
    assert scripted["tools"].calls == []


SEED_EVENTS = {
    "start",
    "thinking",
    "text",
    "tool_use",
    "tool_result",
    "iteration",
    "final",
    "error",
}


def propose_anna(scripted: dict[str, ScriptedModel]) -> None:
    scripted["tools"].extend(
        Turn(
            text="I'll create Anna Pujol and link her.",
            tool_calls=(
                call("propose_change_plan", {"summary": "Anna as informant", "ops": ANNA_OPS}),
            ),
        )
    )


@pytest.mark.parametrize(("typed", "applied"), [("yes\n", True), ("no\n", False)])
def test_write_with_json_events_keeps_stdout_to_seed_events(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    typed: str,
    applied: bool,
) -> None:
    propose_anna(scripted)
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    argv = ["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--json-events"]
    code = main([*argv, "--archive", str(folder)])
    captured = capsys.readouterr()
    assert code == 0
    events = lines_of(captured.out)
    assert all(set(e) == {"event", "data"} and e["event"] in SEED_EVENTS for e in events)
    assert events[-1]["event"] == "final" and events[-1]["data"]["stop"] == "change_plan"
    assert "Change plan: Anna as informant" in captured.err
    reports = [json.loads(line) for line in captured.err.splitlines() if line.startswith('{"ok"')]
    if applied:
        (report,) = reports
        assert report["ok"] is True
        assert [a["op_id"] for a in report["data"]["applied"]] == ["p1", "l1"]
        assert set(report["data"]["created"]) == {"p1"} and report["data"]["skipped"] == []
    else:
        assert reports == [] and "Cancelled: nothing was written." in captured.err


def test_write_with_json_events_reports_a_refused_plan_as_a_failure_envelope(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the person reads the plan, writes are turned off from another handle on the
    archive: the real apply check refuses it, the CLI reports a failure envelope, and nothing
    is written."""
    propose_anna(scripted)

    class TurnedOffWhileConfirming(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            with open_archive(folder) as other:
                set_writes_allowed(other, False)
            return super().readline(size)

    monkeypatch.setattr("sys.stdin", TurnedOffWhileConfirming("yes\n"))
    argv = ["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--json-events"]
    code = main([*argv, "--archive", str(folder)])
    captured = capsys.readouterr()
    assert code == 3
    assert all(e["event"] in SEED_EVENTS for e in lines_of(captured.out))
    (envelope,) = [json.loads(ln) for ln in captured.err.splitlines() if ln.startswith('{"ok"')]
    assert envelope["ok"] is False and envelope["error"]["code"] == "mcp.write_disabled"
    with open_archive(folder) as archive:
        assert archive.audit_rows() == []
        assert not find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})


INDEXING_FIRST = {
    "ca": ("Primer s'indexa 1 element…", "Primer s'indexen 2 elements…"),
    "es": ("Primero se indexa 1 elemento…", "Primero se indexan 2 elementos…"),
    "en": ("Indexing 1 item first…", "Indexing 2 items first…"),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_what_is_indexed_first_is_counted_in_the_language(
    tmp_path: Path,
    arxiu_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """One letter and then two, never indexed: each a record to chunk before the answer."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    for count, said in enumerate(INDEXING_FIRST[lang], start=1):
        with open_archive(tmp_path / str(count), create=True) as archive:
            archive.put_section(Section("c1", {"lg-eng": "Letters"}, label_field="c2"))
            archive.put_field(Field("c2", "c1", {"lg-eng": "Title"}, "text", position=1))
            for number in range(count):
                archive.create_record(
                    "c1", {"c2": [{"lang": "lg-cat", "value": f"Carta {number}"}]}
                )
            open_index(archive, quiet=False).close()
            assert capsys.readouterr().err.splitlines() == [said]
            quiet = open_index(archive, quiet=False)  # nothing left: nothing said
            assert quiet.pending() == 0 and capsys.readouterr().err == ""
            quiet.close()
