"""Follow-ups answered over the previous answer's records, not by a fresh search.

When a question refers back (:mod:`~app.core.agent.back_references`) and the previous answer
cited records — the verified citations of the conversation's last turn
(:func:`previous_records`) — the run first reads each of those records as an ordinary, gated
tool step (``dedalo_read_record``, only its date field): a record the egress gate refuses is
left out, and those it lets through become citable in this run. Then:

* a date superlative ("la més antiga", "the most recent") sorts them by their section's first
  date field (the records of the section most of the dated ones are in, so one field is
  compared) and the core answers with the first, in the question's language
  (:meth:`FollowUp.answer`), as an ordinal ("the first one") picks by the previous answer's
  order — the selection is the core's, whatever model runs;
* a grounded run without a pick cites only those records (:meth:`FollowUp.scoped`);
* every run's model sees them in its context: keys, labels and dates, and the core's pick
  (:meth:`FollowUp.note`), so a model that calls tools knows what "these" are.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.agent.back_references import BackReference, back_reference
from app.core.agent.citations import find_citations
from app.core.agent.sources import Source
from app.core.agent.tool_calls import ToolStep
from app.core.json_types import JsonObject
from app.core.models.base import ToolCall

if TYPE_CHECKING:
    from app.core.agent.conversation_types import Conversation
    from app.core.agent.events import Event
    from app.core.agent.history_entry import HistoryEntry
    from app.core.agent.tool_calls import ToolCaller
    from app.core.archive.model import Field, RecordKey
    from app.core.archive.store import Archive

MAX_PREVIOUS = 12
"""At most this many of the previous answer's records are read again."""
READ_TOOL = "dedalo_read_record"

PICKED: dict[str, dict[str, str]] = {
    "lg-cat": {
        "oldest": "La més antiga és «{label}» ({key}) — {field}: {date}.",
        "newest": "La més recent és «{label}» ({key}) — {field}: {date}.",
        "ordinal": "És «{label}» ({key}).",
        "undated": "Cap d'aquests registres no té data.",
    },
    "lg-spa": {
        "oldest": "La más antigua es «{label}» ({key}) — {field}: {date}.",
        "newest": "La más reciente es «{label}» ({key}) — {field}: {date}.",
        "ordinal": "Es «{label}» ({key}).",
        "undated": "Ninguno de estos registros tiene fecha.",
    },
    "lg-eng": {
        "oldest": "The oldest is “{label}” ({key}) — {field}: {date}.",
        "newest": "The most recent is “{label}” ({key}) — {field}: {date}.",
        "ordinal": "It is “{label}” ({key}).",
        "undated": "None of these records has a date.",
    },
}
"""The core's answer to a follow-up that picks a record, per question language."""

_YEAR = re.compile(r"^\s*(-?\d{1,6})")


def previous_records(
    conversation: Conversation | None, history: Sequence[HistoryEntry]
) -> tuple[RecordKey, ...]:
    """The records the previous answer cited, in its order: the verified citations of the
    conversation's last turn; outside a stored conversation (or for one stored before turns
    kept citations), the citations written in the history's last answer."""
    if conversation is not None and conversation.transcript:
        cited = conversation.transcript[-1].citations
        return tuple(c.key for c in cited if c.verified)[:MAX_PREVIOUS]
    for entry in reversed(history):
        if entry["role"] == "assistant":
            return tuple(c.key for c in find_citations(entry["text"]))[:MAX_PREVIOUS]
    return ()


@dataclass(frozen=True)
class PreviousRecord:
    """A record of the previous answer, as this run read it."""

    key: RecordKey
    label: str
    date: str | None = None
    date_field: str = ""
    """The label of the date field ``date`` is from."""


def date_order(date: str) -> tuple[int, str]:
    """A sort key for a stored date (``1987-05-14``, ``1931``, ``-0200`` BC)."""
    found = _YEAR.match(date)
    return (int(found[1]), date[found.end() :]) if found else (10**7, date)


@dataclass
class FollowUp:
    """A question about the previous answer's records, in one run."""

    ref: BackReference
    previous: tuple[RecordKey, ...]
    archive: Archive
    found: list[PreviousRecord] = field(default_factory=list)
    """The previous records the gate let this run read, in the previous answer's order."""

    @classmethod
    def of(cls, question: str, previous: Sequence[RecordKey], archive: Archive) -> FollowUp | None:
        """The follow-up ``question`` is, if it refers back and there are records to refer to."""
        ref = back_reference(question) if previous else None
        return cls(ref, tuple(previous), archive) if ref is not None else None

    async def read(self, tools: ToolCaller) -> AsyncIterator[Event]:
        """Read each previous record as a gated tool step (its events streamed)."""
        for number, key in enumerate(self.previous, start=1):
            date_field = self._date_field(key.section_tipo)
            args: JsonObject = {"section_tipo": key.section_tipo, "section_id": key.section_id}
            if date_field is not None:
                args["fields"] = [date_field.tipo]
            step = ToolStep(ToolCall(f"call_previous_{number}", READ_TOOL, args))
            async for event in tools.step(step):
                yield event
            if step.result is not None and step.result.ok:
                self.found.append(self._read(key, date_field))

    def _date_field(self, section_tipo: str) -> Field | None:
        return next((f for f in self.archive.fields(section_tipo) if f.kind == "date"), None)

    def _read(self, key: RecordKey, date_field: Field | None) -> PreviousRecord:
        lang = self.ref.lang
        record = self.archive.find_record(key)
        date = record.text(date_field.tipo, lang) if record and date_field else None
        field_label = date_field.label(lang) if date_field else ""
        return PreviousRecord(key, self.archive.record_label(key, lang), date, field_label)

    def picked(self) -> PreviousRecord | None:
        """The record the question picks (``None``: no pick, or nothing to pick from)."""
        pick, found = self.ref.pick, self.found
        if pick == "ordinal":
            index = self.ref.position - 1 if self.ref.position > 0 else self.ref.position
            return found[index] if -len(found) <= index < len(found) else None
        dated = [r for r in found if r.date]
        if pick is None or not dated:
            return None
        sections = Counter(r.key.section_tipo for r in dated)  # one date field compared
        lead = max(sections, key=lambda tipo: sections[tipo])  # the first of the most common
        same = [r for r in dated if r.key.section_tipo == lead]
        ordered = sorted(same, key=lambda r: date_order(r.date or ""))
        return ordered[0] if pick == "oldest" else ordered[-1]

    def answer(self) -> str | None:
        """The core's answer to a follow-up that picks a record (``None``: the run answers)."""
        if self.ref.pick is None or not self.found:
            return None
        words = PICKED.get(self.ref.lang, PICKED["lg-eng"])
        chosen = self.picked()
        if chosen is None:
            return words["undated"] if self.ref.pick != "ordinal" else None
        return words[self.ref.pick].format(
            label=chosen.label, key=chosen.key, field=chosen.date_field, date=chosen.date
        )

    def note(self) -> str | None:
        """The previous records for the model's context (``None`` when none was read)."""
        if not self.found:
            return None
        lines = ["[The previous answer's records — 'these', 'the first one' refer to them]"]
        for record in self.found:
            dated = f", {record.date_field}: {record.date}" if record.date else ""
            lines.append(f"- {record.label} ({record.key}){dated}")
        chosen = self.picked()
        if chosen is not None:
            lines.append(f"The record the question picks: {chosen.label} ({chosen.key}).")
        return "\n".join(lines)

    def scoped(self, sources: Sequence[Source]) -> list[Source]:
        """A grounded run's sources kept to the previous records (all of them, when the
        search found none of them; the search's own when none could be read)."""
        if not self.found:
            return list(sources)
        keys = {str(r.key) for r in self.found}
        kept = [s for s in sources if s.key in keys]
        if kept:
            return kept
        return [
            Source(r.key.section_tipo, r.key.section_id, 0.0, record_label=r.label)
            for r in self.found
        ]
