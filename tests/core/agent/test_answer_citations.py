"""A stored conversation's answers get back the citations their runs checked, and the export
marks them."""

from __future__ import annotations

from app.core.agent.answer_citations import answer_citations, exported_answer, mark_citations
from app.core.agent.citations import Citation
from app.core.agent.conversation_types import Conversation, TurnRecord
from app.core.agent.history_entry import HistoryEntry

GOOD = Citation("oh1", 1, "La riada", True, ("lg-cat",))
BAD = Citation("oh1", 9, "Invented", False)


def exchange(question: str, answer: str) -> tuple[HistoryEntry, HistoryEntry]:
    return {"role": "user", "text": question}, {"role": "assistant", "text": answer}


def turn(answer: str, *citations: Citation) -> TurnRecord:
    return TurnRecord(
        at="2024-01-01T00:00:00+00:00", question="q", answer=answer, citations=citations
    )


def test_each_answer_gets_its_own_runs_citations() -> None:
    conversation = Conversation(
        id="c",
        history=(*exchange("q1", "See (oh1/1)."), *exchange("q2", "Also (oh1/9).")),
        transcript=(turn("See (oh1/1).", GOOD), turn("Also (oh1/9).", BAD)),
    )
    assert answer_citations(conversation) == [None, (GOOD,), None, (BAD,)]


def test_a_turn_without_its_exchange_does_not_shift_the_others() -> None:
    """A turn record whose answer is not in the history (its exchange was not kept) is passed
    over; an answer no turn record holds (an older version's) gets ``None``, and the next
    answer still finds its own record."""
    conversation = Conversation(
        id="c",
        history=(*exchange("q0", "Old (oh1/1)."), *exchange("q2", "Later (oh1/1).")),
        transcript=(turn("Lost (oh1/9).", BAD), turn("Later (oh1/1).", GOOD)),
    )
    assert answer_citations(conversation) == [None, None, None, (GOOD,)]


def test_the_same_answer_twice_takes_each_runs_check_in_order() -> None:
    conversation = Conversation(
        id="c",
        history=(*exchange("q1", "(oh1/1)"), *exchange("q2", "(oh1/1)")),
        transcript=(turn("(oh1/1)", GOOD), turn("(oh1/1)", BAD)),
    )
    assert answer_citations(conversation) == [None, (GOOD,), None, (BAD,)]


def test_an_answer_without_checked_citations_is_left_as_stored() -> None:
    conversation = Conversation(
        id="c", history=exchange("q", "Text (oh1/1)."), transcript=(turn("Text (oh1/1)."),)
    )
    assert answer_citations(conversation) == [None, None]
    assert exported_answer("Text (oh1/1).", None) == ["Text (oh1/1)."]


def test_marks_outside_code_and_timecodes_kept() -> None:
    text = "A (oh1/1 @00:01:10), B (oh1/9), C (oh1/5) and `(oh1/1)`."
    marked = mark_citations(text, (GOOD, BAD))
    assert marked == "A (✓ oh1/1 @00:01:10), B (⚠ oh1/9), C (⚠ oh1/5) and `(oh1/1)`."


def test_the_export_notes_the_unverified_ones() -> None:
    lines = exported_answer("A (oh1/1), B (oh1/9).", (GOOD, BAD))
    assert lines == [
        "A (✓ oh1/1), B (⚠ oh1/9).",
        "",
        "*⚠ 1 of 2 citations unverified (no tool in that run returned oh1/9).*",
    ]
    assert exported_answer("A (oh1/1).", (GOOD,)) == ["A (✓ oh1/1)."]
