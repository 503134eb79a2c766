"""What a run's answer is checked for before its final frame: its citations and its claims.

A citation is verified only when a tool of this run returned that record
(:func:`~app.core.agent.citations.verify`); a number, date or proper name of the model's prose
is a claim, found or not in what the run read (:func:`~app.core.agent.claims.run_claims`). The
core's own text (the sources list, notices, a composed answer) holds no claim to check. Both
counts go into the transcript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.agent.citations import Citation, ReturnedRecords, unverified_note, verify
from app.core.agent.claims import Claim, claims_note, run_claims
from app.core.agent.transcript import Transcript

if TYPE_CHECKING:
    from app.core.archive.store import Archive


def check_answer(
    transcript: Transcript,
    returned: ReturnedRecords,
    archive: Archive,
    lang: str,
    question: str,
    *,
    composed: bool,
) -> tuple[tuple[Citation, ...], tuple[Claim, ...]]:
    """The citations and claims of ``transcript``'s answer, their counts noted in it.

    ``composed``: the core wrote the whole answer from the records (no model prose)."""
    answer = transcript.answer
    citations = verify(answer, returned, archive, lang)
    skip = [(0, len(answer))] if composed else transcript.core_spans
    claims = run_claims(answer, question, returned, citations, skip)
    for note in (unverified_note(citations), claims_note(claims)):
        if note is not None:
            transcript.note(note)
    return citations, claims
