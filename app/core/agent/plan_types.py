"""Typed payloads of change plans: the plan, its ops, and what applying it did.

Each type is a frozen dataclass with ``to_dict()`` (the wire and database form: plain JSON) and
``from_dict()`` (its inverse), made and read only at the wire and database edges: the session,
the confirm card, ``plan_rows`` and the CLI read one typed shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from app.core.agent.wire_fields import int_map, req_int
from app.core.errors import ErrorWords, read_words, said_in, words_json
from app.core.json_types import (
    JsonObject,
    JsonValue,
    as_object,
    bool_or,
    int_or,
    object_or_empty,
    objects,
    opt_str,
    req_str,
    str_list,
    str_or,
)
from app.core.phrases import Translations

PlanStatus = Literal["pending", "applying", "applied", "declined", "superseded", "failed"]
PLAN_STATUSES: tuple[PlanStatus, ...] = (
    "pending",
    "applying",
    "applied",
    "declined",
    "superseded",
    "failed",
)


@dataclass(frozen=True)
class PlanOp:
    """One operation: a write tool and its (validated) arguments (JSON, as a tool call's)."""

    op_id: str
    tool: str
    args: JsonObject
    summary: str

    def to_dict(self) -> JsonObject:
        """JSON form ``{op_id, tool, args, summary}``."""
        return {"op_id": self.op_id, "tool": self.tool, "args": self.args, "summary": self.summary}

    @property
    def section_tipo(self) -> str | None:
        """The section the op writes in (its ``section_tipo`` argument)."""
        tipo = self.args.get("section_tipo")
        return tipo if isinstance(tipo, str) else None

    @classmethod
    def from_dict(cls, data: JsonObject) -> PlanOp:
        """Read the JSON form back.

        Raises:
            JsonShapeError: a field is missing or of the wrong type.
        """
        return cls(
            op_id=req_str(data, "op_id"),
            tool=req_str(data, "tool"),
            args=dict(object_or_empty(data, "args")),
            summary=str_or(data, "summary"),
        )


@dataclass(frozen=True)
class ChangePlan:
    """A validated plan: what a person confirms, byte for byte (``plan_hash``)."""

    summary: str
    ops: tuple[PlanOp, ...]
    plan_hash: str
    plan_version: int = 1
    pending_id: str | None = None
    """The plan book's id for this proposal (absent on a plan not yet in the book)."""

    def to_dict(self) -> JsonObject:
        """JSON form ``{plan_version, summary, ops, plan_hash, pending_id?}``."""
        out: JsonObject = {
            "plan_version": self.plan_version,
            "summary": self.summary,
            "ops": [op.to_dict() for op in self.ops],
            "plan_hash": self.plan_hash,
        }
        if self.pending_id is not None:
            out["pending_id"] = self.pending_id
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> ChangePlan:
        """Read the JSON form back.

        Raises:
            JsonShapeError: a field is of the wrong type, or an op is not an op's form.
        """
        return cls(
            summary=str_or(data, "summary"),
            ops=tuple(PlanOp.from_dict(op) for op in objects(data.get("ops"), "ops")),
            plan_hash=str_or(data, "plan_hash"),
            plan_version=int_or(data, "plan_version", 1),
            pending_id=opt_str(data, "pending_id"),
        )

    def op(self, op_id: str) -> PlanOp | None:
        """The op named ``op_id``."""
        return next((op for op in self.ops if op.op_id == op_id), None)


@dataclass(frozen=True)
class Candidate:
    """A record an ambiguous match could mean: its label and key."""

    label: str
    section_tipo: str
    section_id: int

    @property
    def key(self) -> str:
        """``section_tipo/section_id``."""
        return f"{self.section_tipo}/{self.section_id}"

    def to_dict(self) -> JsonObject:
        """JSON form."""
        return {
            "label": self.label,
            "section_tipo": self.section_tipo,
            "section_id": self.section_id,
        }

    @classmethod
    def from_dict(cls, data: JsonObject) -> Candidate:
        """Read the JSON form back.

        Raises:
            JsonShapeError: no ``section_tipo`` or integer ``section_id``.
        """
        return cls(
            str_or(data, "label"), req_str(data, "section_tipo"), req_int(data, "section_id")
        )


@dataclass(frozen=True)
class OpFailure:
    """Why an op failed: its coded error, with the hint and any match candidates."""

    op_id: str
    code: str
    message: str
    hint: str | None = None
    candidates: tuple[Candidate, ...] = ()
    words: ErrorWords | None = field(default=None, compare=False, repr=False)
    """The error's message and hint as phrases said in a person's language: as raised, or
    read back from the JSON form (its ``template``/``params``); ``None``: the English only."""

    def message_in(self, table: Translations) -> str:
        """The reason in the language of ``table`` (English where it has no translation)."""
        return said_in(self.words[0], table) if self.words else self.message

    def hint_in(self, table: Translations) -> str | None:
        """The hint in the language of ``table`` (English where it has no translation)."""
        if self.words is None or self.words[1] is None:
            return self.hint
        return said_in(self.words[1], table)

    def to_dict(self) -> JsonObject:
        """JSON form ``{op_id, code, message, hint?, candidates?}``."""
        out: JsonObject = {"op_id": self.op_id, "code": self.code, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        if self.candidates:
            out["candidates"] = [c.to_dict() for c in self.candidates]
        if self.words is not None:
            out.update(words_json(self.words))
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> OpFailure:
        """Read the JSON form back (also the older ``{op_id, error: {ok, error: {...}}}``).

        Raises:
            JsonShapeError: a field is missing or of the wrong type.
        """
        body = data
        nested = data.get("error")
        if isinstance(nested, dict):
            inner = nested.get("error")
            body = inner if isinstance(inner, dict) else nested
        extra = body.get("details")
        details = extra if isinstance(extra, dict) else {}
        found = body.get("candidates") or details.get("candidates") or []
        listed = found if isinstance(found, list) else []
        message, hint = str_or(body, "message"), opt_str(body, "hint")
        return cls(
            op_id=req_str(data, "op_id"),
            code=str_or(body, "code"),
            message=message,
            hint=hint,
            candidates=tuple(
                Candidate.from_dict(c) for c in listed if isinstance(c, dict) and "section_id" in c
            ),
            words=read_words(body, message, hint),
        )


@dataclass(frozen=True)
class AppliedOp:
    """An op that took effect, with its tool's result (``resumed``: in an earlier attempt)."""

    op_id: str
    result: JsonObject
    """The tool's result data (JSON)."""
    resumed: bool = False

    @property
    def wrote(self) -> bool:
        """Whether the op changed the archive: a record found (not created), a link already
        there or a link already gone wrote nothing."""
        result = self.result
        if "matched" in result and result.get("created") is False:
            return False
        return result.get("linked") is not False and result.get("unlinked") is not False

    def to_dict(self) -> JsonObject:
        """JSON form ``{op_id, result, resumed?}``."""
        out: JsonObject = {"op_id": self.op_id, "result": self.result}
        if self.resumed:
            out["resumed"] = True
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> AppliedOp:
        """Read the JSON form back.

        Raises:
            JsonShapeError: no ``op_id``, or a field of the wrong type.
        """
        result = dict(object_or_empty(data, "result"))
        return cls(req_str(data, "op_id"), result, bool_or(data, "resumed"))


@dataclass(frozen=True)
class ApplyReport:
    """What applying a plan did: ops applied in order, the one that failed, the rest skipped."""

    applied: tuple[AppliedOp, ...] = ()
    skipped: tuple[str, ...] = ()
    failed: OpFailure | None = None
    created: dict[str, int] = field(default_factory=dict)
    """``op_id → section_id`` of the records each creating op made or found."""

    @property
    def ok(self) -> bool:
        """Whether every op was applied."""
        return self.failed is None

    def to_dict(self) -> JsonObject:
        """JSON form ``{applied, skipped, failed?, created}``."""
        created: JsonObject = dict(self.created)
        out: JsonObject = {
            "applied": [a.to_dict() for a in self.applied],
            "skipped": list(self.skipped),
            "created": created,
        }
        if self.failed is not None:
            out["failed"] = self.failed.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> ApplyReport:
        """Read the JSON form back.

        Raises:
            JsonShapeError: a field is of the wrong type.
        """
        failed = data.get("failed")
        return cls(
            applied=tuple(AppliedOp.from_dict(a) for a in objects(data.get("applied"), "applied")),
            skipped=tuple(str_list(data, "skipped")),
            failed=OpFailure.from_dict(failed) if isinstance(failed, dict) else None,
            created=int_map(data, "created"),
        )


@dataclass(frozen=True)
class PlanRecord:
    """A plan in the plan book: the plan, who proposed it, and its one status."""

    id: str
    plan: ChangePlan
    conversation_id: str | None
    model_id: str
    egress: str
    status: PlanStatus = "pending"
    tainted: bool = False
    """Whether the proposing run had read restricted records (laundering check)."""
    restricted_text: bool = False
    """Tainted and writing into an open section: needs a second, explicit confirmation."""
    report: ApplyReport | None = None
    interrupted: bool = False
    """``applying`` with no live process applying it: resolving it again resumes it."""
    proposer: str | None = None
    """Who proposed it: an API user's name, the local person, or ``None`` (recorded before
    proposers were kept: the local person's)."""

    @property
    def state(self) -> PlanState:
        """Its status, as an announcement carries it."""
        return PlanState(self.id, self.status, self.report, self.interrupted)

    def to_dict(self) -> JsonObject:
        """JSON form (what ``plan_record`` returns to front ends)."""
        out: JsonObject = {
            "id": self.id,
            "plan": self.plan.to_dict(),
            "conversation_id": self.conversation_id,
            "model_id": self.model_id,
            "egress": self.egress,
            "status": self.status,
            "tainted": self.tainted,
            "restricted_text": self.restricted_text,
            "interrupted": self.interrupted,
        }
        if self.report is not None:
            out["report"] = self.report.to_dict()
        if self.proposer is not None:
            out["proposer"] = self.proposer
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> PlanRecord:
        """Read the JSON form back.

        Raises:
            JsonShapeError: no ``id`` or ``plan``, or a field of the wrong type.
        """
        report = data.get("report")
        return cls(
            id=req_str(data, "id"),
            plan=ChangePlan.from_dict(as_object(data.get("plan"), "'plan'")),
            conversation_id=opt_str(data, "conversation_id"),
            model_id=str_or(data, "model_id"),
            egress=str_or(data, "egress", "local"),
            status=plan_status(str_or(data, "status", "pending")),
            tainted=bool_or(data, "tainted"),
            restricted_text=bool_or(data, "restricted_text"),
            report=ApplyReport.from_dict(report) if isinstance(report, dict) else None,
            interrupted=bool_or(data, "interrupted"),
            proposer=opt_str(data, "proposer"),
        )


@dataclass(frozen=True)
class PlanState:
    """A plan's one status as the plan book holds it: what a plan desk announces to its
    listeners when it changes (applied, failed, declined, superseded, applying)."""

    plan_id: str
    status: PlanStatus
    report: ApplyReport | None = None
    interrupted: bool = False
    """``applying`` with no live process applying it: resolving it again resumes it."""


@dataclass(frozen=True)
class PendingPlan:
    """A proposed plan as the plan book holds it: what a confirm card shows and resolves.

    A run's ``final`` frame carries it, and so does a reopened conversation (its latest plan):
    both are made by :meth:`of` from the book's record, so a front end shows them alike. On the
    wire it is the plan's JSON form with ``pending_id`` and, when set, ``restricted_text``.
    """

    plan: ChangePlan
    pending_id: str
    restricted_text: bool = False
    """A tainted run's plan writing into an open section: needs a second confirmation."""
    status: PlanStatus = "pending"
    interrupted: bool = False

    @classmethod
    def of(cls, record: PlanRecord) -> PendingPlan:
        """The pending plan of a plan-book record."""
        return cls(
            record.plan, record.id, record.restricted_text, record.status, record.interrupted
        )

    @property
    def state(self) -> PlanState:
        """Its status, as an announcement would carry it."""
        return PlanState(self.pending_id, self.status, None, self.interrupted)

    @property
    def waiting(self) -> bool:
        """Whether a person may still resolve it: pending, or an apply that was interrupted."""
        return self.status == "pending" or (self.status == "applying" and self.interrupted)

    def to_dict(self) -> JsonObject:
        """The wire form ``{plan_version, summary, ops, plan_hash, pending_id,
        restricted_text?}``."""
        out: JsonObject = {**self.plan.to_dict(), "pending_id": self.pending_id}
        if self.restricted_text:
            out["restricted_text"] = True
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> PendingPlan:
        """Read the wire form back (a client's).

        Raises:
            JsonShapeError: the form has no ``pending_id``, or a field of the wrong type.
        """
        plan = ChangePlan.from_dict(data)
        return cls(plan, req_str(data, "pending_id"), bool_or(data, "restricted_text"))


def plan_status(text: str) -> PlanStatus:
    """``text`` as a plan status (an unknown word reads as ``pending``)."""
    for status in PLAN_STATUSES:
        if status == text:
            return status
    return "pending"


def unlinked_text(result: Mapping[str, JsonValue]) -> str:
    """The links a delete removed first (its ``unlink`` option), one per linking record."""
    unlinked = result.get("unlinked")
    if not isinstance(unlinked, list) or not unlinked:
        return ""
    names = ", ".join(
        f"{u.get('section_tipo')}/{u.get('section_id')} ({u.get('field')})"
        for u in unlinked
        if isinstance(u, dict)
    )
    return f"unlinked from {names}"
