"""Answers the core composes itself: one sentence from its own tables, then every relevant record.

A run is composed when its model does not write the question's language, or for a list
question on the bundled model (see :mod:`app.core.agent.answer_language`). No model is asked:

1. the question is searched as a grounded run searches it (:func:`~app.core.agent.grounding.
   search_call`), to find its *lead sections* (:func:`~app.core.agent.sources.leading_sections`:
   those of the records scoring at least :data:`~app.core.agent.sources.STRONG` × the best,
   and the one where most of what it found is);
2. it is searched again within those sections for :data:`~app.core.agent.relevance_cut.
   FLOOR_K` records (:func:`list_sections_of`: for a question that asks for records, the lead
   sections of what it found other than the access points an import made; within those of
   its sections the question's noun names instead, when it names a kind of record: "¿Qué
   entrevistas…?", :mod:`app.core.agent.noun_sections`), and
   the first :data:`~app.core.agent.relevance_cut.LIST_K` records above the measured cut
   (:mod:`app.core.agent.relevance_cut`) that the egress gate let through are listed;
3. the answer says how many it found, in the question's language (:mod:`app.core.agent.
   answer_phrases`), then lists them grouped by section with the count, in rank order: each
   with its label, date, language, the passage that matched and a citation
   ``(section_tipo/section_id @HH:MM:SS)`` that the front ends link and the run verifies.

Both searches are ordinary, gated tool steps, streamed like any other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Protocol

from app.core.agent.answer_phrases import Phrases, phrases
from app.core.agent.composed_records import ListedRecord, Shapes, by_section, listed_record
from app.core.agent.events import Event, FinalEvent, StopKind, TextEvent
from app.core.agent.grounding import SEARCH_TOOL, no_sources_answer, search_call
from app.core.agent.noun_sections import described, list_sections
from app.core.agent.relevance_cut import FLOOR_K, LIST_K, relevant_hits
from app.core.agent.sources import group_by_record, hits_of, leading_sections
from app.core.agent.tool_calls import ToolCaller, ToolStep
from app.core.json_types import JsonObject
from app.core.models.base import ToolCall

if TYPE_CHECKING:
    from app.core.agent.answer_language import Composition
    from app.core.agent.citations import ReturnedRecords
    from app.core.agent.request import CheckedRequest
    from app.core.agent.run_policy import RunPolicy
    from app.core.agent.transcript import Transcript
    from app.core.archive.store import Archive
    from app.core.tools.base import ToolResult

LIST_CALL_ID = "call_list_1"
PASSAGE_CHARS = 240
"""At most this much of a matching passage is quoted (cut at a word)."""


class ComposingRun(Protocol):
    """What a composed run needs of its :class:`~app.core.agent.loop.AgentRun`."""

    request: CheckedRequest
    policy: RunPolicy
    tools: ToolCaller
    returned: ReturnedRecords
    transcript: Transcript
    composed: bool

    @property
    def stopped(self) -> bool:
        """Whether the person pressed Stop."""
        ...

    def final(self, stop: StopKind) -> FinalEvent:
        """The ``final`` frame for the run so far."""
        ...

    def _say(self, text: str) -> TextEvent:
        """``text`` added to the answer (the core's words), as the event that streams it."""
        ...


def list_call(question: str, sections: Sequence[str]) -> ToolCall:
    """The list search: ``question`` within ``sections``, one hit per record."""
    arguments: JsonObject = {"query": question, "k": FLOOR_K, "sections": list(sections)}
    return ToolCall(LIST_CALL_ID, SEARCH_TOOL, arguments)


def lead_sections(result: ToolResult) -> list[str]:
    """The lead sections of a search's records (:func:`~app.core.agent.sources.leading_sections`),
    best first."""
    return leading_sections(group_by_record(hits_of(result.data) if result.ok else []))


def list_sections_of(result: ToolResult, archive: Archive, noun: str | None) -> list[str]:
    """The sections the list search looks in: those of ``result`` (the first search) that the
    question's ``noun`` names (:mod:`app.core.agent.noun_sections`: "¿Qué entrevistas…?"
    looks in the interviews), else its lead sections; for a question that asks for records
    (``noun``), the lead sections of the records that are not access points
    (:func:`~app.core.agent.noun_sections.described`) when it found any."""
    records = group_by_record(hits_of(result.data)) if result.ok else []
    found = [source.section_tipo for source in records]
    labels = {
        tipo: archive.section(tipo).labels.values()
        for tipo in dict.fromkeys(found)
        if archive.has_section(tipo)
    }
    of_descriptions = leading_sections(described(records)) if noun else []
    lead = of_descriptions or leading_sections(records)
    return list_sections(lead, found, labels, noun)


async def composed_run(
    run: ComposingRun, composition: Composition, archive: Archive
) -> AsyncIterator[Event]:
    """The events of a composed run over ``archive`` (its ``final`` included)."""
    question = run.request.question
    first = ToolStep(search_call(question))
    async for event in run.tools.step(first):
        yield event
    assert first.result is not None
    result, sections = first.result, list_sections_of(first.result, archive, composition.noun)
    if sections and not run.stopped:
        listing = ToolStep(list_call(question, sections))
        async for event in run.tools.step(listing):
            yield event
        assert listing.result is not None
        result = listing.result
    if run.stopped:
        yield run.final("stopped")
        return
    records = listed_records(run, result, archive, composition.lang)
    if records or result.ok:
        text = composed_text(records, phrases(composition.lang), composition.noun)
    else:
        text = no_sources_answer(run.policy.for_model(result))
    run.transcript.note({"composed": composition.reason, "lang": composition.lang})
    run.composed = True
    yield run._say(text)
    yield run.final("end_turn")


def listed_records(
    run: ComposingRun, result: ToolResult, archive: Archive, lang: str
) -> list[ListedRecord]:
    """The relevant records of ``result`` that the gate let through, in rank order (the first
    :data:`~app.core.agent.relevance_cut.LIST_K`)."""
    out: list[ListedRecord] = []
    shapes: Shapes = {}
    for hit in relevant_hits(hits_of(result.data) if result.ok else []):
        listed = listed_record(archive, hit, lang, shapes, run.request.question)
        if listed is not None and listed.key in run.returned:
            out.append(listed)
            if len(out) == LIST_K:
                break
    return out


def composed_text(records: Sequence[ListedRecord], table: Phrases, noun: str | None) -> str:
    """The composed answer (Markdown): the count sentence, then each section's records."""
    parts = [table.found(len(records), noun)]
    for group in by_section(records):
        lines = [f"**{group[0].section_label}** ({len(group)})", ""]
        lines += [record_line(record, table) for record in group]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def record_line(record: ListedRecord, table: Phrases) -> str:
    """One listed record: ``- **Label** (tipo/id @tc) · date · box · language · page:
    «passage»``."""
    where = f" @{_hms(record.timecode)}" if record.timecode else ""
    facts = [f"**{_plain(record.label)}** ({record.key}{where})"]
    facts += [fact for fact in (record.date, record.container) if fact]
    names = [table.language(lang) for lang in record.langs]
    if any(names):
        facts.append("/".join(name for name in names if name))
    if record.page:
        facts.append(f"{table.page} {record.page}")
    passage = _quote(record.passage)
    if passage.casefold() == _plain(record.label).casefold():
        passage = ""  # the title matched: it is already there
    return "- " + " · ".join(facts) + (f": «{passage}»" if passage else "")


def _hms(timecode: str) -> str:
    """``HH:MM:SS`` of a timecode (milliseconds dropped, as a citation names a passage)."""
    return timecode.split(".", 1)[0]


def _plain(text: str) -> str:
    """``text`` without the characters Markdown would read as emphasis or code."""
    return " ".join(text.replace("*", "").replace("`", "").replace("_", " ").split())


def _quote(passage: str) -> str:
    """At most :data:`PASSAGE_CHARS` of ``passage``, cut at a word, as plain text."""
    text = _plain(passage).replace("«", '"').replace("»", '"')
    if len(text) <= PASSAGE_CHARS:
        return text
    return text[:PASSAGE_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
