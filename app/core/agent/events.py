"""The streamed events of a run: exactly the seed protocol's ``start``…``error`` frames.

Every front end renders these and nothing else; match on them exhaustively::

    match event:
        case StartEvent(): ...
        case ThinkingEvent(): ...
        ...
        case _:
            assert_never(event)

``event.to_dict()`` is the frame's payload and ``event.kind`` its name, so a wire form is
``{"event": event.kind, "data": event.to_dict()}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.errors import ArxiuError

ThinkingState = Literal["start", "delta", "stop"]
StopKind = Literal["end_turn", "change_plan", "stopped"]


@dataclass(frozen=True)
class StartEvent:
    """First frame: which model, read or write mode, and its privacy class."""

    model: str
    mode: Literal["read", "write"]
    egress: Literal["local", "external"]
    kind: Literal["start"] = field(default="start", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload."""
        return {"model": self.model, "mode": self.mode, "egress": self.egress}


@dataclass(frozen=True)
class ThinkingEvent:
    """The model began (``start``) or finished (``stop``) thinking; ``delta`` carries its text.

    Only models that stream their reasoning emit ``delta`` frames; the indicator needs only
    ``start`` and ``stop``.
    """

    state: ThinkingState
    text: str | None = None
    kind: Literal["thinking"] = field(default="thinking", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload (``text`` only when there is some)."""
        out: dict[str, Any] = {"state": self.state}
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class TextEvent:
    """A chunk of the visible answer; concatenate the deltas to build it."""

    delta: str
    kind: Literal["text"] = field(default="text", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload."""
        return {"delta": self.delta}


@dataclass(frozen=True)
class ToolUseEvent:
    """The loop is running a tool, with a human summary of the call."""

    id: str
    name: str
    summary: str
    kind: Literal["tool_use"] = field(default="tool_use", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload."""
        return {"id": self.id, "name": self.name, "summary": self.summary}


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool finished; ``ok: false`` carries the registry's error code."""

    id: str
    name: str
    ok: bool
    code: str | None = None
    kind: Literal["tool_result"] = field(default="tool_result", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload."""
        return {"id": self.id, "name": self.name, "ok": self.ok, "code": self.code}


@dataclass(frozen=True)
class IterationEvent:
    """A new model turn began: turn ``n`` of at most ``max``."""

    n: int
    max: int
    kind: Literal["iteration"] = field(default="iteration", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload."""
        return {"n": self.n, "max": self.max}


@dataclass(frozen=True)
class FinalEvent:
    """The terminal success frame: everything needed to render the turn and continue.

    ``stop`` is ``end_turn`` (an answer), ``change_plan`` (a validated plan awaits a person's
    confirmation) or ``stopped`` (the person pressed Stop; ``answer`` is the partial text).
    ``history`` is text-only ``{role, text}`` (an assistant entry may carry ``tainted: true``).
    ``citations`` lists every ``Label (tipo/id)`` in the answer, each ``verified`` only when a
    tool in this run returned that record to the model (see :mod:`app.core.agent.citations`);
    ``tainted`` says the answer may hold text from restricted records.
    """

    answer: str
    stop: StopKind
    change_plan: dict[str, Any] | None
    history: list[dict[str, Any]]
    transcript_summary: list[dict[str, Any]]
    usage: dict[str, int]
    turns: int
    model: str
    citations: list[dict[str, Any]] = field(default_factory=list)
    tainted: bool = False
    kind: Literal["final"] = field(default="final", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload."""
        return {
            "answer": self.answer,
            "stop": self.stop,
            "change_plan": self.change_plan,
            "history": self.history,
            "transcript_summary": self.transcript_summary,
            "usage": self.usage,
            "turns": self.turns,
            "model": self.model,
            "citations": self.citations,
            "tainted": self.tainted,
        }


@dataclass(frozen=True)
class ErrorEvent:
    """The terminal failure frame: the coded error body itself."""

    code: str
    category: str
    message: str
    label_key: str
    retryable: bool
    details: dict[str, Any] | None = None
    hint: str | None = None
    kind: Literal["error"] = field(default="error", init=False)

    @classmethod
    def from_error(cls, error: ArxiuError) -> ErrorEvent:
        """The frame for a coded error."""
        return cls(
            code=error.code,
            category=error.category,
            message=error.message,
            label_key=error.label_key,
            retryable=error.retryable,
            details=error.details or None,
            hint=error.hint,
        )

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload (``details`` and ``hint`` only when set)."""
        out: dict[str, Any] = {
            "code": self.code,
            "category": self.category,
            "message": self.message,
            "label_key": self.label_key,
            "retryable": self.retryable,
        }
        if self.details:
            out["details"] = self.details
        if self.hint:
            out["hint"] = self.hint
        return out


Event = (
    StartEvent
    | ThinkingEvent
    | TextEvent
    | ToolUseEvent
    | ToolResultEvent
    | IterationEvent
    | FinalEvent
    | ErrorEvent
)
"""Every event a run can stream."""

EVENT_NAMES: tuple[str, ...] = (
    "start",
    "thinking",
    "text",
    "tool_use",
    "tool_result",
    "iteration",
    "final",
    "error",
)


def to_wire(event: Event) -> dict[str, Any]:
    """The line form ``{"event": NAME, "data": {...}}`` (``arxiu ask --json-events``)."""
    return {"event": event.kind, "data": event.to_dict()}
