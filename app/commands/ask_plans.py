"""``arxiu ask --write``: a proposed plan as a terminal confirm card, and its apply report.

Shared by the local ``ask`` and ``ask --server``. A plan that a tainted run proposed and that
writes into an open section carries the warning "contains text from restricted records" and
needs a second, explicit yes. What the person sees comes from the typed
:class:`~app.core.agent.plan_types.PendingPlan` and
:class:`~app.core.agent.plan_types.ApplyReport`, so a failed op always shows its code, reason
and hint (and, for an ambiguous match, the candidates). The card, the prompts and the report
are in the CLI's language (:class:`~app.commands.plan_words.PlanWords`); op ids, tools,
arguments, codes and ``section_id`` stay as they are.

Nothing is written until the person types the language's yes (``sí`` in Catalan and Spanish,
with or without the accent; ``yes`` in English, and in every language): any other answer, an
empty line or the end of input declines the plan (:func:`is_yes`), as the product's confirm
card has it: nothing is written until a person, having read each op's tool and real arguments,
confirms (Apply); anything else is Cancel.
"""

from __future__ import annotations

import json
import sys
import unicodedata

from app.commands.cli_words import table, words
from app.commands.plan_words import PlanWords
from app.core.agent.plan_types import ApplyReport, OpFailure, PendingPlan, unlinked_text
from app.core.error_labels import labelled

ALWAYS_YES = "yes"
"""The answer that applies a plan in every language (a script written in English keeps
working in Catalan and Spanish)."""


def plan_words() -> PlanWords:
    """The confirm card's words in the CLI's language."""
    return words().plans


def confirm_card(pending: PendingPlan) -> str:
    """The plan as a person reviews it: summary, then each op's tool and real arguments."""
    w = plan_words()
    typed = pending.plan
    lines = ["", w.heading.format(summary=typed.summary), f"  plan_hash {typed.plan_hash[:16]}…"]
    if pending.restricted_text:
        lines.append(w.restricted)
    for number, op in enumerate(typed.ops, start=1):
        lines.append(f"  {number}. [{op.op_id}] {op.tool} — {op.summary}")
        lines.append("       " + json.dumps(op.args, ensure_ascii=False, sort_keys=True))
    lines.append(w.nothing_written)
    return "\n".join(lines)


def read_answer(prompt: str) -> str:
    """One line typed by the person after ``prompt`` (on stderr), lower-cased."""
    print(prompt, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    if not sys.stdin.isatty():
        print(file=sys.stderr, flush=True)  # a piped answer is not echoed: end the prompt line
    return answer


def is_yes(answer: str) -> bool:
    """Whether ``answer`` is an explicit yes: the language's word (``sí`` or ``si``, any case,
    spaces around it) or ``yes``; anything else (``s``, ``no``, an empty line) is not."""
    said = unicodedata.normalize("NFC", answer).strip().casefold()
    return said == ALWAYS_YES or said in plan_words().yes_answers


def confirmed(pending: PendingPlan) -> tuple[bool, bool]:
    """Ask for yes (and, for a flagged plan, a second yes): ``(approved, second)``."""
    w = plan_words()
    if not is_yes(read_answer(w.apply_prompt.format(yes=w.yes))):
        return False, False
    if not pending.restricted_text:
        return True, False
    print(w.restricted, file=sys.stderr, flush=True)
    second = is_yes(read_answer(w.again_prompt.format(yes=w.yes)))
    return second, second


def apply_summary(report: ApplyReport) -> str:
    """The apply report for a person."""
    w = plan_words()
    lines = []
    for item in report.applied:
        extra = unlinked_text(item.result)
        lines.append(
            w.applied.format(op_id=item.op_id)
            + (w.earlier if item.resumed else "")
            + (f": {extra}" if extra else "")
        )
    if report.failed is not None:
        lines += failure_lines(report.failed)
    lines += [w.skipped.format(op_id=op_id) for op_id in report.skipped]
    lines += [
        w.created.format(op_id=op_id, section_id=sid) for op_id, sid in report.created.items()
    ]
    return "\n".join(lines)


def failure_lines(failed: OpFailure) -> list[str]:
    """The op that failed: its code and the message, then the hint and the candidates of an
    ambiguous match, in the language where the tables hold them (a message they do not hold
    led by the code's label in the language, as :func:`~app.commands.cli_words.error_lines`
    says it)."""
    w = plan_words()
    words_table = table()
    reason = labelled(failed.code, failed.message_in(words_table), failed.message, words_table)
    lines = [w.failed.format(op_id=failed.op_id, code=failed.code, reason=reason)]
    hint = failed.hint_in(words_table)
    if hint:
        lines.append("  " + words().hint.format(hint=hint))
    for candidate in failed.candidates:
        lines.append(w.candidate.format(key=candidate.key, label=candidate.label or "…"))
    return lines
