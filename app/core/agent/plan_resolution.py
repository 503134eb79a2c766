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
from typing import TYPE_CHECKING

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plan_book import LOCAL_PERSON, NewPlan, PlanBook, PlanListener, owned_by
from app.core.agent.plan_types import ApplyReport, ChangePlan, PendingPlan, PlanRecord
from app.core.agent.plans import plan_hash as content_hash
from app.core.archive.plan_seal import matches
from app.core.archive.write_switch import write_disabled
from app.core.errors import ArxiuError, ToolError
from app.core.json_types import JsonObject

if TYPE_CHECKING:
    from app.core.agent.events import FinalEvent
    from app.core.archive.store import Archive

EnvFactory = Callable[[str, str], ApplyContext]
"""``(model_id, egress) → ApplyContext`` for the apply of one plan."""


def run_tainted(final: FinalEvent) -> bool:
    """Whether the run that produced ``final`` had read restricted records (its taint flag)."""
    return final.tainted


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


def _content(plan: JsonObject) -> JsonObject:
    return {key: plan.get(key) for key in ("plan_version", "summary", "ops")}


def same_plan(record: PlanRecord, posted: JsonObject, bound_hash: str) -> bool:
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

    The desk announces its decisions: :meth:`listen` is told every status change of a plan
    (applying, applied, failed, declined, superseded), and — when a resolution is refused
    because the plan was resolved elsewhere — the status the book holds. Every method awaits
    the book on its read or writer thread; none blocks the event loop.
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

    def listen(self, listener: PlanListener) -> Callable[[], None]:
        """Tell ``listener`` each plan status change from now on, on the thread of the
        coroutine that made it (a front end re-posts it to its own thread); returns what
        stops it."""
        return self.book.listen(listener)

    # -- looking up --------------------------------------------------------------------------
    async def get(self, plan_id: str) -> PlanRecord | None:
        """A plan this person proposed, with its status (``pending``, ``applying``,
        ``applied``, ``failed``, ``declined``, ``superseded``); ``None`` for an unknown id or
        another person's plan."""
        return self._own(await self.book.get(plan_id))

    def _own(self, record: PlanRecord | None) -> PlanRecord | None:
        return record if record is not None and owned_by(record, self.person) else None

    async def latest(self, conversation_id: str) -> PlanRecord | None:
        """The latest plan this person proposed in a conversation."""
        found = await self.book.in_conversation(conversation_id)
        plans = [p for p in found if self._own(p)]
        return plans[-1] if plans else None

    # -- proposing and superseding -----------------------------------------------------------
    async def propose(
        self, final: FinalEvent, *, conversation_id: str | None, model_id: str, egress: str
    ) -> FinalEvent:
        """Put the plan ``final`` proposed in the book (on the writer thread, the loop going on
        meanwhile); ``final`` with it as the book holds it (its id, bound hash and laundering
        flag)."""
        plan = final.proposed
        if plan is None:
            return final
        tainted = run_tainted(final)
        opens = await self.archive.db.aread(lambda _: writes_open_sections(self.archive, plan))
        record = await self.book.add(
            NewPlan(
                plan,
                conversation_id=conversation_id,
                model_id=model_id,
                egress=egress,
                tainted=tainted,
                restricted_text=tainted and opens,
                proposer=self.person,
            )
        )
        return dataclasses.replace(final, change_plan=PendingPlan.of(record), proposed=None)

    async def supersede_conversation(self, conversation_id: str) -> None:
        """A new message (or a reset) implicitly declines this person's pending plan there."""
        await self.book.supersede(conversation_id, self.person)

    async def supersede(self, plan_id: str) -> bool:
        """Implicitly decline one pending plan of this person (an unknown id, or another
        person's plan, is ignored); whether it waited."""
        return await self.book.supersede_id(plan_id, self.person)

    # -- resolving ---------------------------------------------------------------------------
    async def resolve(
        self, plan_id: str, approved: bool, *, confirm_restricted: bool = False
    ) -> ApplyReport | None:
        """Apply (``approved``) or decline a plan of the book; only the first resolution counts.

        A plan left ``applying`` by an apply that was killed resumes where it stopped. The
        book is read on a read thread and the claim and the final status are written on the
        writer thread, so the event loop (the GUI's) goes on meanwhile.
        ``confirm_restricted`` is the second confirmation a plan flagged ``restricted_text``
        needs (a tainted run's plan writing into an open section). A claim refused because the
        plan was resolved elsewhere announces the status the book holds.

        Returns:
            The apply report, or ``None`` for a decline.

        Raises:
            ArxiuError: ``mcp.plan_unknown``, ``mcp.plan_resolved``; for an approval also
                ``mcp.write_disabled`` and ``mcp.plan_needs_confirmation`` (the plan then stays
                pending) or the apply's refusal of the plan as a whole (it is then ``failed``).
        """
        record = await self.get(plan_id)
        if record is None:
            raise plan_unknown()
        if approved and record.status in ("pending", "applying"):
            writes_on = await self.archive.db.aread(lambda _: self._writes_on())
            if not writes_on:  # resuming an interrupted apply is a write too
                raise write_disabled()
            if record.restricted_text and not confirm_restricted:
                raise needs_second_confirmation()
        try:
            claim = await self.book.claim(plan_id, approved, person=self.person)
        except ArxiuError:
            await self._announce_current(plan_id)
            raise
        if not approved:
            return None
        return await self._apply(claim.record, resume=claim.resumed)

    async def _announce_current(self, plan_id: str) -> None:
        """After a refused claim: the status the book holds, when it is not pending (the plan
        was resolved elsewhere: another window, another process)."""
        record = await self.get(plan_id)
        if record is not None and record.status != "pending":
            self.book.announce(record.state)

    async def apply_posted(
        self, plan: object, plan_hash: object, *, confirm_restricted: bool = False
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
            record = await self.book.by_bound_hash(plan_hash, self.person)
            if record is None:
                raise plan_mismatch()
        else:
            record = await self.get(pending_id) if isinstance(pending_id, str) else None
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
                await self.book.finish(record.id, "failed", None)
                raise
            await self.book.finish(record.id, "applied" if report.ok else "failed", report)
        return report
