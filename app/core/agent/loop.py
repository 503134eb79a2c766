"""The agent loop: at most 12 model turns, tools through the egress gate, streamed events.

A run streams ``start``, then per model turn ``iteration``, the model's ``thinking``/``text``,
and for each tool call ``tool_use`` and ``tool_result``; it ends with exactly one ``final``
(``end_turn``, ``change_plan`` or ``stopped`` with the partial answer) or one ``error``.

A model that cannot plan tool calls (``supports_tools`` false, the bundled default) is
*grounded*: the loop runs ``dedalo_semantic_search`` on the question itself, as the same tool
step the tool loop uses (same events, same gate), asks the model to answer from those hits, and
appends a "Sources" list citing them — whatever the model wrote (helpers in
:mod:`app.core.agent.grounding`).

What a run may do — its shape, the tools it is offered, what its model and the person may see,
whether its answer is tainted — is its :class:`~app.core.agent.run_policy.RunPolicy`, decided
once from the :class:`RunSetup` and held with the egress gate; its tool calls go through a
:class:`~app.core.agent.tool_calls.ToolCaller`. This module is the loop itself.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.agent.answer_checks import check_answer
from app.core.agent.answer_language import composition
from app.core.agent.citations import ReturnedRecords
from app.core.agent.composed_answer import composed_run
from app.core.agent.events import (
    ErrorEvent,
    Event,
    FinalEvent,
    IterationEvent,
    StartEvent,
    StopKind,
    TextEvent,
)
from app.core.agent.follow_ups import FollowUp
from app.core.agent.grounding import (
    MAX_ANSWER_TOKENS,
    asked_within,
    grounded_messages,
    grounded_sources,
    no_sources_answer,
    search_call,
    sources_text,
)
from app.core.agent.history_entry import HistoryEntry
from app.core.agent.plan_proposal import propose
from app.core.agent.prompts import TAINT_NOTICE, system_prompt, user_turn
from app.core.agent.refusals import run_refusal
from app.core.agent.run_policy import RunPolicy, egress_gate
from app.core.agent.streaming import TurnOutcome, model_turn, stream_options
from app.core.agent.tool_calls import ToolCaller, ToolStep
from app.core.agent.transcript import Transcript, history_messages
from app.core.errors import ArxiuError, ModelError, log_bug
from app.core.models.base import ChatModel, Message, ToolCall, ToolSpec
from app.core.models.stop_signal import StopSignal
from app.core.phrases import Phrase
from app.core.tools.base import ToolResult

if TYPE_CHECKING:
    from app.core.agent.plan_types import ChangePlan
    from app.core.agent.request import CheckedRequest
    from app.core.archive.model import RecordKey
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

MAX_TURNS = 12


@dataclass
class RunSetup:
    """Everything one run needs."""

    request: CheckedRequest
    model: ChatModel
    archive: Archive
    registry: ToolRegistry
    searcher: Searcher | None = None
    external_content: bool = False
    lang: str = "lg-eng"
    max_turns: int = MAX_TURNS
    stop_event: StopSignal = field(default_factory=StopSignal)
    tainted_history: bool = False
    """Whether the conversation already drew on restricted records (its taint never drops)."""
    can_read_restricted: bool = True
    """``False`` for a reader who may not see restricted records: the gate then guards the run
    as if its model were external (record content allowed, restricted content never)."""
    previous: tuple[RecordKey, ...] = ()
    """The records the previous answer cited (what a follow-up's "these" refers to)."""

    @property
    def egress(self) -> str:
        """The run's privacy class (the catalog entry's egress)."""
        return self.request.entry.egress

    def policy(self) -> RunPolicy:
        """What this run may do (its model, its reader and its request all considered)."""
        gate = egress_gate(
            self.archive,
            self.egress,
            external_content=self.external_content,
            can_read_restricted=self.can_read_restricted,
        )
        return RunPolicy(
            gate,
            grounded=not self.model.supports_tools,
            mode=self.request.mode,
            can_read_restricted=self.can_read_restricted,
            tainted_history=self.tainted_history,
            composition=composition(
                self.request.entry, self.request.question, self.request.mode, self.lang
            ),
        )


class AgentRun:
    """One run of the loop; iterate :meth:`events` once."""

    def __init__(self, setup: RunSetup) -> None:
        self.setup = setup
        self.request = setup.request
        self.policy = setup.policy()
        self.gate = self.policy.gate
        self.transcript = Transcript()
        self.change_plan: ChangePlan | None = None
        self.returned = ReturnedRecords()
        """The records tools returned to the model in this run (what citations may cite)."""
        context = self.policy.tool_context(
            setup.archive, setup.searcher, setup.lang, self.request.entry.id
        )
        self.tools = ToolCaller(
            setup.registry, self.policy, context, self.returned, self.transcript, self._propose
        )
        self.composed = False
        """Whether the core composed the answer (:mod:`app.core.agent.composed_answer`)."""
        self.follow_up = FollowUp.of(self.request.question, setup.previous, setup.archive)

    @property
    def stopped(self) -> bool:
        """Whether the person pressed Stop."""
        return self.setup.stop_event.is_set()

    async def events(self) -> AsyncIterator[Event]:
        """Stream the run's events; the last one is a ``final`` or an ``error``.

        A known error (:class:`~app.core.errors.ArxiuError`) is the ``error`` frame; anything
        else is a bug: logged with its traceback and raised on, to the crash handler (the
        caller keeps :meth:`partial`, what streamed so far)."""
        entry = self.request.entry
        yield StartEvent(entry.id, self.request.mode, entry.egress)
        try:
            history, withheld = self.policy.history(self.request.history)
            if withheld:  # tainted answers kept from an external model: the run says so
                notice = self._say(TAINT_NOTICE.format(count=withheld))
                self.transcript.note({"notice": "egress.tainted_withheld", "count": withheld})
                yield notice
            if self.follow_up is not None:  # "these": the previous answer's records, read again
                async for event in self.follow_up.read(self.tools):
                    yield event
            grounded = self.policy.grounded or self.policy.composition is not None
            body = self._grounded(history) if grounded else self._tool_loop(history)
            async for event in body:
                yield event
        except ArxiuError as error:
            yield ErrorEvent.from_error(error)
        except Exception as error:
            self.transcript.note({"bug": type(error).__name__})
            log_bug(log, error, f"the agent run ({entry.id}, turn {self.transcript.turns})")
            raise

    def partial(self) -> FinalEvent:
        """The run so far as a ``stopped`` final without a plan: what a run a bug ended
        keeps (the answer streamed until then, its taint and its transcript)."""
        self.change_plan = None
        return self.final("stopped")

    # -- the two run shapes -----------------------------------------------------------------
    async def _tool_loop(self, history: list[HistoryEntry]) -> AsyncIterator[Event]:
        messages = tool_loop_messages(self.request, history, self.context_text())
        tools = self.policy.tool_specs(self.setup.registry)
        for n in range(1, self.setup.max_turns + 1):
            if self.stopped:
                yield self.final("stopped")
                return
            self.transcript.turns = n
            yield IterationEvent(n, self.setup.max_turns)
            outcome = TurnOutcome()
            async for event in self._model_turn(messages, tools, outcome):
                yield event
            if outcome.stopped or self.stopped:
                yield self.final("stopped")
                return
            if not outcome.calls:
                yield self.final("end_turn")
                return
            messages.append(Message("assistant", outcome.text, tool_calls=tuple(outcome.calls)))
            calls = self.tools.steps(
                outcome.calls, messages, lambda: self.change_plan is not None or self.stopped
            )
            async for event in calls:
                yield event
            if self.change_plan is not None:
                if not self.transcript.answer.strip():
                    # the answer is what the text frames carried: the plan's summary is streamed
                    yield self._say(self.change_plan.summary)
                yield self.final("change_plan")
                return
        raise turn_limit(self.setup.max_turns)

    async def _grounded(self, history: list[HistoryEntry]) -> AsyncIterator[Event]:
        """Search on the question, answer from the hits the gate let through, cite them."""
        picked = self.follow_up.answer() if self.follow_up is not None else None
        if picked is not None:  # the core picked among the previous records ("the oldest")
            yield self._say(picked)
            yield self.final("end_turn")
            return
        if self.policy.composition is not None:  # the core writes the answer: no model prose
            composing = composed_run(self, self.policy.composition, self.setup.archive)
            async for event in composing:
                yield event
            return
        within = asked_within(self.setup.archive, self.request.context)
        step = ToolStep(search_call(self.request.question, within))
        async for event in self.tools.step(step):
            yield event
        assert step.result is not None
        setup = self.setup
        sources = grounded_sources(step.result, self.returned, setup.archive, setup.lang)
        if self.follow_up is not None:
            sources = self.follow_up.scoped(sources)
        if self.stopped:
            yield self.final("stopped")
            return
        if not sources:
            yield self._say(no_sources_answer(self.policy.for_model(step.result)))
            yield self.final("end_turn")
            return
        self.transcript.turns = 1
        yield IterationEvent(1, setup.max_turns)
        messages = grounded_messages(self.request, history, sources, self.context_text())
        outcome = TurnOutcome()
        async for event in self._model_turn(messages, [], outcome, MAX_ANSWER_TOKENS):
            yield event
        if outcome.stopped or self.stopped:
            yield self.final("stopped")
            return
        yield self._say(sources_text(sources))
        yield self.final("end_turn")

    # -- pieces ------------------------------------------------------------------------------
    def _model_turn(
        self,
        messages: list[Message],
        tools: list[ToolSpec],
        outcome: TurnOutcome,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Event]:
        """Stream one model turn into ``outcome`` (raises the provider's coded error)."""
        options = stream_options(self.request, self.setup.stop_event, max_tokens)
        return model_turn(self.setup.model, messages, tools, options, outcome, self.transcript)

    def _propose(self, call: ToolCall) -> ToolResult:
        setup, question, external = self.setup, self.request.question, self.gate.external
        result, plan = propose(
            call, setup.archive, setup.registry, setup.lang, question, external=external
        )
        if plan is not None:
            self.change_plan = plan
        return result

    def _say(self, text: str) -> TextEvent:
        """``text`` added to the answer, as the event that streams it."""
        self.transcript.add_text(text, by_core=True)
        return TextEvent(text)

    def context_text(self) -> str | None:
        """The current-record note for the user's turn (content withheld where gated), and
        the previous answer's records when the question refers back to them."""
        note = self.policy.context_note(self.request.context, self.setup.lang)
        previous = self.follow_up.note() if self.follow_up is not None else None
        return "\n\n".join(part for part in (note, previous) if part) or None

    def final(self, stop: StopKind) -> FinalEvent:
        """The ``final`` frame for the run so far."""
        tainted = self.policy.tainted(self.request.history)  # may hold restricted text
        history = self.transcript.history(
            self.request.history, self.request.question, tainted=tainted
        )
        setup, question = self.setup, self.request.question
        citations, claims = check_answer(
            self.transcript,
            self.returned,
            setup.archive,
            setup.lang,
            question,
            composed=self.composed,
        )
        return FinalEvent(
            answer=self.transcript.answer,
            stop=stop,
            change_plan=None,  # the session puts the proposed plan in the plan book
            history=history,
            transcript_summary=list(self.transcript.summary),
            usage=self.transcript.usage(),
            turns=self.transcript.turns,
            model=self.request.entry.id,
            citations=citations,
            tainted=tainted,
            refusal=run_refusal(self.transcript.summary, self.request.entry.egress),
            proposed=self.change_plan,
            claims=claims,
            composed=self.composed,
        )


def tool_loop_messages(
    request: CheckedRequest, history: Sequence[HistoryEntry], context: str | None
) -> list[Message]:
    """The first messages of a tool loop: the mode's system prompt, the history the model may
    see, and the user's turn (the record note, the question, its images)."""
    return [
        Message("system", system_prompt(request.mode)),
        *history_messages(history),
        Message("user", user_turn(request.question, context), images=request.images),
    ]


def turn_limit(max_turns: int) -> ModelError:
    """The error of a run that did not finish within ``max_turns`` model turns."""
    return ModelError(
        "ai.turn_limit",
        Phrase.of("The assistant did not finish within {turns} model turns.", turns=max_turns),
        hint="Ask a narrower question, or split it in steps.",
        category="provider",
        details={"turns": max_turns},
    )
