"""Grounded answers for models that cannot plan tool calls (the small bundled default).

The loop searches first — ``dedalo_semantic_search`` on the question, streamed as ordinary
``tool_use``/``tool_result`` events and gated like any call — then gives the model the hits and
asks it to answer from them. The records found are cited in a "Sources" list appended to the
answer, whatever the model wrote. With no hits the model is not asked at all: the answer says
that the archive has nothing on it, rather than letting a small model invent something.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from app.core.agent.events import Event, IterationEvent, TextEvent, ToolResultEvent, ToolUseEvent
from app.core.agent.prompts import citation, grounded_turn, sources_block, system_prompt
from app.core.agent.streaming import TurnOutcome
from app.core.agent.transcript import history_messages
from app.core.models.base import Message

if TYPE_CHECKING:
    from app.core.agent.loop import AgentRun

SEARCH_TOOL = "dedalo_semantic_search"
SEARCH_K = 8
MAX_SOURCES = 5
MAX_ANSWER_TOKENS = 256
NOTHING_FOUND = "I found no records about this in the archive."


class GroundedAnswer:
    """Search, then answer from the hits, then cite them."""

    def __init__(self, run: AgentRun) -> None:
        self.run = run
        self.hits: list[dict[str, Any]] = []

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
        self.hits = best_records(hits_of(result.data) if result.ok else [], MAX_SOURCES)
        if run.stopped:
            yield run.final("stopped")
            return
        if not self.hits:
            text = (
                NOTHING_FOUND if result.ok else f"I could not search the archive: {result.message}"
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
                grounded_turn(run.request.question, self.hits, run.context_text()),
                images=run.request.images,
            ),
        ]
        outcome = TurnOutcome()
        async for event in run.model_turn(messages, [], outcome, MAX_ANSWER_TOKENS):
            yield event
        if outcome.stopped or run.stopped:
            yield run.final("stopped")
            return
        sources = sources_block([citation(hit) for hit in self.hits])
        run.transcript.add_text(sources)
        yield TextEvent(sources)
        yield run.final("end_turn")


def hits_of(data: Any) -> list[dict[str, Any]]:
    """The hit dicts in a search result (a list, or ``{"hits": [...]}``/``{"results": ...}``)."""
    if isinstance(data, dict):
        for name in ("hits", "results", "records"):
            if isinstance(data.get(name), list):
                data = data[name]
                break
    if not isinstance(data, list):
        return []
    return [
        hit
        for hit in data
        if isinstance(hit, dict)
        and isinstance(hit.get("section_tipo"), str)
        and "section_id" in hit
    ]


def best_records(hits: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The best hit of each record, in rank order, at most ``limit`` records."""
    seen: set[tuple[str, Any]] = set()
    out = []
    for hit in hits:
        key = (hit["section_tipo"], hit["section_id"])
        if key not in seen:
            seen.add(key)
            out.append(hit)
        if len(out) >= limit:
            break
    return out
