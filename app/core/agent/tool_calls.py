"""One run's tool calls: each through the egress gate at both ends, its records noted.

A step streams ``tool_use`` and ``tool_result`` around the gated call (a write-mode plan
proposal is validated by the run instead, without events) and is noted in the transcript.
A refusal (an unknown tool, the gate at the call or at the result) comes back as a failed
:class:`~app.core.tools.base.ToolResult` for the model, as a tool's own coded error does; only a
bug inside a tool is raised. Every record a result returned to the model is noted in
:class:`~app.core.agent.citations.ReturnedRecords`: what the answer may cite.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.agent.events import Event, ToolResultEvent, ToolUseEvent
from app.core.agent.plans import PROPOSE_TOOL
from app.core.errors import ArxiuError
from app.core.json_types import JsonObject
from app.core.models.base import Message, ToolCall
from app.core.tools.base import ToolResult

if TYPE_CHECKING:
    from app.core.agent.citations import ReturnedRecords
    from app.core.agent.run_policy import RunPolicy
    from app.core.agent.transcript import Transcript
    from app.core.tools.base import ToolContext
    from app.core.tools.registry import ToolRegistry

MAX_TOOL_PAYLOAD_CHARS = 24_000


@dataclass
class ToolStep:
    """One tool call of a run and, once the run's ``tool_step`` ran it, its result."""

    call: ToolCall
    result: ToolResult | None = None


Proposer = Callable[["ToolCall"], ToolResult]
"""Validates a write-mode plan proposal (the run's), as the result its model reads."""


class ToolCaller:
    """The tool calls of one run, gated by its policy."""

    def __init__(
        self,
        registry: ToolRegistry,
        policy: RunPolicy,
        context: ToolContext,
        returned: ReturnedRecords,
        transcript: Transcript,
        propose: Proposer,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.context = context
        self.returned = returned
        self.transcript = transcript
        self.propose = propose
        self._calls = 0

    async def steps(
        self, calls: list[ToolCall], messages: list[Message], done: Callable[[], bool]
    ) -> AsyncIterator[Event]:
        """Run a model turn's ``calls`` in order, each result appended to ``messages`` as the
        model may see it (a plan proposal's own result whole), until ``done()`` (a plan was
        proposed, or Stop)."""
        for call in calls:
            step = ToolStep(call)
            async for event in self.step(step):
                yield event
            result = step.result
            assert result is not None
            shown = result if call.name == PROPOSE_TOOL else self.policy.for_model(result)
            messages.append(Message("tool", payload(shown), tool_call_id=call.id, name=call.name))
            if done():
                return

    async def step(self, step: ToolStep) -> AsyncIterator[Event]:
        """Run ``step``'s call as ``tool_use``, the gated call and ``tool_result`` (a plan
        proposal is validated instead, without events); noted in the transcript."""
        call = step.call
        if self.policy.proposes(call):
            result = self.propose(call)
        else:
            call_id = self.call_id(call)
            yield ToolUseEvent(call_id, call.name, self.summary(call))
            result = await self.call(call.name, call.arguments)
            yield ToolResultEvent(call_id, call.name, result.ok, self.policy.shown_code(result))
        step.result = result
        code = self.policy.shown_code(result)
        self.transcript.note({"tool": call.name, "ok": result.ok, "code": code})

    def call_id(self, call: ToolCall) -> str:
        """The call's id for its events (numbered when the model gave none)."""
        self._calls += 1
        return call.id or f"call_{self._calls}"

    def summary(self, call: ToolCall) -> str:
        """The human summary of ``call`` (the ``tool_use`` event's)."""
        return self.registry.summary(call.name, call.arguments, self.context.lang)

    async def call(self, name: str, args: JsonObject) -> ToolResult:
        """One tool call through the egress gate (both ends); refusals come back as results."""
        gate = self.policy.gate
        try:
            tool = self.registry.get(name)
        except ArxiuError as error:
            return failed(error)
        refusal = gate.check_call(tool, args)
        if refusal is not None:
            return failed(refusal)
        result = await self.registry.call(name, args, self.context)
        refusal = gate.check_result(tool, result)
        if refusal is not None:
            return failed(refusal)
        self.returned.note(result)
        return result


def failed(error: ArxiuError) -> ToolResult:
    """A coded error as the failed result the model reads."""
    return ToolResult(
        ok=False,
        code=error.code,
        message=error.message,
        hint=error.hint,
        details=dict(error.details),
    )


def payload(result: ToolResult) -> str:
    """``result`` as the tool message's text (cut at :data:`MAX_TOOL_PAYLOAD_CHARS`)."""
    text = json.dumps(result.to_model_payload(), ensure_ascii=False, default=str)
    if len(text) > MAX_TOOL_PAYLOAD_CHARS:
        text = text[:MAX_TOOL_PAYLOAD_CHARS] + " …[truncated]"
    return text
