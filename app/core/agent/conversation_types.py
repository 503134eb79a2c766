"""Typed payloads of stored conversations: the conversation, its turn records, its summary.

Each type is a frozen dataclass with ``to_dict()`` (the wire and database form: plain JSON) and
``from_dict()`` (its inverse). A conversation's ``pending_plan`` is never stored with it: it is
the plan book's record of the latest plan proposed in the conversation, filled in when the
conversation is read (see :class:`~app.core.agent.conversation_book.ConversationBook`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from app.core.agent.citations import Citation
from app.core.agent.claims import Claim
from app.core.agent.history_entry import HistoryEntry, entry_json, read_entry
from app.core.agent.plan_types import ChangePlan, PendingPlan, PlanRecord
from app.core.agent.wire_fields import dict_items, int_map
from app.core.json_types import JsonObject, JsonValue, int_or, opt_str, req_str, str_or


@dataclass(frozen=True)
class TurnRecord:
    """The transcript entry stored for one finished run."""

    at: str
    question: str
    answer: str = ""
    stop: str = "end"
    model: str = ""
    turns: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    summary: list[JsonObject] = field(default_factory=list)
    """The run's transcript summary (its tool calls and outcomes, JSON as the run noted them)."""
    change_plan: ChangePlan | None = None
    """The plan the run proposed (with its plan-book id); its status is the book's."""
    citations: tuple[Citation, ...] = ()
    tainted: bool = False
    claims: tuple[Claim, ...] = ()
    """The numbers, dates and names of the answer's prose, checked against what the run read."""

    def to_dict(self) -> JsonObject:
        """JSON form ``{at, question, answer, stop, model, turns, usage, summary, ...}``
        (``claims`` only when there are some)."""
        usage: JsonObject = dict(self.usage)
        summary: list[JsonValue] = list(self.summary)
        out: JsonObject = {
            "at": self.at,
            "question": self.question,
            "answer": self.answer,
            "stop": self.stop,
            "model": self.model,
            "turns": self.turns,
            "usage": usage,
            "summary": summary,
            "change_plan": self.change_plan.to_dict() if self.change_plan else None,
            "citations": [citation.to_dict() for citation in self.citations],
            "tainted": self.tainted,
        }
        if self.claims:
            out["claims"] = [claim.to_dict() for claim in self.claims]
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> TurnRecord:
        """Read the JSON form back (tolerating the keys older versions did not write).

        Raises:
            JsonShapeError: a field is of the wrong type.
        """
        return cls(
            at=str_or(data, "at"),
            question=str_or(data, "question"),
            answer=str_or(data, "answer"),
            stop=str_or(data, "stop", "end"),
            model=str_or(data, "model"),
            turns=int_or(data, "turns"),
            usage=int_map(data, "usage"),
            summary=dict_items(data, "summary"),
            change_plan=_plan(data.get("change_plan")),
            citations=tuple(
                Citation.from_dict(c) for c in dict_items(data, "citations") if _is_citation(c)
            ),
            tainted=bool(data.get("tainted")),
            claims=tuple(Claim.from_dict(c) for c in dict_items(data, "claims")),
        )


@dataclass(frozen=True)
class ConversationSummary:
    """A conversation in the list: no history, no transcript."""

    id: str
    title: str = ""
    model: str | None = None
    created_at: str | None = None
    updated_at: str | None = None

    def to_dict(self) -> JsonObject:
        """JSON form ``{id, title, model, created_at, updated_at}``."""
        return {
            "id": self.id,
            "title": self.title,
            "model": self.model,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class Conversation:
    """A stored conversation: its whole history and transcript, and its latest plan's record."""

    id: str
    title: str = ""
    model: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    history: tuple[HistoryEntry, ...] = ()
    """Every question and answer, oldest first (a run is sent only a window of it)."""
    transcript: tuple[TurnRecord, ...] = ()
    pending_plan: PlanRecord | None = None
    """The plan book's record of the latest plan proposed here; never stored with it."""

    @classmethod
    def new(cls, title: str = "", model: str | None = None) -> Conversation:
        """A new, empty conversation with a fresh id (not yet saved)."""
        return cls(id=uuid.uuid4().hex, title=title, model=model)

    @property
    def tainted(self) -> bool:
        """Whether any answer drew on restricted records.

        Read from every stored turn and history entry, so a later untainted answer cannot clear
        it (only a reset, which forgets the text, does).
        """
        return any(turn.tainted for turn in self.transcript) or any(
            isinstance(entry, dict) and entry.get("tainted") for entry in self.history
        )

    @property
    def waiting_plan(self) -> PendingPlan | None:
        """Its latest plan when a person may still resolve it (pending, or an apply that was
        interrupted and may be resumed), as a run's ``final`` frame would carry it."""
        if self.pending_plan is None:
            return None
        pending = PendingPlan.of(self.pending_plan)
        return pending if pending.waiting else None

    @property
    def summary(self) -> ConversationSummary:
        """The conversation as the list shows it."""
        return ConversationSummary(
            self.id, self.title, self.model, self.created_at, self.updated_at
        )

    def to_dict(self) -> JsonObject:
        """JSON form ``{id, title, model, created_at, updated_at, history, transcript,
        pending_plan}`` (``pending_plan``: the plan record's JSON form, or ``None``)."""
        return {
            **self.summary.to_dict(),
            "history": [entry_json(entry) for entry in self.history],
            "transcript": [turn.to_dict() for turn in self.transcript],
            "pending_plan": self.pending_plan.to_dict() if self.pending_plan else None,
        }

    @classmethod
    def from_dict(cls, data: JsonObject) -> Conversation:
        """Read the JSON form back (``pending_plan`` when it is a plan record's JSON form).

        Raises:
            JsonShapeError: no ``id``, or a field of the wrong type.
        """
        pending = data.get("pending_plan")
        is_record = isinstance(pending, dict) and "id" in pending and "plan" in pending
        plan = PlanRecord.from_dict(pending) if isinstance(pending, dict) and is_record else None
        return cls(
            id=req_str(data, "id"),
            title=str_or(data, "title"),
            model=opt_str(data, "model"),
            created_at=opt_str(data, "created_at"),
            updated_at=opt_str(data, "updated_at"),
            history=tuple(read_entry(e) for e in dict_items(data, "history")),
            transcript=tuple(TurnRecord.from_dict(t) for t in dict_items(data, "transcript")),
            pending_plan=plan,
        )

    def stored(self) -> JsonObject:
        """The form saved in the archive: :meth:`to_dict` without the plan (the book has it)."""
        return {**self.to_dict(), "pending_plan": None}


def _plan(value: JsonValue) -> ChangePlan | None:
    """A stored turn's plan (``None`` for none, or for a form an older version wrote)."""
    if not isinstance(value, dict) or not isinstance(value.get("ops"), list):
        return None
    return ChangePlan.from_dict(value)


def _is_citation(value: JsonObject) -> bool:
    return "section_tipo" in value and "section_id" in value
