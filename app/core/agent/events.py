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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from app.core.agent.citations import Citation
from app.core.agent.claims import Claim
from app.core.agent.history_entry import HistoryEntry, entry_json, read_entry
from app.core.agent.plan_types import ChangePlan, PendingPlan
from app.core.agent.wire_fields import int_map, req_bool, req_int
from app.core.errors import ArxiuError, ErrorWords, read_words
from app.core.json_types import (
    JsonList,
    JsonObject,
    JsonShapeError,
    as_list,
    bool_or,
    int_or,
    objects,
    opt_object,
    opt_str,
    req_str,
    str_or,
)
from app.core.phrases import Translations

ThinkingState = Literal["start", "delta", "stop"]
StopKind = Literal["end_turn", "change_plan", "stopped"]
Mode = Literal["read", "write"]
Egress = Literal["local", "external"]
THINKING_STATES: tuple[ThinkingState, ...] = ("start", "delta", "stop")
STOP_KINDS: tuple[StopKind, ...] = ("end_turn", "change_plan", "stopped")
MODES: tuple[Mode, ...] = ("read", "write")
EGRESSES: tuple[Egress, ...] = ("local", "external")


@dataclass(frozen=True)
class StartEvent:
    """First frame: which model, read or write mode, its privacy class, and the stored
    conversation the run continues (or began), if any."""

    model: str
    mode: Mode
    egress: Egress
    conversation_id: str | None = None
    kind: Literal["start"] = field(default="start", init=False)

    def to_dict(self) -> JsonObject:
        """The frame's payload (``conversation_id`` only for a stored conversation)."""
        out: JsonObject = {"model": self.model, "mode": self.mode, "egress": self.egress}
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

    def to_dict(self) -> JsonObject:
        """The frame's payload (``text`` only when there is some)."""
        out: JsonObject = {"state": self.state}
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class TextEvent:
    """A chunk of the visible answer; concatenate the deltas to build it."""

    delta: str
    kind: Literal["text"] = field(default="text", init=False)

    def to_dict(self) -> JsonObject:
        """The frame's payload."""
        return {"delta": self.delta}


@dataclass(frozen=True)
class ToolUseEvent:
    """The loop is running a tool, with a human summary of the call."""

    id: str
    name: str
    summary: str
    kind: Literal["tool_use"] = field(default="tool_use", init=False)

    def to_dict(self) -> JsonObject:
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

    def to_dict(self) -> JsonObject:
        """The frame's payload."""
        return {"id": self.id, "name": self.name, "ok": self.ok, "code": self.code}


@dataclass(frozen=True)
class IterationEvent:
    """A new model turn began: turn ``n`` of at most ``max``."""

    n: int
    max: int
    kind: Literal["iteration"] = field(default="iteration", init=False)

    def to_dict(self) -> JsonObject:
        """The frame's payload."""
        return {"n": self.n, "max": self.max}


@dataclass(frozen=True)
class FinalEvent:
    """The terminal success frame: everything needed to render the turn and continue.

    ``stop`` is ``end_turn`` (an answer), ``change_plan`` (a validated plan awaits a person's
    confirmation) or ``stopped`` (the person pressed Stop; ``answer`` is the partial text).
    ``change_plan`` is the plan as the plan book holds it (the session puts the run's
    ``proposed`` plan in the book and sets it; ``proposed`` is never on the wire).
    ``history`` is text-only ``{role, text}`` (an assistant entry may carry ``tainted: true``);
    ``transcript_summary`` the run's tool calls and notes (JSON, as a turn record stores it).
    ``citations`` lists every ``Label (tipo/id)`` in the answer, each ``verified`` only when a
    tool in this run returned that record to the model (see :mod:`app.core.agent.citations`);
    ``tainted`` says the answer may hold text from restricted records; ``refusal`` is the coded
    refusal an external model met when the run reached restricted records (the answer went on
    without them; a local model may be asked instead). ``claims`` are the numbers, dates and
    names of the model's prose, each ``found`` or not in the records the run read (see
    :mod:`app.core.agent.claims`; on the wire only when there are some). ``composed`` says
    the core composed the answer from the records, no model prose in it (see
    :mod:`app.core.agent.composed_answer`; on the wire only when true).
    """

    answer: str
    stop: StopKind
    change_plan: PendingPlan | None
    history: list[HistoryEntry]
    transcript_summary: list[JsonObject]
    usage: dict[str, int]
    turns: int
    model: str
    citations: tuple[Citation, ...] = ()
    tainted: bool = False
    refusal: ErrorEvent | None = None
    proposed: ChangePlan | None = None
    claims: tuple[Claim, ...] = ()
    composed: bool = False
    kind: Literal["final"] = field(default="final", init=False)

    def to_dict(self) -> JsonObject:
        """The frame's payload (``refusal``, ``claims`` and ``composed`` only when set)."""
        out: JsonObject = {
            "answer": self.answer,
            "stop": self.stop,
            "change_plan": self.change_plan.to_dict() if self.change_plan else None,
            "history": [entry_json(entry) for entry in self.history],
            "transcript_summary": _json_list(self.transcript_summary),
            "usage": dict(self.usage),
            "turns": self.turns,
            "model": self.model,
            "citations": [citation.to_dict() for citation in self.citations],
            "tainted": self.tainted,
        }
        if self.refusal is not None:
            out["refusal"] = self.refusal.to_dict()
        if self.claims:
            out["claims"] = [claim.to_dict() for claim in self.claims]
        if self.composed:
            out["composed"] = True
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> FinalEvent:
        """Read the payload back (a client's).

        Raises:
            JsonShapeError: the payload is not a ``final`` frame's.
        """
        plan, refusal = opt_object(data, "change_plan"), opt_object(data, "refusal")
        history = as_list(data.get("history") or [], "'history'")
        return cls(
            answer=req_str(data, "answer"),
            stop=_one_of(data, "stop", STOP_KINDS),
            change_plan=PendingPlan.from_dict(plan) if plan is not None else None,
            history=[read_entry(entry, f"history[{n}]") for n, entry in enumerate(history)],
            transcript_summary=objects(data.get("transcript_summary"), "transcript_summary"),
            usage=int_map(data, "usage"),
            turns=int_or(data, "turns"),
            model=str_or(data, "model"),
            citations=tuple(Citation.from_dict(c) for c in objects(data.get("citations"))),
            tainted=bool_or(data, "tainted"),
            refusal=ErrorEvent.from_dict(refusal) if refusal is not None else None,
            claims=tuple(Claim.from_dict(c) for c in objects(data.get("claims"), "claims")),
            composed=bool_or(data, "composed"),
        )


@dataclass(frozen=True)
class ErrorEvent:
    """The terminal failure frame: the coded error body itself."""

    code: str
    category: str
    message: str
    label_key: str
    retryable: bool
    details: JsonObject | None = None
    hint: str | None = None
    words: ErrorWords | None = field(default=None, compare=False, repr=False)
    """The error's message and hint as it was raised, or as a payload's templates and values
    make them again (phrases a front end says in its language: :func:`~app.core.errors.words_of`);
    ``None`` for a frame made field by field (its English is all there is)."""
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
            words=error.words,
        )

    @classmethod
    def from_dict(cls, data: JsonObject) -> ErrorEvent:
        """Read the payload back (a client's); ``label_key`` follows from the code.

        Raises:
            JsonShapeError: the payload has no ``code``, or a field of the wrong type.
        """
        return cls.from_error(error_of(data))

    def error(self) -> ArxiuError:
        """The coded error this frame carries."""
        message, hint = self.words or (self.message, self.hint)
        return ArxiuError(
            self.code,
            message,
            hint=hint,
            category=self.category,
            retryable=self.retryable,
            details=self.details,
        )

    def message_in(self, table: Translations) -> str:
        """The message in the language of ``table`` (:meth:`ArxiuError.message_in`)."""
        return self.error().message_in(table)

    def hint_in(self, table: Translations) -> str | None:
        """The hint in the language of ``table`` (:meth:`ArxiuError.hint_in`)."""
        return self.error().hint_in(table)

    @property
    def restricted(self) -> bool:
        """Whether this is the refusal of restricted records to an external model (asking a
        local model instead may answer it)."""
        return self.code == RESTRICTED_CODE

    def to_dict(self) -> JsonObject:
        """The frame's payload: the error's own (``details`` and ``hint`` only when set)."""
        return self.error().to_dict()


RESTRICTED_CODE = "mcp.egress_restricted"


def error_of(data: JsonObject) -> ArxiuError:
    """The coded error of an error payload.

    Raises:
        JsonShapeError: the payload has no ``code``, or a field of the wrong type.
    """
    details = data.get("details")
    message, hint = read_words(data, str_or(data, "message"), opt_str(data, "hint"))
    return ArxiuError(
        req_str(data, "code"),
        message,
        hint=hint,
        category=str_or(data, "category") or "internal",
        retryable=bool_or(data, "retryable"),
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


def to_wire(event: Event) -> JsonObject:
    """The line form ``{"event": NAME, "data": {...}}`` (``arxiu ask --json-events``)."""
    return {"event": event.kind, "data": event.to_dict()}


def from_wire(name: str, data: JsonObject) -> Event:
    """The frame named ``name`` with payload ``data`` (what :func:`to_wire` wrote); keys the
    frame does not know (a newer server's) are dropped.

    Raises:
        KeyError: ``name`` is no frame's name; JsonShapeError (a ``ValueError``): ``data`` is
            not that frame's payload.
    """
    return _READERS[name](data)


_Choice = TypeVar("_Choice", bound=str)


def _one_of(data: JsonObject, key: str, choices: tuple[_Choice, ...]) -> _Choice:
    """``data[key]``, which must be one of ``choices``."""
    value = req_str(data, key)
    for choice in choices:
        if choice == value:
            return choice
    raise JsonShapeError(f"'{key}' must be one of {', '.join(choices)}, not {value!r}")


def _json_list(items: Iterable[JsonObject]) -> JsonList:
    return list(items)


def _start(data: JsonObject) -> StartEvent:
    return StartEvent(
        req_str(data, "model"),
        _one_of(data, "mode", MODES),
        _one_of(data, "egress", EGRESSES),
        opt_str(data, "conversation_id"),
    )


def _thinking(data: JsonObject) -> ThinkingEvent:
    return ThinkingEvent(_one_of(data, "state", THINKING_STATES), opt_str(data, "text"))


def _tool_use(data: JsonObject) -> ToolUseEvent:
    return ToolUseEvent(req_str(data, "id"), req_str(data, "name"), req_str(data, "summary"))


def _tool_result(data: JsonObject) -> ToolResultEvent:
    ok = req_bool(data, "ok")
    return ToolResultEvent(req_str(data, "id"), req_str(data, "name"), ok, opt_str(data, "code"))


_READERS: dict[str, Callable[[JsonObject], Event]] = {
    "start": _start,
    "thinking": _thinking,
    "text": lambda data: TextEvent(req_str(data, "delta")),
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "iteration": lambda data: IterationEvent(req_int(data, "n"), req_int(data, "max")),
    "final": FinalEvent.from_dict,
    "error": ErrorEvent.from_dict,
}
