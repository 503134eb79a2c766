"""Claims of a model's prose — numbers, dates, names — checked against the records the run read
(issue 21, item 2): the forms each is written in, both sides normalised, what is never a claim,
and a real run whose model writes 1963 where the record it read says 1962."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.agent.claims import (
    Claim,
    check_claims,
    claims_note,
    fold,
    mark_claims,
    number_values,
)
from app.core.agent.conversation_types import TurnRecord
from app.core.agent.conversations import export_markdown, turn_record
from app.core.agent.events import FinalEvent, from_wire
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.json_types import JsonShapeError
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession
from tests.core.agent.conftest import SessionFactory, collect

RECORD = json.dumps(
    {
        "title": "La presa de Rialb",
        "date": "1962-03-04",
        "text": "El pantà es va acabar el 1962; a Les Feixes hi vivien 1.962 persones.",
    },
    ensure_ascii=False,
)


def shown(answer: str, question: str = "", sources: tuple[str, ...] = (RECORD,)) -> str:
    """``answer`` with its claims found in no source marked."""
    return mark_claims(answer, check_claims(answer, question, sources))


def kinds(answer: str) -> list[tuple[str, str, bool]]:
    return [(c.text, c.kind, c.found) for c in check_claims(answer, "", [RECORD])]


def test_a_year_the_records_do_not_hold_is_marked_and_one_they_hold_is_not() -> None:
    answer = "Presa terminada en 1962, primer llenado en 1963 (oh1/2)."
    assert shown(answer) == "Presa terminada en 1962, primer llenado en 1963⚠ (oh1/2)."
    assert kinds(answer) == [("1962", "date", True), ("1963", "date", False)]


@pytest.mark.parametrize(
    "written",
    ["1.962 persones", "1,962 persones", "1962 persones", "1962 people"],
)
def test_numbers_match_in_every_thousands_form(written: str) -> None:
    claims = check_claims(written, "", [RECORD])
    assert [claim.found for claim in claims] == [True], claims


def test_number_values_read_separators_as_thousands_or_decimals() -> None:
    assert number_values("1.962") == {"1962", "1.962"}
    assert number_values("1,962") == {"1962", "1.962"}
    assert number_values("3,5") == {"3.5"}
    assert number_values("1.234,50") == {"1234.5"}
    assert number_values("1,234.50") == {"1234.5"}
    assert number_values("128,493") == {"128493", "128.493"}
    assert number_values("007") == {"7"}


def test_a_number_the_records_do_not_hold_is_marked() -> None:
    assert shown("Hi vivien 2.400 persones i 3,5 km.") == "Hi vivien 2.400⚠ persones i 3,5⚠ km."


@pytest.mark.parametrize(
    "written",
    [
        "el 4 de març de 1962",
        "el 4 de marzo de 1962",
        "on March 4, 1962",
        "on 4 March 1962",
        "el 04/03/1962",
        "el 1962-03-04",
        "el març de 1962",
    ],
)
def test_dates_match_in_catalan_spanish_english_and_iso_forms(written: str) -> None:
    claims = check_claims(f"Es va acabar {written}.", "", [RECORD])
    assert [(c.kind, c.found) for c in claims] == [("date", True)], claims


@pytest.mark.parametrize(
    ("written", "text"),
    [
        ("Va ser el 14 de maig de 1987.", "14 de maig de 1987"),
        ("Fue el 14 de mayo de 1987.", "14 de mayo de 1987"),
        ("It was on May 14, 1987.", "May 14, 1987"),
        ("Es va acabar el 5 de març de 1962.", "5 de març de 1962"),
    ],
)
def test_a_date_the_records_do_not_hold_is_one_marked_claim(written: str, text: str) -> None:
    claims = check_claims(written, "", [RECORD])
    assert [(c.text, c.kind, c.found) for c in claims] == [(text, "date", False)]
    assert written[claims[0].start : claims[0].end] == text


def test_a_date_in_the_records_vouches_for_its_year_and_month() -> None:
    assert kinds("Es va acabar el 1962, el març de 1962.") == [
        ("1962", "date", True),
        ("març de 1962", "date", True),
    ]


def test_names_are_capitalised_words_inside_a_sentence_folded_for_accents() -> None:
    answer = "A les Feixes vivia Rosa Vilaseca, a prop de LES FEIXES i de Rialb. Linares no."
    assert shown(answer) == (
        "A les Feixes vivia Rosa Vilaseca⚠, a prop de LES FEIXES i de Rialb. Linares no."
    )
    names = [c.text for c in check_claims(answer, "", [RECORD]) if c.kind == "name"]
    assert names == ["Feixes", "Rosa Vilaseca", "LES FEIXES", "Rialb"]  # not "A", "Linares"
    assert check_claims("Vam parlar amb Pantà.", "", ["el panta"])[0].found  # accents folded
    assert fold("Romà Çà") == "roma ca"


def test_names_in_the_question_and_at_sentence_starts_are_not_claims() -> None:
    answer = "Segons Rosa, Linares.\n\n- Sant Romà es va buidar: Quan marxaren.\n«El poble»"
    names = [c.text for c in check_claims(answer, "Què va passar a Sant Romà?", []) if c]
    assert names == ["Rosa", "Linares"]


def test_citations_code_links_and_list_numbers_are_not_claims() -> None:
    answer = (
        "1. Vegeu (oh1/1963 @00:01:10) i `1963` i [aquí](record:oh1/1963).\n"
        "```\n1963\n```\n2) I found I. Monday, in May."
    )
    assert check_claims(answer, "", []) == ()


def test_the_cores_own_text_is_not_checked() -> None:
    answer = "Model says 1963. Sources:\n- Linares 1964 (oh1/2)"
    start = answer.index(" Sources")
    claims = check_claims(answer, "", [], skip=[(start, len(answer))])
    assert [c.text for c in claims] == ["1963"]


def test_a_claim_travels_as_json_and_back() -> None:
    claim = Claim("1963", 10, 14, "date", False)
    assert claim.to_dict() == {
        "text": "1963",
        "start": 10,
        "end": 14,
        "kind": "date",
        "found": False,
    }
    assert Claim.from_dict(claim.to_dict()) == claim
    with pytest.raises(JsonShapeError):
        Claim.from_dict({**claim.to_dict(), "kind": "colour"})


def test_the_transcript_note_counts_checked_and_marked_claims() -> None:
    claims = check_claims("Acabada en 1962, omplerta en 1963.", "", [RECORD])
    assert claims_note(claims) == {
        "claims_checked": 2,
        "claims_marked": 1,
        "marked_claims": ["1963"],
    }
    assert claims_note(()) is None


# -- a real run ----------------------------------------------------------------------------
DAM_QUESTION = "When was the dam finished?"
READ_DAM = call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 4}, "r1")
DAM_ANSWER = "The dam was finished in 1962 (oh1/4) and first filled in 1963."


@pytest.fixture
def dam_archive(oh_archive: Archive) -> Archive:
    """The test archive with an interview saying when the dam was finished."""
    oh_archive.create_record(
        "oh1",
        {
            "oh2": [{"lang": "lg-eng", "value": "Interview about the dam"}],
            "oh3": [{"lang": "lg-eng", "value": "The dam was finished in 1962."}],
        },
    )
    return oh_archive


async def ask(session: AssistantSession, question: str, model: str | None = None) -> FinalEvent:
    final = (await collect(await session.chat(ChatRequest(question, model=model))))[-1]
    assert isinstance(final, FinalEvent), final
    return final


async def test_a_run_marks_the_year_its_records_do_not_hold(
    dam_archive: Archive, make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(Turn(tool_calls=(READ_DAM,)), Turn(text=DAM_ANSWER))
    final = await ask(make_session(), DAM_QUESTION)
    assert [c.label for c in final.citations if c.verified] == ["Interview about the dam"]
    assert [(c.text, c.found) for c in final.claims] == [("1962", True), ("1963", False)]
    note = {"claims_checked": 2, "claims_marked": 1, "marked_claims": ["1963"]}
    assert note.items() <= final.transcript_summary[-1].items()
    data = final.to_dict()
    at = DAM_ANSWER.index("1963")
    claims = data["claims"]
    assert isinstance(claims, list) and claims[1] == {
        "text": "1963",
        "start": at,
        "end": at + 4,
        "kind": "date",
        "found": False,
    }
    again = from_wire("final", json.loads(json.dumps(data)))
    assert isinstance(again, FinalEvent) and again.claims == final.claims
    stored = json.loads(json.dumps(turn_record(DAM_QUESTION, final).to_dict()))
    assert TurnRecord.from_dict(stored).claims == final.claims


async def test_an_answer_without_claims_keeps_the_wire_form_as_it_was(
    dam_archive: Archive, make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(Turn(text="the dam is described in the interview."))
    final = await ask(make_session(), "dam?")
    assert final.claims == ()
    assert "claims" not in final.to_dict()
    assert not any("claims_checked" in note for note in final.transcript_summary)
    assert "claims" not in turn_record("dam?", final).to_dict()


async def test_a_grounded_runs_sources_list_is_not_checked(
    dam_archive: Archive, make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """The bundled model's shape: the core appends "Sources:" with the records' labels; only
    the model's sentence is checked."""
    models["small"].extend(Turn(text="Finished in 1963."))
    final = await ask(make_session(), "when was the dam finished", "small")
    assert "Sources:" in final.answer and "(oh1/4)" in final.answer
    assert [(c.text, c.found) for c in final.claims] == [("1963", False)]


def test_the_markdown_export_marks_the_claims(tmp_path: Path) -> None:
    from app.core.agent.conversation_types import Conversation
    from app.core.agent.history_entry import history_entry

    claims = check_claims(DAM_ANSWER, DAM_QUESTION, ["finished in 1962"])
    turn = TurnRecord(at="", question=DAM_QUESTION, answer=DAM_ANSWER, claims=claims)
    conversation = Conversation(
        "c1",
        history=(history_entry("user", DAM_QUESTION), history_entry("assistant", DAM_ANSWER)),
        transcript=(turn,),
    )
    assert "first filled in 1963⚠." in export_markdown(conversation)
    assert "1962⚠" not in export_markdown(conversation)
