"""The server's judgement of a client's history, over the real answer ledger in SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.agent.events import FinalEvent
from app.core.agent.history_taint import SHINGLE_WORDS, exchange_rows, judge, probe, text_digest
from app.core.agent.request import ChatRequest
from app.core.agent.transcript import withhold_tainted
from app.core.archive import Archive, open_archive
from app.core.archive.answer_ledger import look_up, record
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.core.agent.conftest import SECRET, SessionFactory, collect, sent_text

TAINTED = f"The testimony says: {SECRET} the flood and the mill, when the water came."


def _judge(archive: Archive, owner: str, history: list[dict[str, Any]]) -> list[bool]:
    found = probe(history)
    with archive.db.reading() as conn:
        view = look_up(conn, owner, found.digests, found.all_shingles)
    marked, _ = judge(history, found, view)
    return [bool(entry.get("tainted")) for entry in marked]


def _record(archive: Archive, owner: str, question: str, answer: str, tainted: bool) -> None:
    rows, pieces = exchange_rows(question, answer, tainted)
    archive.db.write(lambda conn: record(conn, owner, rows, pieces))


def test_normalised_text_ignores_spacing_case_and_punctuation() -> None:
    assert text_digest("Sant  Romà,\nthe water!") == text_digest("sant romà the WATER")
    assert text_digest("Sant Romà") != text_digest("Sant Roma")


def test_the_owners_ledger_decides_and_the_clients_flags_only_add(oh_archive: Archive) -> None:
    _record(oh_archive, "u_anna", "What does ohr/1 say?", TAINTED, True)
    _record(oh_archive, "u_anna", "Hello", "Hi there.", False)
    history = [
        {"role": "user", "text": "What does ohr/1 say?"},
        {"role": "assistant", "text": "  " + TAINTED.upper(), "tainted": False},
        {"role": "user", "text": "Hello"},
        {"role": "assistant", "text": "Hi there."},
        {"role": "assistant", "text": "Something the server never said."},
        {"role": "user", "text": "Hello", "tainted": True},
    ]
    assert _judge(oh_archive, "u_anna", history) == [False, True, False, False, True, True]


def test_another_owner_is_judged_by_the_shingles_of_tainted_answers(oh_archive: Archive) -> None:
    _record(oh_archive, "u_anna", "q", TAINTED, True)
    words = TAINTED.split()
    history = [
        {"role": "user", "text": "Please look: " + " ".join(words[2 : 2 + SHINGLE_WORDS])},
        {"role": "assistant", "text": "A text of bob's own, never tainted."},
    ]
    assert _judge(oh_archive, "u_bob", history) == [True, False]


def test_the_ledger_outlives_the_process(tmp_path: Path, oh_archive: Archive) -> None:
    _record(oh_archive, "u_anna", "q", TAINTED, True)
    folder = oh_archive.location
    oh_archive.close()
    with open_archive(folder) as reopened:
        assert _judge(reopened, "u_anna", [{"role": "assistant", "text": TAINTED}]) == [True]


def test_withholding_drops_tainted_questions_too() -> None:
    history = [
        {"role": "user", "text": "a"},
        {"role": "assistant", "text": "b", "tainted": True},
        {"role": "user", "text": "c", "tainted": True},
        {"role": "assistant", "text": "d"},
    ]
    kept, count = withhold_tainted(history)
    assert kept == [{"role": "assistant", "text": "d"}] and count == 2


async def test_a_session_judges_a_stateless_history_by_its_owner(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}),)),
        Turn(text=TAINTED),
    )
    session = make_session(external_content=True)
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": "ohr/1?"}), history_owner="u_anna")
    )
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.tainted
    stripped = [{"role": e["role"], "text": e["text"]} for e in final.history]
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "Sum up", "model": "cloud", "history": stripped}),
            history_owner="u_anna",
        )
    )
    assert SECRET not in sent_text(models["cloud"])
