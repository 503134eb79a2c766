"""From a proposed plan to its one resolution: the plan book, the gates, the resumable apply.

:class:`PlanDesk` is the session's plan owner (``session.plans``). A run's plan goes into the
book (with whether the run was tainted); resolving it checks that writes are on and — for a plan
that a tainted run proposed and that writes into an open section — that the person gave the
second, explicit confirmation, *before* the claim, so a refused resolution leaves the plan
pending. Then the claim (at most one across processes), the apply (resumed if an earlier one
was interrupted) and the final status with its report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plan_book import PlanBook
from app.core.agent.plan_types import ApplyReport, ChangePlan, PlanRecord
from app.core.archive.write_switch import write_disabled
from app.core.errors import ArxiuError, ToolError

if TYPE_CHECKING:
    from app.core.agent.events import FinalEvent
    from app.core.archive.store import Archive

EnvFactory = Callable[[str, str], ApplyContext]
"""``(model_id, egress) → ApplyContext`` for the apply of one plan."""


def run_tainted(final: FinalEvent) -> bool:
    """Whether the run that produced ``final`` had read restricted records (its taint flag)."""
    flag = getattr(final, "tainted", None)
    if isinstance(flag, bool):
        return flag
    last = final.history[-1] if final.history else None
    return bool(isinstance(last, dict) and last.get("role") == "assistant" and last.get("tainted"))


def writes_open_sections(archive: Archive, plan: ChangePlan) -> bool:
    """Whether any op of ``plan`` writes into a section that is not restricted."""
    for op in plan.ops:
        tipo = op.args.get("section_tipo")
        if (
            isinstance(tipo, str)
            and archive.has_section(tipo)
            and not archive.section(tipo).restricted
        ):
            return True
    return False


def needs_second_confirmation() -> ToolError:
    """The refusal of a laundering-flagged plan applied without the second confirmation."""
    return ToolError(
        "mcp.plan_needs_confirmation",
        "This plan contains text from restricted records and writes it into an open section.",
        hint="Check the values, then confirm a second time that they may be copied there.",
        category="permission",
    )


class PlanDesk:
    """The plans of one session's archive: proposing, looking up, resolving, applying.

    ``env_for`` builds the apply context of a plan from its model and egress; ``writes_on``
    says, at the moment of a resolution, whether writes are on (the session's write mode and
    the archive's own switch).
    """

    def __init__(
        self, archive: Archive, env_for: EnvFactory, writes_on: Callable[[], bool]
    ) -> None:
        self.archive = archive
        self.book = PlanBook(archive)
        self._env_for = env_for
        self._writes_on = writes_on

    # -- looking up --------------------------------------------------------------------------
    def get(self, plan_id: str) -> PlanRecord | None:
        """A proposed plan with its status (``pending``, ``applying``, ``applied``, ``failed``,
        ``declined``, ``superseded``); ``None`` for an unknown id."""
        return self.book.get(plan_id)

    async def aget(self, plan_id: str) -> PlanRecord | None:
        """:meth:`get` off the event loop's thread (on a read thread)."""
        return await self.book.aget(plan_id)

    def latest(self, conversation_id: str) -> PlanRecord | None:
        """The latest plan proposed in a conversation."""
        plans = self.book.in_conversation(conversation_id)
        return plans[-1] if plans else None

    # -- proposing and superseding -----------------------------------------------------------
    async def propose(
        self, final: FinalEvent, *, conversation_id: str | None, model_id: str, egress: str
    ) -> FinalEvent:
        """Put ``final``'s plan in the book (on the writer thread, the loop going on meanwhile);
        ``final`` with the plan's id and laundering flag."""
        if final.change_plan is None:
            return final
        plan = ChangePlan.from_dict(final.change_plan)
        tainted = run_tainted(final)
        record = await self.book.aadd(
            plan,
            conversation_id=conversation_id,
            model_id=model_id,
            egress=egress,
            tainted=tainted,
            restricted_text=tainted and writes_open_sections(self.archive, plan),
        )
        wire: dict[str, Any] = {**final.change_plan, "pending_id": record.id}
        if record.restricted_text:
            wire["restricted_text"] = True
        return dataclasses.replace(final, change_plan=wire)

    def supersede_conversation(self, conversation_id: str) -> None:
        """A new message (or a reset) implicitly declines the conversation's pending plan."""
        self.book.supersede(conversation_id)

    def supersede(self, plan_id: str) -> bool:
        """Implicitly decline one pending plan (an unknown id is ignored); whether it waited."""
        return self.book.supersede_id(plan_id)

    async def asupersede_conversation(self, conversation_id: str) -> None:
        """:meth:`supersede_conversation` on the writer thread (the loop goes on meanwhile)."""
        await self.book.asupersede(conversation_id)

    async def asupersede(self, plan_id: str) -> bool:
        """:meth:`supersede` on the writer thread (the loop goes on meanwhile)."""
        return await self.book.asupersede_id(plan_id)

    # -- resolving ---------------------------------------------------------------------------
    async def resolve(
        self, plan_id: str, approved: bool, *, confirm_restricted: bool = False
    ) -> ApplyReport | None:
        """Apply (``approved``) or decline a plan of the book; only the first resolution counts.

        A plan left ``applying`` by an apply that was killed resumes where it stopped. The
        book is read on a read thread and the claim and the final status are written on the
        writer thread, so the event loop (the GUI's) goes on meanwhile.
        ``confirm_restricted`` is the second confirmation a plan flagged ``restricted_text``
        needs (a tainted run's plan writing into an open section).

        Returns:
            The apply report, or ``None`` for a decline.

        Raises:
            ArxiuError: ``mcp.plan_unknown``, ``mcp.plan_resolved``; for an approval also
                ``mcp.write_disabled`` and ``mcp.plan_needs_confirmation`` (the plan then stays
                pending) or the apply's refusal of the plan as a whole (it is then ``failed``).
        """
        record = await self.book.aget(plan_id)
        if record is None:
            raise ToolError(
                "mcp.plan_unknown",
                "There is no pending change plan with that id.",
                category="input",
            )
        if approved and record.status in ("pending", "applying"):
            if not self._writes_on():  # resuming an interrupted apply is a write too
                raise write_disabled()
            if record.restricted_text and not confirm_restricted:
                raise needs_second_confirmation()
        claim = await self.book.aclaim(plan_id, approved)
        if not approved:
            return None
        return await self._apply(claim.record, resume=claim.resumed)

    async def apply(
        self,
        plan: Any,
        plan_hash: Any,
        *,
        model_id: str = "",
        egress: str = "local",
        confirm_restricted: bool = False,
    ) -> ApplyReport:
        """Apply a confirmed plan outside the book (integrators holding the plan themselves).

        A plan the book flags (a tainted run's, writing into an open section) still needs
        ``confirm_restricted``.

        Raises:
            ArxiuError: ``mcp.write_disabled``, ``mcp.plan_needs_confirmation``,
                ``mcp.plan_hash_mismatch`` or a validation error — the plan was refused as a
                whole and nothing was written.
        """
        if not self._writes_on():
            raise write_disabled()
        flagged = isinstance(plan_hash, str) and await self.book.aflagged(plan_hash)
        if flagged and not confirm_restricted:
            raise needs_second_confirmation()
        return await apply_plan(plan, plan_hash, self._env_for(model_id, egress))

    async def _apply(self, record: PlanRecord, *, resume: bool) -> ApplyReport:
        with self.book.applying(record.id):  # the approved claim marked it: cleared at the end
            plan = record.plan
            body = {k: v for k, v in plan.to_dict().items() if k != "pending_id"}
            env = self._env_for(record.model_id, record.egress)
            try:
                report = await apply_plan(body, plan.plan_hash, env, resume=resume)
            except ArxiuError:
                await self.book.afinish(record.id, "failed", None)
                raise
        await self.book.afinish(record.id, "applied" if report.ok else "failed", report)
        return report
