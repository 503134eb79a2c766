"""``arxiu ask`` lists an answer's citations: verified ones with the command that opens them,
unverified ones behind a warning mark and counted; ``--json-events`` carries the list. Claims
of the answer that no record the run read holds are shown marked (``1963⚠``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.ask_citations import citation_lines
from app.core.archive import open_archive
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.commands.test_ask_cmd import folder, lines_of, scripted

__all__ = ["folder", "scripted"]  # the fixtures, shared with test_ask_cmd

INVENTED = "Joan Vila (oh1/1) left; so did Linares (tp2/39)."


def test_only_records_a_tool_returned_are_listed_as_records_to_open(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: an invented "Linares (tp2/39)" was shown like any other citation."""
    read = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1})
    scripted["tools"].extend(Turn(tool_calls=(read,)), Turn(text=INVENTED))
    assert main(["ask", "who left?", "--archive", str(folder)]) == 0
    captured = capsys.readouterr()
    assert INVENTED in captured.out
    err = captured.err
    assert "✓ Interview with Joan Vila (oh1/1) [en] — arxiu records show oh1 1" in err
    assert "Linares (tp2/39) — unverified" in err and "⚠" in err
    assert "records show tp2" not in err
    assert "1 of 2 citations is unverified" in err


def test_json_events_carry_the_citations_in_the_final_frame(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    scripted["tools"].extend(Turn(text=INVENTED))
    assert main(["ask", "who left?", "--json-events", "--archive", str(folder)]) == 0
    final = lines_of(capsys.readouterr().out)[-1]
    assert final["event"] == "final"
    assert [(c["key"], c["verified"]) for c in final["data"]["citations"]] == [
        ("oh1/1", False),
        ("tp2/39", False),
    ]
    assert json.dumps(final["data"]["citations"])  # plain JSON


def test_no_citations_no_block() -> None:
    assert citation_lines([]) == []


DAM = "The dam was finished in 1962 (oh1/4) and first filled in 1963."
"""The model's reply: 1962 is what the record it read says, 1963 is in no record."""


def test_a_year_the_cited_record_does_not_hold_is_marked(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21: "primer llenado en 1963" printed beside a ✓ citation of a record saying 1962."""
    with open_archive(folder) as archive:
        archive.create_record(
            "oh1",
            {
                "oh2": [{"lang": "lg-eng", "value": "Interview about the dam"}],
                "oh3": [{"lang": "lg-eng", "value": "The dam was finished in 1962."}],
            },
        )
    read = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 4})
    scripted["tools"].extend(Turn(tool_calls=(read,)), Turn(text=DAM))
    assert main(["ask", "when was the dam finished?", "--archive", str(folder)]) == 0
    captured = capsys.readouterr()
    assert DAM in captured.out  # the answer as the model streamed it
    err = captured.err
    assert "✓ Interview about the dam (oh1/4)" in err
    assert "✓ vouches for the record, not for the sentence" in err
    assert "Claims: 2 checked, 1 not in the cited records (⚠):" in err
    assert "  ⚠ The dam was finished in 1962 (oh1/4) and first filled in 1963⚠." in err
    assert "1962⚠" not in err


def test_json_events_carry_the_claims_only_when_there_are_some(
    folder: Path, scripted: dict[str, ScriptedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    scripted["tools"].extend(Turn(text="It was filled in 1963."), Turn(text="no claims here"))
    assert main(["ask", "when?", "--json-events", "--archive", str(folder)]) == 0
    final = lines_of(capsys.readouterr().out)[-1]["data"]
    assert [(c["text"], c["found"]) for c in final["claims"]] == [("1963", False)]
    assert main(["ask", "when?", "--json-events", "--archive", str(folder)]) == 0
    assert "claims" not in lines_of(capsys.readouterr().out)[-1]["data"]
