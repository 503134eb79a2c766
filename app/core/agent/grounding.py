"""Grounded answers for models that cannot plan tool calls (the small bundled default).

The loop searches first — ``dedalo_semantic_search`` on the question, streamed as ordinary
``tool_use``/``tool_result`` events and gated like any call — then gives the model the hits and
asks it to answer from them. The relevant records among the hits (see
:mod:`app.core.agent.sources`: a cut-off relative to the best hit, lead sections, one entry per
record) are cited in a "Sources" list appended to the answer, whatever the model wrote — only
records the search returned to the model through the egress gate, so every source is a verified
citation; the model is shown only those records' hits. With no hits the model is not asked at
all: the answer says that the archive has nothing on it, rather than letting a small model
invent something.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from app.core.agent.events import Event, IterationEvent, TextEvent, ToolResultEvent, ToolUseEvent
from app.core.agent.prompts import citation, grounded_turn, sources_block, system_prompt
from app.core.agent.sources import Source, hits_of, select_sources
from app.core.agent.streaming import TurnOutcome
from app.core.agent.transcript import history_messages
from app.core.archive.model import RecordKey
from app.core.models.base import Message

if TYPE_CHECKING:
    from app.core.agent.loop import AgentRun

SEARCH_TOOL = "dedalo_semantic_search"
SEARCH_K = 8
MAX_ANSWER_TOKENS = 256
NOTHING_FOUND = "I found no records about this in the archive."


class GroundedAnswer:
    """Search, then answer from the hits, then cite them."""

    def __init__(self, run: AgentRun) -> None:
        self.run = run
        self.sources: list[Source] = []

    async def events(self, history: list[dict[str, Any]]) -> AsyncIterator[Event]:
        """The grounded run's events after ``start`` (ends with ``final``)."""
        run = self.run
        args = {"query": run.request.question, "k": SEARCH_K}
        call_id = "call_search_1"
        yield ToolUseEvent(call_id, SEARCH_TOOL, run.setup.registry.summary(SEARCH_TOOL, args))
        result = await run.call_tool(SEARCH_TOOL, args)
        yield ToolResultEvent(call_id, SEARCH_TOOL, result.ok, None if result.ok else result.code)
        run.transcript.note(
            {"tool": SEARCH_TOOL, "ok": result.ok, "code": None if result.ok else result.code}
        )
        self.sources = [
            source
            for source in select_sources(hits_of(result.data) if result.ok else [])
            if _key(source) in run.returned
        ]
        self._label_sources()
        if run.stopped:
            yield run.final("stopped")
            return
        if not self.sources:
            shown = run.for_model(result)
            text = (
                NOTHING_FOUND if result.ok else f"I could not search the archive: {shown.message}"
            )
            run.transcript.add_text(text)
            yield TextEvent(text)
            yield run.final("end_turn")
            return
        async for event in self._answer(history):
            yield event

    async def _answer(self, history: list[dict[str, Any]]) -> AsyncIterator[Event]:
        run = self.run
        run.transcript.turns = 1
        yield IterationEvent(1, run.setup.max_turns)
        messages = [
            Message("system", system_prompt(run.request.mode, grounded=True)),
            *history_messages(history),
            Message(
                "user",
                grounded_turn(run.request.question, self.shown_hits(), run.context_text()),
                images=run.request.images,
            ),
        ]
        outcome = TurnOutcome()
        async for event in run.model_turn(messages, [], outcome, MAX_ANSWER_TOKENS):
            yield event
        if outcome.stopped or run.stopped:
            yield run.final("stopped")
            return
        sources = sources_block([citation(s.to_citation_item()) for s in self.sources])
        run.transcript.add_text(sources)
        yield TextEvent(sources)
        yield run.final("end_turn")

    def _label_sources(self) -> None:
        """Give sources whose hits carry no label the archive's label for the record."""
        archive = self.run.setup.archive
        for source in self.sources:
            if source.needs_label and isinstance(source.section_id, int):
                key = RecordKey(source.section_tipo, source.section_id)
                source.record_label = archive.record_label(key, self.run.setup.lang)

    def shown_hits(self) -> list[dict[str, Any]]:
        """The hits the model answers from: those of the cited records, labelled alike."""
        return [{**hit, "label": source.label} for source in self.sources for hit in source.hits][
            :SEARCH_K
        ]


def _key(source: Source) -> RecordKey | None:
    """The record a source names (``None`` for an id that is not a number)."""
    sid = source.section_id
    if isinstance(sid, int) and not isinstance(sid, bool):
        return RecordKey(source.section_tipo, sid)
    if isinstance(sid, str) and sid.isdigit():
        return RecordKey(source.section_tipo, int(sid))
    return None
