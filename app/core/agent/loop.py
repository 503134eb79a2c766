"""The agent loop: at most 12 model turns, tools through the egress gate, streamed events.

A run streams ``start``, then per model turn ``iteration``, the model's ``thinking``/``text``,
and for each tool call ``tool_use`` and ``tool_result``; it ends with exactly one ``final``
(``end_turn``, ``change_plan`` or ``stopped`` with the partial answer) or one ``error``.

A model that cannot plan tool calls (``supports_tools`` false, the bundled default) is
*grounded*: the loop runs ``dedalo_semantic_search`` on the question itself, as the same tool
step the tool loop uses (same events, same gate), asks the model to answer from those hits, and
appends a "Sources" list citing them — whatever the model wrote (helpers in
:mod:`app.core.agent.grounding`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.agent.citations import ReturnedRecords, unverified_note, verify
from app.core.agent.egress import EgressGate
from app.core.agent.egress_errors import error_for_model, for_model, plan_refusal
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
from app.core.agent.grounding import (
    MAX_ANSWER_TOKENS,
    grounded_messages,
    grounded_sources,
    no_sources_answer,
    search_call,
    sources_text,
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
class ToolStep:
    """One tool call of a run and, once :meth:`AgentRun.tool_step` ran it, its result."""

    call: ToolCall
    result: ToolResult | None = None


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
    tainted_history: bool = False
    """Whether the conversation already drew on restricted records (its taint never drops)."""
    can_read_restricted: bool = True
    """``False`` for a reader who may not see restricted records: the gate then guards the run
    as if its model were external (record content allowed, restricted content never)."""

    @property
    def egress(self) -> str:
        """The run's privacy class (the catalog entry's egress)."""
        return self.request.entry.egress

    def gate(self) -> EgressGate:
        """The egress gate for this run (model and reader both considered)."""
        if self.can_read_restricted:
            return EgressGate(self.archive, self.egress, self.external_content)
        local_model = self.egress == "local"
        return EgressGate(self.archive, "external", self.external_content or local_model)


class AgentRun:
    """One run of the loop; iterate :meth:`events` once."""

    def __init__(self, setup: RunSetup) -> None:
        self.setup = setup
        self.request = setup.request
        self.gate = setup.gate()
        self.transcript = Transcript()
        self.change_plan: dict[str, Any] | None = None
        self.returned = ReturnedRecords()
        """The records tools returned to the model in this run (what citations may cite)."""
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
                    yield self._say(str(self.change_plan["summary"]))
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
        """Search on the question, answer from the hits the gate let through, cite them."""
        step = ToolStep(search_call(self.request.question))
        async for event in self.tool_step(step):
            yield event
        assert step.result is not None
        setup = self.setup
        sources = grounded_sources(step.result, self.returned, setup.archive, setup.lang)
        if self.stopped:
            yield self.final("stopped")
            return
        if not sources:
            yield self._say(no_sources_answer(self.for_model(step.result)))
            yield self.final("end_turn")
            return
        self.transcript.turns = 1
        yield IterationEvent(1, setup.max_turns)
        messages = grounded_messages(self.request, history, sources, self.context_text())
        outcome = TurnOutcome()
        async for event in self.model_turn(messages, [], outcome, MAX_ANSWER_TOKENS):
            yield event
        if outcome.stopped or self.stopped:
            yield self.final("stopped")
            return
        yield self._say(sources_text(sources))
        yield self.final("end_turn")

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
            step = ToolStep(call)
            async for event in self.tool_step(step):
                yield event
            result = step.result
            assert result is not None
            shown = result if call.name == PROPOSE_TOOL else self.for_model(result)
            messages.append(Message("tool", _payload(shown), tool_call_id=call.id, name=call.name))
            if self.change_plan is not None or self.stopped:
                return

    async def tool_step(self, step: ToolStep) -> AsyncIterator[Event]:
        """Run ``step``'s call as ``tool_use``, the gated call and ``tool_result`` (a write-mode
        plan proposal is validated instead, without events); noted in the transcript."""
        call = step.call
        if call.name == PROPOSE_TOOL and self.request.mode == "write":
            result = self._propose(call)
        else:
            call_id = self._call_id(call)
            summary = self.setup.registry.summary(call.name, call.arguments)
            yield ToolUseEvent(call_id, call.name, summary)
            result = await self.call_tool(call.name, call.arguments)
            yield ToolResultEvent(call_id, call.name, result.ok, self._shown_code(result))
        step.result = result
        self.transcript.note({"tool": call.name, "ok": result.ok, "code": self._shown_code(result)})

    def _shown_code(self, result: ToolResult) -> str | None:
        """A failure's code as the person may see it: for a reader without the restricted
        right, a record withheld for restricted links reads as a missing one."""
        if result.ok:
            return None
        return result.code if self.setup.can_read_restricted else for_model(result).code

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """One tool call through the egress gate (both ends); refusals come back as results."""
        registry = self.setup.registry
        try:
            tool = registry.get(name)
        except ArxiuError as error:
            return _failed(error)
        refusal = self.gate.check_call(tool, args)
        if refusal is not None:
            return _failed(refusal)
        result = await registry.call(name, args, self._tool_context())
        refusal = self.gate.check_result(tool, result)
        if refusal is not None:
            return _failed(refusal)
        self.returned.note(result)
        return result

    def for_model(self, result: ToolResult) -> ToolResult:
        """``result`` as this run's model may see it: on a run guarded as external, a failure
        says nothing of restricted records or local files (see
        :mod:`app.core.agent.egress_errors`)."""
        return for_model(result) if self.gate.external else result

    def _validate(self, raw: Any) -> dict[str, Any]:
        return validate_plan(raw, self.setup.archive, self.setup.registry, self.setup.lang)

    def _propose(self, call: ToolCall) -> ToolResult:
        external = self.gate.external
        refusal = (
            plan_refusal(call.arguments, self.setup.archive, self._validate) if external else None
        )
        if refusal is not None:
            return _failed(refusal)
        try:
            plan = self._validate(call.arguments)
        except ArxiuError as error:
            return _failed(error_for_model(error) if external else error)
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

    def _say(self, text: str) -> TextEvent:
        """``text`` added to the answer, as the event that streams it."""
        self.transcript.add_text(text)
        return TextEvent(text)

    def context_text(self) -> str | None:
        """The current-record note for the user's turn (content withheld where gated)."""
        ctx = self.request.context
        if ctx is None:
            return None
        archive = self.setup.archive
        key = RecordKey(ctx.section_tipo, ctx.section_id)
        restricted = self.gate.note_context(key)
        shared = not self.gate.external or (self.gate.external_content and not restricted)
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
        tainted = self.tainted
        history = self.transcript.history(
            self.request.history, self.request.question, tainted=tainted
        )
        citations = verify(
            self.transcript.answer, self.returned, self.setup.archive, self.setup.lang
        )
        note = unverified_note(citations)
        if note is not None:
            self.transcript.note(note)
        return FinalEvent(
            answer=self.transcript.answer,
            stop=stop,
            change_plan=self.change_plan,
            history=history,
            transcript_summary=list(self.transcript.summary),
            usage=self.transcript.usage(),
            turns=self.transcript.turns,
            model=self.request.entry.id,
            citations=citations,
            tainted=tainted,
        )

    @property
    def tainted(self) -> bool:
        """Whether this run's answer may hold restricted text: a local run that touched
        restricted content, or whose input history (or conversation) already had."""
        if self.gate.external:
            return False
        inherited = self.setup.tainted_history or any(
            entry.get("tainted") for entry in self.request.history
        )
        return self.gate.touched_restricted or inherited


def _failed(error: ArxiuError) -> ToolResult:
    return ToolResult(
        ok=False,
        code=error.code,
        message=error.message,
        hint=error.hint,
        details=dict(error.details),
    )


def _payload(result: ToolResult) -> str:
    text = json.dumps(result.to_model_payload(), ensure_ascii=False, default=str)
    if len(text) > MAX_TOOL_PAYLOAD_CHARS:
        text = text[:MAX_TOOL_PAYLOAD_CHARS] + " …[truncated]"
    return text
