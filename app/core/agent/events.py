"""The streamed events of a run: exactly the seed protocol's ``start``…``error`` frames.

Every front end renders these and nothing else; match on them exhaustively::

    match event:
        case StartEvent(): ...
        case ThinkingEvent(): ...
        ...
        case _:
            assert_never(event)

``event.to_dict()`` is the frame's payload and ``event.kind`` its name, so a wire form is
``{"event": event.kind, "data": event.to_dict()}``; a client reads it back with
:func:`from_wire`. Payloads are typed: a ``final`` frame holds a
:class:`~app.core.agent.plan_types.PendingPlan` and
:class:`~app.core.agent.citations.Citation` values, made into dicts only by ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from app.core.agent.citations import Citation
from app.core.agent.plan_types import ChangePlan, PendingPlan
from app.core.errors import ArxiuError

ThinkingState = Literal["start", "delta", "stop"]
StopKind = Literal["end_turn", "change_plan", "stopped"]


@dataclass(frozen=True)
class StartEvent:
    """First frame: which model, read or write mode, its privacy class, and the stored
    conversation the run continues (or began), if any."""

    model: str
    mode: Literal["read", "write"]
    egress: Literal["local", "external"]
    conversation_id: str | None = None
    kind: Literal["start"] = field(default="start", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload (``conversation_id`` only for a stored conversation)."""
        out: dict[str, Any] = {"model": self.model, "mode": self.mode, "egress": self.egress}
        if self.conversation_id is not None:
            out["conversation_id"] = self.conversation_id
        return out


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
    ``change_plan`` is the plan as the plan book holds it (the session puts the run's
    ``proposed`` plan in the book and sets it; ``proposed`` is never on the wire).
    ``history`` is text-only ``{role, text}`` (an assistant entry may carry ``tainted: true``).
    ``citations`` lists every ``Label (tipo/id)`` in the answer, each ``verified`` only when a
    tool in this run returned that record to the model (see :mod:`app.core.agent.citations`);
    ``tainted`` says the answer may hold text from restricted records; ``refusal`` is the coded
    refusal an external model met when the run reached restricted records (the answer went on
    without them; a local model may be asked instead).
    """

    answer: str
    stop: StopKind
    change_plan: PendingPlan | None
    history: list[dict[str, Any]]
    transcript_summary: list[dict[str, Any]]
    usage: dict[str, int]
    turns: int
    model: str
    citations: tuple[Citation, ...] = ()
    tainted: bool = False
    refusal: ErrorEvent | None = None
    proposed: ChangePlan | None = None
    kind: Literal["final"] = field(default="final", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload (``refusal`` only when set)."""
        out: dict[str, Any] = {
            "answer": self.answer,
            "stop": self.stop,
            "change_plan": self.change_plan.to_dict() if self.change_plan else None,
            "history": self.history,
            "transcript_summary": self.transcript_summary,
            "usage": self.usage,
            "turns": self.turns,
            "model": self.model,
            "citations": [citation.to_dict() for citation in self.citations],
            "tainted": self.tainted,
        }
        if self.refusal is not None:
            out["refusal"] = self.refusal.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FinalEvent:
        """Read the payload back (a client's).

        Raises:
            KeyError, TypeError, ValueError: the payload is not a ``final`` frame's.
        """
        plan, refusal = data.get("change_plan"), data.get("refusal")
        return cls(
            answer=str(data["answer"]),
            stop=data["stop"],
            change_plan=PendingPlan.from_dict(plan) if isinstance(plan, dict) else None,
            history=list(data.get("history") or []),
            transcript_summary=list(data.get("transcript_summary") or []),
            usage=dict(data.get("usage") or {}),
            turns=int(data.get("turns") or 0),
            model=str(data.get("model") or ""),
            citations=tuple(Citation.from_dict(c) for c in data.get("citations") or []),
            tainted=bool(data.get("tainted")),
            refusal=ErrorEvent.from_dict(refusal) if isinstance(refusal, dict) else None,
        )


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ErrorEvent:
        """Read the payload back (a client's); ``label_key`` follows from the code."""
        return cls.from_error(error_of(data))

    def error(self) -> ArxiuError:
        """The coded error this frame carries."""
        return ArxiuError(
            self.code,
            self.message,
            hint=self.hint,
            category=self.category,
            retryable=self.retryable,
            details=self.details,
        )

    @property
    def restricted(self) -> bool:
        """Whether this is the refusal of restricted records to an external model (asking a
        local model instead may answer it)."""
        return self.code == RESTRICTED_CODE

    def to_dict(self) -> dict[str, Any]:
        """The frame's payload: the error's own (``details`` and ``hint`` only when set)."""
        return self.error().to_dict()


RESTRICTED_CODE = "mcp.egress_restricted"


def error_of(data: dict[str, Any]) -> ArxiuError:
    """The coded error of an error payload.

    Raises:
        KeyError: the payload has no ``code``.
    """
    details = data.get("details")
    return ArxiuError(
        str(data["code"]),
        str(data.get("message", "")),
        hint=data.get("hint"),
        category=str(data.get("category") or "internal"),
        retryable=bool(data.get("retryable", False)),
        details=details if isinstance(details, dict) else None,
    )


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


def from_wire(name: str, data: dict[str, Any]) -> Event:
    """The frame named ``name`` with payload ``data`` (what :func:`to_wire` wrote).

    Raises:
        KeyError: ``name`` is no frame's name; KeyError, TypeError or ValueError: ``data``
            is not that frame's payload.
    """
    if name == "final":
        return FinalEvent.from_dict(data)
    if name == "error":
        return ErrorEvent.from_dict(data)
    kind = _FLAT[name]
    names = {f.name for f in fields(kind) if f.init}  # a newer server's extra keys: dropped
    return kind(**{key: value for key, value in data.items() if key in names})


_FLAT: dict[
    str,
    type[StartEvent | ThinkingEvent | TextEvent | ToolUseEvent | ToolResultEvent | IterationEvent],
] = {
    "start": StartEvent,
    "thinking": ThinkingEvent,
    "text": TextEvent,
    "tool_use": ToolUseEvent,
    "tool_result": ToolResultEvent,
    "iteration": IterationEvent,
}
