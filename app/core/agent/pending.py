"""Pending change plans: each has an id, and at most one resolution ever takes effect.

A plan proposed in a conversation waits as *pending* until a person applies or declines it, or
until a new message in that conversation supersedes it (an implicit decline). Resolving a plan
that is no longer pending raises ``mcp.plan_resolved``; an unknown id raises
``mcp.plan_unknown``.

A conversation keeps the record of its plans and how each was resolved: ``pending_plan`` is the
latest plan proposed in it with its ``status`` (``pending``, ``applying``, ``applied``,
``failed``, ``declined`` or ``superseded``; it stays there once resolved), and the transcript
turn that proposed a plan carries its ``plan_status``. So a front end can show a card as
declined, and a late resolution answers ``mcp.plan_resolved``, even after a restart.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal

from app.core.errors import ToolError

Status = Literal["pending", "applying", "applied", "failed", "declined", "superseded"]


@dataclass(frozen=True)
class PendingPlan:
    """A plan awaiting its one resolution."""

    id: str
    plan: dict[str, Any]
    conversation_id: str | None
    model_id: str
    egress: str
    status: Status = "pending"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (stored in the conversation's ``pending_plan``)."""
        return {
            "id": self.id,
            "plan": self.plan,
            "conversation_id": self.conversation_id,
            "model_id": self.model_id,
            "egress": self.egress,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PendingPlan:
        """Read the stored form back."""
        return cls(
            id=str(data["id"]),
            plan=dict(data["plan"]),
            conversation_id=data.get("conversation_id"),
            model_id=str(data.get("model_id", "")),
            egress=str(data.get("egress", "local")),
            status=data.get("status", "pending"),
        )


class PendingPlans:
    """The pending plans of a session, by id."""

    def __init__(self) -> None:
        self._plans: dict[str, PendingPlan] = {}

    def add(
        self, plan: dict[str, Any], *, conversation_id: str | None, model_id: str, egress: str
    ) -> PendingPlan:
        """Register a newly proposed plan (superseding the conversation's previous one)."""
        if conversation_id is not None:
            self.supersede(conversation_id)
        pending = PendingPlan(uuid.uuid4().hex, plan, conversation_id, model_id, egress)
        self._plans[pending.id] = pending
        return pending

    def remember(self, pending: PendingPlan) -> None:
        """Load a plan read back from storage (unless one by that id is already known)."""
        self._plans.setdefault(pending.id, pending)

    def get(self, pending_id: str) -> PendingPlan | None:
        """The plan ``pending_id``, if known."""
        return self._plans.get(pending_id)

    def claim(self, pending_id: str, approved: bool, *, status: Status = "declined") -> PendingPlan:
        """Take the one resolution of ``pending_id``: ``applying`` when approved, else
        ``status`` (``declined``, or ``superseded`` for an implicit decline).

        Raises:
            ToolError: ``mcp.plan_unknown`` or ``mcp.plan_resolved``.
        """
        pending = self._plans.get(pending_id)
        if pending is None:
            raise ToolError(
                "mcp.plan_unknown",
                "There is no pending change plan with that id.",
                category="input",
            )
        if pending.status != "pending":
            raise ToolError(
                "mcp.plan_resolved",
                f"This change plan was already resolved ({pending.status}).",
                hint="Ask again to get a new plan.",
                category="conflict",
                details={"status": pending.status},
            )
        return self._set(pending, "applying" if approved else status)

    def finish(self, pending_id: str, status: Status = "applied") -> PendingPlan:
        """Record how an approved plan's apply ended (``applied`` or ``failed``)."""
        return self._set(self._plans[pending_id], status)

    def supersede(self, conversation_id: str) -> list[PendingPlan]:
        """Implicitly decline every pending plan of a conversation; returns them."""
        done = []
        for pending in list(self._plans.values()):
            if pending.conversation_id == conversation_id and pending.status == "pending":
                done.append(self._set(pending, "superseded"))
        return done

    def _set(self, pending: PendingPlan, status: Status) -> PendingPlan:
        changed = replace(pending, status=status)
        self._plans[pending.id] = changed
        return changed


def find_in(conversation: dict[str, Any], pending_id: str) -> dict[str, Any] | None:
    """The stored record of plan ``pending_id`` in a conversation, if it holds one.

    The latest plan is ``pending_plan``; an earlier one is rebuilt from the transcript turn
    that proposed it (an earlier plan without a recorded status was superseded).
    """
    current = conversation.get("pending_plan")
    if isinstance(current, dict) and current.get("id") == pending_id:
        return current
    for turn in conversation.get("transcript", []):
        plan = turn.get("change_plan") if isinstance(turn, dict) else None
        if isinstance(plan, dict) and plan.get("pending_id") == pending_id:
            return {
                "id": pending_id,
                "plan": {k: v for k, v in plan.items() if k != "pending_id"},
                "conversation_id": conversation.get("id"),
                "model_id": turn.get("model", ""),
                "status": turn.get("plan_status", "superseded"),
            }
    return None


def store_in(conversation: dict[str, Any], pending: PendingPlan) -> None:
    """Record ``pending`` and its status in a conversation, in place.

    The transcript turn that proposed it gets ``plan_status``; the record itself becomes
    ``pending_plan`` unless a later plan already holds that place.
    """
    for turn in conversation.get("transcript", []):
        plan = turn.get("change_plan") if isinstance(turn, dict) else None
        if isinstance(plan, dict) and plan.get("pending_id") == pending.id:
            turn["plan_status"] = pending.status
    current = conversation.get("pending_plan")
    if not isinstance(current, dict) or current.get("id") == pending.id or _newer(pending):
        conversation["pending_plan"] = pending.to_dict()


def _newer(pending: PendingPlan) -> bool:
    """Whether ``pending`` was just proposed (a newly proposed plan takes ``pending_plan``)."""
    return pending.status == "pending"
