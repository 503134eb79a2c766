"""The checked citations of a stored conversation's answers, and how an export marks them.

A stored conversation keeps each answer's text in its history and the run's checked citations
(:class:`~app.core.agent.citations.Citation`) in its transcript: each finished run appends one
question and its answer to the history and one turn record to the transcript, so the answers
and the turn records line up in order. :func:`answer_citations` pairs them again, so a
reopened conversation shows the citations its runs checked, never a fresh guess.

:func:`mark_citations` writes the check into Markdown for an export, where no link opens a
record: ``(✓ oh1/3)`` for a record a tool returned, ``(⚠ oh1/3)`` for one no tool returned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.agent.citations import CITATION, Citation
from app.core.agent.claims import Claim, mark_claims
from app.core.agent.conversation_types import Conversation, TurnRecord
from app.core.agent.export_words import ENGLISH
from app.core.archive.model import RecordKey

VERIFIED = "✓"
UNVERIFIED = "⚠"
_CODE_SPAN = re.compile(r"(`[^`]*`)")


def answer_turns(conversation: Conversation) -> list[TurnRecord | None]:
    """For each history entry, the turn record of the run that gave that answer, in the
    history's order (``None`` for a question, or an answer no turn record holds)."""
    answers = [turn.answer for turn in conversation.transcript]
    start = 0
    out: list[TurnRecord | None] = []
    for entry in conversation.history:
        text = str(entry.get("text", ""))
        if entry.get("role") == "user" or text not in answers[start:]:
            out.append(None)
            continue
        number = answers.index(text, start)  # the next turn that gave this answer
        start = number + 1
        out.append(conversation.transcript[number])
    return out


def answer_citations(conversation: Conversation) -> list[tuple[Citation, ...] | None]:
    """For each history entry, its answer's checked citations, in the history's order.

    ``None`` for a question, and for an answer whose run left no checked citations (one an
    older version stored, whose citations were never kept): nothing is known about them.
    """
    return [(turn.citations or None) if turn else None for turn in answer_turns(conversation)]


def answer_claims(conversation: Conversation) -> list[tuple[Claim, ...]]:
    """For each history entry, its answer's checked claims (none for a question, or for an
    answer stored before claims were checked)."""
    return [turn.claims if turn else () for turn in answer_turns(conversation)]


def mark_citations(markdown: str, citations: Sequence[Citation]) -> str:
    """``markdown`` with each citation marked ``✓`` (verified) or ``⚠`` (not), code left
    alone; a citation missing from ``citations`` counts as unverified."""
    verified = {c.key for c in citations if c.verified}
    parts = _CODE_SPAN.split(markdown)
    for number in range(0, len(parts), 2):  # odd parts are code spans
        parts[number] = CITATION.sub(lambda m: _marked(m, verified), parts[number])
    return "".join(parts)


def _marked(match: re.Match[str], verified: set[RecordKey]) -> str:
    key = RecordKey(match["tipo"], int(match["id"]))
    mark = VERIFIED if key in verified else UNVERIFIED
    return f"({mark} {key}" + (f" @{match['tc']}" if match["tc"] else "") + ")"


def unverified_line(citations: Sequence[Citation], note: str = ENGLISH.unverified) -> str | None:
    """The export's note under an answer with unverified citations (``None`` when all hold),
    from ``note`` (:attr:`~app.core.agent.export_words.ExportWords.unverified`)."""
    bad = [str(c.key) for c in citations if not c.verified]
    if not bad:
        return None
    text = note.format(bad=len(bad), total=len(citations), keys=", ".join(bad))
    return f"*{UNVERIFIED} {text}*"


def exported_answer(
    text: str,
    citations: tuple[Citation, ...] | None,
    note: str = ENGLISH.unverified,
    claims: Sequence[Claim] = (),
) -> list[str]:
    """An answer's Markdown lines for an export: its citations marked, then the note on the
    unverified ones in the words of ``note`` (the text as stored when its citations are not
    known); a claim found in no record the run read is marked ``⚠`` after its text."""
    text = mark_claims(text, claims)
    if citations is None:
        return [text.rstrip()]
    lines = [mark_citations(text, citations).rstrip()]
    shown = unverified_line(citations, note)
    return [*lines, "", shown] if shown else lines
