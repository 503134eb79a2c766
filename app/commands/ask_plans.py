"""``arxiu ask --write``: a proposed plan as a terminal confirm card, and its apply report.

Shared by the local ``ask`` and ``ask --server``. A plan that a tainted run proposed and that
writes into an open section carries the warning "contains text from restricted records" and
needs a second, explicit ``yes``. What the person sees comes from the typed
:class:`~app.core.agent.plan_types.PendingPlan` and
:class:`~app.core.agent.plan_types.ApplyReport`, so a failed op always shows its code, reason
and hint (and, for an ambiguous match, the candidates).
"""

from __future__ import annotations

import json
import sys

from app.core.agent.plan_types import ApplyReport, PendingPlan, unlinked_text

RESTRICTED_WARNING = (
    "WARNING: this plan contains text from restricted records and writes it into an open section."
)


def confirm_card(pending: PendingPlan) -> str:
    """The plan as a person reviews it: summary, then each op's tool and real arguments."""
    typed = pending.plan
    lines = ["", f"Change plan: {typed.summary}", f"  plan_hash {typed.plan_hash[:16]}…"]
    if pending.restricted_text:
        lines.append(RESTRICTED_WARNING)
    for number, op in enumerate(typed.ops, start=1):
        lines.append(f"  {number}. [{op.op_id}] {op.tool} — {op.summary}")
        lines.append("       " + json.dumps(op.args, ensure_ascii=False, sort_keys=True))
    lines.append("Nothing has been written yet.")
    return "\n".join(lines)


def read_answer(prompt: str) -> str:
    """One line typed by the person after ``prompt`` (on stderr), lower-cased."""
    print(prompt, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    if not sys.stdin.isatty():
        print(file=sys.stderr, flush=True)  # a piped answer is not echoed: end the prompt line
    return answer


def confirmed(pending: PendingPlan) -> tuple[bool, bool]:
    """Ask for ``yes`` (and, for a flagged plan, a second ``yes``): ``(approved, second)``."""
    if read_answer("Type yes to apply it: ") != "yes":
        return False, False
    if not pending.restricted_text:
        return True, False
    print(RESTRICTED_WARNING, file=sys.stderr, flush=True)
    second = read_answer("Type yes again to copy it into the open section: ") == "yes"
    return second, second


def apply_summary(report: ApplyReport) -> str:
    """The apply report for a person."""
    typed = report
    lines = []
    for item in typed.applied:
        extra = unlinked_text(item.result)
        lines.append(
            f"applied {item.op_id}"
            + (" (earlier)" if item.resumed else "")
            + (f": {extra}" if extra else "")
        )
    failed = typed.failed
    if failed is not None:
        lines.append(f"FAILED {failed.op_id}: [{failed.code}] {failed.message}")
        if failed.hint:
            lines.append(f"  hint: {failed.hint}")
        for candidate in failed.candidates:
            lines.append(f"  candidate {candidate.key}: {candidate.label or '…'}")
    lines += [f"skipped {op_id}" for op_id in typed.skipped]
    lines += [f"created {op_id}: section_id {sid}" for op_id, sid in typed.created.items()]
    return "\n".join(lines)
