"""The agent loop: at most 12 model turns, tools through the egress gate, streamed events.

A run streams ``start``, then per model turn ``iteration``, the model's ``thinking``/``text``,
and for each tool call ``tool_use`` and ``tool_result``; it ends with exactly one ``final``
(``end_turn``, ``change_plan`` or ``stopped`` with the partial answer) or one ``error``.

A model that cannot plan tool calls (``supports_tools`` false, the bundled default) is
*grounded*: the loop runs ``dedalo_semantic_search`` on the question itself, as ordinary tool
events, asks the model to answer from those hits, and appends a "Sources" list citing them —
whatever the model wrote.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.agent.egress import EgressGate
from app.core.agent.events import (
    ErrorEvent,
    Event,
    FinalEvent,
    IterationEvent,
    StartEvent,
    StopKind,
    TextEvent,
    ToolResultEvent,
    ToolUseEvent,
)
from app.core.agent.plans import PROPOSE_SPEC, PROPOSE_TOOL, validate_plan
from app.core.agent.prompts import TAINT_NOTICE, context_block, system_prompt, user_turn
from app.core.agent.streaming import TurnOutcome, stream_turn
from app.core.agent.transcript import Transcript, history_messages, withhold_tainted
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError, ModelError
from app.core.models.base import ChatModel, Message, StreamOptions, ToolCall, ToolSpec
from app.core.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from app.core.agent.request import ChatRequest
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

MAX_TURNS = 12
MAX_TOOL_PAYLOAD_CHARS = 24_000


@dataclass
class RunSetup:
    """Everything one run needs."""

    request: ChatRequest
    model: ChatModel
    archive: Archive
    registry: ToolRegistry
    searcher: Searcher | None = None
    external_content: bool = False
    lang: str = "lg-eng"
    max_turns: int = MAX_TURNS
    stop_event: threading.Event = field(default_factory=threading.Event)

    @property
    def egress(self) -> str:
        """The run's privacy class (the catalog entry's egress)."""
        return self.request.entry.egress


class AgentRun:
    """One run of the loop; iterate :meth:`events` once."""

    def __init__(self, setup: RunSetup) -> None:
        self.setup = setup
        self.request = setup.request
        self.gate = EgressGate(setup.archive, setup.egress, setup.external_content)
        self.transcript = Transcript()
        self.change_plan: dict[str, Any] | None = None
        self._calls = 0

    @property
    def stopped(self) -> bool:
        """Whether the person pressed Stop."""
        return self.setup.stop_event.is_set()

    async def events(self) -> AsyncIterator[Event]:
        """Stream the run's events; the last one is a ``final`` or an ``error``."""
        entry = self.request.entry
        yield StartEvent(entry.id, self.request.mode, entry.egress)
        try:
            history = await self._history_notice()
            if history[1]:
                yield TextEvent(history[1])
            body = self._grounded(history[0]) if not self.setup.model.supports_tools else None
            async for event in body or self._tool_loop(history[0]):
                yield event
        except ArxiuError as error:
            yield ErrorEvent.from_error(error)
        except Exception as error:  # a bug: reported as a terminal error, logged with traceback
            log.exception("agent run failed")
            yield ErrorEvent.from_error(
                ArxiuError(
                    "ai.internal",
                    f"The assistant failed unexpectedly ({type(error).__name__}).",
                    category="internal",
                )
            )

    # -- the two run shapes -----------------------------------------------------------------
    async def _tool_loop(self, history: list[dict[str, Any]]) -> AsyncIterator[Event]:
        messages = [
            Message("system", system_prompt(self.request.mode)),
            *history_messages(history),
            Message(
                "user",
                user_turn(self.request.question, self.context_text()),
                images=self.request.images,
            ),
        ]
        tools = self._tool_specs()
        for n in range(1, self.setup.max_turns + 1):
            if self.stopped:
                yield self.final("stopped")
                return
            self.transcript.turns = n
            yield IterationEvent(n, self.setup.max_turns)
            outcome = TurnOutcome()
            async for event in self.model_turn(messages, tools, outcome):
                yield event
            if outcome.stopped or self.stopped:
                yield self.final("stopped")
                return
            if not outcome.calls:
                yield self.final("end_turn")
                return
            messages.append(Message("assistant", outcome.text, tool_calls=tuple(outcome.calls)))
            async for event in self._run_calls(outcome.calls, messages):
                yield event
            if self.change_plan is not None:
                if not self.transcript.answer.strip():
                    # the answer is what the text frames carried: the plan's summary is streamed
                    summary = str(self.change_plan["summary"])
                    self.transcript.add_text(summary)
                    yield TextEvent(summary)
                yield self.final("change_plan")
                return
        raise ModelError(
            "ai.turn_limit",
            f"The assistant did not finish within {self.setup.max_turns} model turns.",
            hint="Ask a narrower question, or split it in steps.",
            category="provider",
            details={"turns": self.setup.max_turns},
        )

    async def _grounded(self, history: list[dict[str, Any]]) -> AsyncIterator[Event]:
        from app.core.agent.grounding import GroundedAnswer

        grounded = GroundedAnswer(self)
        async for event in grounded.events(history):
            yield event

    # -- pieces ------------------------------------------------------------------------------
    async def model_turn(
        self,
        messages: list[Message],
        tools: list[ToolSpec],
        outcome: TurnOutcome,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Event]:
        """Stream one model turn into ``outcome`` (raises the provider's coded error)."""
        limit = self.request.entry.max_tokens
        options = StreamOptions(
            max_tokens=min(limit, max_tokens) if max_tokens else limit,
            effort=self.request.effort,
            stop_event=self.setup.stop_event,
        )
        stream = self.setup.model.stream(list(messages), tools, options)
        async for event in stream_turn(stream, outcome, self.setup.stop_event):
            if isinstance(event, TextEvent):
                self.transcript.add_text(event.delta)
            yield event
        if outcome.usage is not None:
            self.transcript.add_usage(outcome.usage)
        if outcome.error is not None:
            raise outcome.error

    async def _run_calls(
        self, calls: list[ToolCall], messages: list[Message]
    ) -> AsyncIterator[Event]:
        for call in calls:
            if call.name == PROPOSE_TOOL and self.request.mode == "write":
                result = self._propose(call)
            else:
                call_id = self._call_id(call)
                yield ToolUseEvent(
                    call_id, call.name, self.setup.registry.summary(call.name, call.arguments)
                )
                result = await self.call_tool(call.name, call.arguments)
                yield ToolResultEvent(
                    call_id, call.name, result.ok, None if result.ok else result.code
                )
            self.transcript.note(
                {"tool": call.name, "ok": result.ok, "code": None if result.ok else result.code}
            )
            messages.append(Message("tool", _payload(result), tool_call_id=call.id, name=call.name))
            if self.change_plan is not None or self.stopped:
                return

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """One tool call through the egress gate (both ends); refusals come back as results."""
        registry = self.setup.registry
        try:
            tool = registry.get(name)
        except ArxiuError as error:
            return _failed(error)
        refusal = self.gate.check_call(tool, args, registry)
        if refusal is not None:
            return _failed(refusal)
        result = await registry.call(name, args, self._tool_context())
        refusal = self.gate.check_result(tool, result)
        return _failed(refusal) if refusal is not None else result

    def _propose(self, call: ToolCall) -> ToolResult:
        try:
            plan = validate_plan(
                call.arguments, self.setup.archive, self.setup.registry, self.setup.lang
            )
        except ArxiuError as error:
            return _failed(error)
        self.change_plan = plan
        return ToolResult(
            ok=True, data={"plan_hash": plan["plan_hash"], "status": "awaiting confirmation"}
        )

    def _tool_specs(self) -> list[ToolSpec]:
        specs = self.setup.registry.specs(["structure", "content"])
        return [*specs, PROPOSE_SPEC] if self.request.mode == "write" else specs

    def _tool_context(self) -> ToolContext:
        external = self.gate.external
        return ToolContext(
            archive=self.setup.archive,
            searcher=self.setup.searcher,
            lang=self.setup.lang,
            model_id=self.request.entry.id,
            egress="external" if external else "local",
            exclude_restricted=external,
        )

    def _call_id(self, call: ToolCall) -> str:
        self._calls += 1
        return call.id or f"call_{self._calls}"

    async def _history_notice(self) -> tuple[list[dict[str, Any]], str]:
        history = list(self.request.history)
        if not self.gate.external:
            return history, ""
        kept, withheld = withhold_tainted(history)
        if not withheld:
            return kept, ""
        notice = TAINT_NOTICE.format(count=withheld)
        self.transcript.add_text(notice)
        self.transcript.note({"notice": "egress.tainted_withheld", "count": withheld})
        return kept, notice

    def context_text(self) -> str | None:
        """The current-record note for the user's turn (content withheld where gated)."""
        ctx = self.request.context
        if ctx is None:
            return None
        archive = self.setup.archive
        key = RecordKey(ctx.section_tipo, ctx.section_id)
        restricted = self.gate.note_context(key)
        shared = not self.gate.external or (self.setup.external_content and not restricted)
        section = (
            archive.section(key.section_tipo) if archive.has_section(key.section_tipo) else None
        )
        return context_block(
            key.section_tipo,
            key.section_id,
            section_label=section.label(self.setup.lang) if section else "",
            record_label=archive.record_label(key, self.setup.lang) if shared else "",
            summary=ctx.summary if shared else "",
            withheld=not shared,
        )

    def final(self, stop: StopKind) -> FinalEvent:
        """The ``final`` frame for the run so far."""
        tainted = self.gate.touched_restricted and not self.gate.external
        history = self.transcript.history(
            self.request.history, self.request.question, tainted=tainted
        )
        return FinalEvent(
            answer=self.transcript.answer,
            stop=stop,
            change_plan=self.change_plan,
            history=history,
            transcript_summary=list(self.transcript.summary),
            usage=self.transcript.usage(),
            turns=self.transcript.turns,
            model=self.request.entry.id,
        )


def _failed(error: ArxiuError) -> ToolResult:
    return ToolResult(ok=False, code=error.code, message=error.message, hint=error.hint)


def _payload(result: ToolResult) -> str:
    text = json.dumps(result.to_model_payload(), ensure_ascii=False, default=str)
    if len(text) > MAX_TOOL_PAYLOAD_CHARS:
        text = text[:MAX_TOOL_PAYLOAD_CHARS] + " …[truncated]"
    return text
