"""From a proposed plan to its one resolution: the plan book, the gates, the resumable apply.

:class:`PlanDesk` is the session's plan owner (``session.plans``). A run's plan goes into the
book (with whether the run was tainted); resolving it checks that writes are on and — for a plan
that a tainted run proposed and that writes into an open section — that the person gave the
second, explicit confirmation, *before* the claim, so a refused resolution leaves the plan
pending. Then the claim (at most one across processes), the apply (resumed if an earlier one
was interrupted) and the final status with its report.

A plan is applied only through the book, once: by its pending id, or — for the Dédalo seed's
``{plan, plan_hash}`` — by its bound hash (an HMAC only the core can make, so an edited plan
has none), and only by the person who proposed it (another person's plan answers as an unknown
id does). The second confirmation of a flagged plan belongs to its book entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plan_book import LOCAL_PERSON, PlanBook, owned_by
from app.core.agent.plan_types import ApplyReport, ChangePlan, PlanRecord
from app.core.agent.plans import plan_hash as content_hash
from app.core.archive.plan_seal import matches
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


def plan_unknown() -> ToolError:
    """The refusal of an id that names no plan of this person (unknown, or another's)."""
    return ToolError(
        "mcp.plan_unknown", "There is no pending change plan with that id.", category="input"
    )


def plan_mismatch() -> ToolError:
    """The refusal of a posted plan that is not, byte for byte, one the core proposed."""
    return ToolError(
        "mcp.plan_hash_mismatch",
        "The plan differs from the one that was proposed and confirmed.",
        hint="Ask the assistant to propose the change again; a confirmed plan is never edited.",
        category="conflict",
    )


def _content(plan: dict[str, Any]) -> dict[str, Any]:
    return {key: plan.get(key) for key in ("plan_version", "summary", "ops")}


def same_plan(record: PlanRecord, posted: dict[str, Any], bound_hash: str) -> bool:
    """Whether ``posted`` with ``bound_hash`` is exactly the book's ``record``."""
    expected = record.plan.plan_hash
    if not expected or not matches(expected, bound_hash):
        return False
    if not matches(expected, posted.get("plan_hash", bound_hash)):
        return False
    return content_hash(_content(posted)) == content_hash(_content(record.plan.to_dict()))


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
    the archive's own switch); ``person`` is who proposes and resolves here (an API user's
    name, or :data:`~app.core.agent.plan_book.LOCAL_PERSON`).
    """

    def __init__(
        self,
        archive: Archive,
        env_for: EnvFactory,
        writes_on: Callable[[], bool],
        person: str = LOCAL_PERSON,
    ) -> None:
        self.archive = archive
        self.book = PlanBook(archive)
        self.person = person
        self._env_for = env_for
        self._writes_on = writes_on

    # -- looking up --------------------------------------------------------------------------
    def get(self, plan_id: str) -> PlanRecord | None:
        """A plan this person proposed, with its status (``pending``, ``applying``,
        ``applied``, ``failed``, ``declined``, ``superseded``); ``None`` for an unknown id or
        another person's plan."""
        return self._own(self.book.get(plan_id))

    async def aget(self, plan_id: str) -> PlanRecord | None:
        """:meth:`get` off the event loop's thread (on a read thread)."""
        return self._own(await self.book.aget(plan_id))

    def _own(self, record: PlanRecord | None) -> PlanRecord | None:
        return record if record is not None and owned_by(record, self.person) else None

    def latest(self, conversation_id: str) -> PlanRecord | None:
        """The latest plan this person proposed in a conversation."""
        plans = [p for p in self.book.in_conversation(conversation_id) if self._own(p)]
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
            proposer=self.person,
        )
        wire: dict[str, Any] = {
            **final.change_plan,
            "plan_hash": record.plan.plan_hash,  # the bound hash, not the content's sha256
            "pending_id": record.id,
        }
        if record.restricted_text:
            wire["restricted_text"] = True
        return dataclasses.replace(final, change_plan=wire)

    def supersede_conversation(self, conversation_id: str) -> None:
        """A new message (or a reset) implicitly declines this person's pending plan there."""
        self.book.supersede(conversation_id, self.person)

    def supersede(self, plan_id: str) -> bool:
        """Implicitly decline one pending plan of this person (an unknown id, or another
        person's plan, is ignored); whether it waited."""
        return self.book.supersede_id(plan_id, self.person)

    async def asupersede_conversation(self, conversation_id: str) -> None:
        """:meth:`supersede_conversation` on the writer thread (the loop goes on meanwhile)."""
        await self.book.asupersede(conversation_id, self.person)

    async def asupersede(self, plan_id: str) -> bool:
        """:meth:`supersede` on the writer thread (the loop goes on meanwhile)."""
        return await self.book.asupersede_id(plan_id, self.person)

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
        record = await self.aget(plan_id)
        if record is None:
            raise plan_unknown()
        if approved and record.status in ("pending", "applying"):
            if not self._writes_on():  # resuming an interrupted apply is a write too
                raise write_disabled()
            if record.restricted_text and not confirm_restricted:
                raise needs_second_confirmation()
        claim = await self.book.aclaim(plan_id, approved, person=self.person)
        if not approved:
            return None
        return await self._apply(claim.record, resume=claim.resumed)

    async def apply_posted(
        self, plan: Any, plan_hash: Any, *, confirm_restricted: bool = False
    ) -> ApplyReport:
        """Apply a plan a client sends back whole (the Dédalo seed's ``{plan, plan_hash}``).

        It must be, byte for byte, a plan the core proposed to this person: found by its
        ``pending_id`` or, without one, by its bound hash; then it is resolved like any other
        (once; the second confirmation of a flagged plan is the book entry's).

        Raises:
            ArxiuError: ``mcp.plan_unknown`` (a pending id of no plan of this person),
                ``mcp.plan_hash_mismatch`` (not a proposed plan, or edited),
                ``mcp.plan_resolved`` (applied or declined already) and the refusals of
                :meth:`resolve`.
        """
        if not isinstance(plan, dict) or not isinstance(plan_hash, str):
            raise plan_mismatch()
        pending_id = plan.get("pending_id")
        if pending_id is None:
            record = await self.book.aby_bound_hash(plan_hash, self.person)
            if record is None:
                raise plan_mismatch()
        else:
            record = await self.aget(pending_id) if isinstance(pending_id, str) else None
            if record is None:
                raise plan_unknown()
        if not same_plan(record, plan, plan_hash):
            raise plan_mismatch()
        report = await self.resolve(record.id, True, confirm_restricted=confirm_restricted)
        assert report is not None  # an approval always reports
        return report

    async def _apply(self, record: PlanRecord, *, resume: bool) -> ApplyReport:
        # the approved claim marked it as this process's: the mark is cleared only after the
        # final status is written, so a second resolution never finds it "interrupted" between
        with self.book.applying(record.id):
            body = _content(record.plan.to_dict())
            env = dataclasses.replace(
                self._env_for(record.model_id, record.egress), plan_id=record.id
            )
            try:
                report = await apply_plan(body, content_hash(body), env, resume=resume)
            except ArxiuError:
                await self.book.afinish(record.id, "failed", None)
                raise
            await self.book.afinish(record.id, "applied" if report.ok else "failed", report)
        return report
