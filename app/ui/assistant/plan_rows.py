"""What a confirm card shows for each op: what it does in words, its outcome, the records made.

Pure functions over the typed plan, the core's previews of its ops
(:mod:`app.core.agent.plan_preview`: sections, fields and records by their labels) and its
apply report, so the card says exactly what Apply will do and the tests can check it without
widgets. The sentences are English source text translated by the UI's tables
(:func:`app.ui.i18n.tr`); the labels in them are the archive's, in the card's language, and
languages are named, not coded (:mod:`app.ui.assistant.plan_langs`). The
tool and its raw arguments stay available (:func:`format_args`) for the row's tooltip.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping

from app.core.agent.plan_preview import FieldValue, OpPreview, RecordName
from app.core.agent.plan_types import ApplyReport, ChangePlan, OpFailure, unlinked_text
from app.core.archive import RecordKey
from app.ui.assistant.plan_langs import named_langs
from app.ui.i18n import InstalledTranslations, tr

MAX_ARGS_CHARS = 600
SENTENCES = {
    "dedalo_create_record": "Create a record in {section}",
    "dedalo_find_or_create": "Find the record in {section} with these values, or create it",
    "dedalo_duplicate_record": "Copy {record} into a new record",
    "dedalo_delete_record": "Delete {record}",
    "dedalo_set_field": "Set {field} of {record}",
    "dedalo_save_component": "Replace every value of {field} of {record}",
    "dedalo_portal_link": "Link {target} as {field} of {record}",
    "dedalo_portal_unlink": "Unlink {target} from {field} of {record}",
    "dedalo_upload_media": "Attach the file {path} to {field} of {record}",
}
"""What each write tool does, with the preview's labels as placeholders (English source)."""
DELETE_UNLINKING = "Delete {record}, first removing the links other records hold to it"


def format_args(args: Mapping[str, object]) -> str:
    """The op's arguments as compact, readable JSON (long values cut)."""
    text = json.dumps(args, ensure_ascii=False, indent=1, sort_keys=False)
    lines = [line.strip() for line in text.splitlines()]
    compact = " ".join(lines).replace("{ ", "{").replace(" }", "}").replace("[ ", "[")
    compact = compact.replace(" ]", "]")
    return compact if len(compact) <= MAX_ARGS_CHARS else compact[: MAX_ARGS_CHARS - 1] + "…"


def failure_text(failure: OpFailure) -> str:
    """Why an op failed, for a person: the reason, the code, the hint (in the UI's language
    where the tables hold them) and any candidates."""
    table = InstalledTranslations()
    message, hint = failure.message_in(table), failure.hint_in(table)
    text = f"{message} [{failure.code}]" if message else failure.code
    if hint:
        text += f" — {hint}"
    missing = [c for c in failure.candidates if c.key not in failure.message]
    if missing:
        names = "; ".join(f"{c.label or '…'} ({c.key})" for c in missing)
        text += f" Candidates: {names}."
    return text


def op_outcomes(plan: ChangePlan, report: ApplyReport) -> dict[str, tuple[str, str]]:
    """Each op's outcome from an apply report: ``op_id → (applied|failed|skipped, detail)``."""
    out: dict[str, tuple[str, str]] = {}
    for item in report.applied:
        out[item.op_id] = ("applied", unlinked_text(item.result))
    if report.failed is not None:
        out[report.failed.op_id] = ("failed", failure_text(report.failed))
    for op_id in report.skipped:
        out[op_id] = ("skipped", "")
    for op in plan.ops:
        out.setdefault(op.op_id, ("skipped", ""))
    return out


def created_records(plan: ChangePlan, report: ApplyReport) -> dict[str, RecordKey]:
    """``op_id → key`` of the records the apply created (or found)."""
    out = {}
    for op_id, section_id in report.created.items():
        op = plan.op(op_id)
        tipo = op.section_tipo if op is not None else None
        if tipo is not None:
            out[op_id] = RecordKey(tipo, section_id)
    return out


def record_words(name: RecordName | None, created: Mapping[str, RecordKey]) -> str:
    """A record as a person reads it (HTML): ``label (key)``; a record an earlier step makes,
    by that step (``label (the new record created in step 1)``) until the apply says which
    record it is (``created``: ``op_id → key``)."""
    if name is None:
        return html.escape(tr("a record"))
    name = name.applied(created)
    label = html.escape(name.label)
    if name.key is not None:
        return f"{label} ({name.key})" if label else str(name.key)
    template = (
        "the new record created in step {step}"
        if name.created
        else "the record found or created in step {step}"
    )
    step = tr(template).format(step=name.step or "?")
    return f"{label} ({html.escape(step)})" if label else html.escape(step)


def value_words(value: FieldValue, created: Mapping[str, RecordKey]) -> str:
    """One value an op writes (HTML): ``field: value``, a relation's records by name."""
    if value.records:
        shown = "; ".join(record_words(name, created) for name in value.records)
    else:
        shown = html.escape(named_langs(value.text)) or "—"
    return f"{html.escape(value.field_label)}: <b>{shown}</b>"


def op_sentence(preview: OpPreview, created: Mapping[str, RecordKey]) -> str:
    """What the op does, in one sentence (HTML; an unknown tool by its name)."""
    template = SENTENCES.get(preview.tool)
    if template is None:
        return html.escape(preview.tool)
    if preview.tool == "dedalo_delete_record" and preview.unlink:
        template = DELETE_UNLINKING
    return tr(template).format(
        section=f"<b>{html.escape(preview.section)}</b>",
        record=f"<b>{record_words(preview.record, created)}</b>",
        field=f"<b>{html.escape(preview.field_label)}</b>",
        target=f"<b>{record_words(preview.target, created)}</b>",
        path=f"<b>{html.escape(preview.path)}</b>",
    )


def op_words(preview: OpPreview, created: Mapping[str, RecordKey] | None = None) -> str:
    """The op in words (HTML): its sentence, then each value it writes, one per line (a field
    change as before → after)."""
    made = created or {}
    lines = [op_sentence(preview, made)]
    change = preview.change
    if change is not None:
        after = (
            "; ".join(record_words(n, made) for v in preview.values for n in v.records)
            if any(v.records for v in preview.values)
            else html.escape(named_langs(change.after))
        )
        lines.append(
            f"{html.escape(change.field_label)}: <s>{html.escape(named_langs(change.before))}</s> "
            f"→ <b>{after}</b>"
        )
    else:
        lines += [value_words(value, made) for value in preview.values]
    if preview.only_if_created:
        lines.append(html.escape(tr("Only if it is created, also:")))
        lines += [value_words(value, made) for value in preview.only_if_created]
    return "<br>".join(lines)


def changes_written(report: ApplyReport) -> int:
    """How many applied ops changed the archive (a record found, a link already there, or a
    link already gone wrote nothing)."""
    return sum(1 for item in report.applied if item.wrote)


def report_text(plan: ChangePlan, report: ApplyReport) -> str:
    """What an apply did, for the card's footer: how many changes it wrote and, for a failed
    one, at which step, why and with which code."""
    written = changes_written(report)
    failed = report.failed
    if failed is None:
        if written == 0:
            return tr("Applied: nothing needed changing.")
        if written == 1:
            return tr("Applied: 1 change written.")
        return tr("Applied: {count} changes written.").format(count=written)
    steps = [op.op_id for op in plan.ops]
    step = steps.index(failed.op_id) + 1 if failed.op_id in steps else "?"
    return tr(
        "Failed at step {step}: {reason} [{code}]. Changes written before it: {count}; "
        "the later steps were skipped."
    ).format(
        step=step,
        reason=failed.message_in(InstalledTranslations()) or "—",
        code=failed.code,
        count=written,
    )
