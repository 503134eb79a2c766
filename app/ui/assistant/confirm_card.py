"""The confirm card: a proposed change plan shown plainly, with Apply and Cancel.

One row per op: its step and summary, then what it does in words — sections, fields and
records by their labels in the UI language, a record an earlier step makes as "the new record
created in step 1", values as text, and for a field change the value before and after (the
tool and its raw arguments are the row's tooltip). After Apply each row shows its outcome
(applied, failed with the reason, its code and hint — and for an ambiguous match, the
candidates — or skipped) and links to the records created, and the card's title and footer
say what the apply wrote; a declined or superseded card says so. The card shows the status the
plan book holds (:meth:`ConfirmCardWidget.show_status`); it never decides one itself.

A plan that a tainted run proposed and that writes into an open section is flagged: "contains
text from restricted records", and Apply stays off until the person ticks the second,
explicit confirmation.

The card reads only typed values: the :class:`~app.core.agent.plan_types.PendingPlan` a run's
``final`` frame (or a reopened conversation) carries, each op's preview as the core read it
(:class:`~app.core.agent.plan_preview.OpPreview`), and the
:class:`~app.core.agent.plan_types.PlanState` the plan desk announces.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.plan_preview import OpPreview
from app.core.agent.plan_types import ApplyReport, PendingPlan, PlanOp, PlanState
from app.core.archive import RecordKey
from app.ui.assistant.plan_rows import (
    created_records,
    format_args,
    op_outcomes,
    op_words,
    record_words,
    report_text,
)
from app.ui.browser.record_html import parse_record_link, record_link

OUTCOME_NAMES = {
    "applied": "opOutcomeApplied",
    "failed": "opOutcomeFailed",
    "skipped": "opOutcomeSkipped",
}


class ClickableLabel(QLabel):
    """A label that says when it is clicked (the text of a check box that wraps).

    Signals:
        clicked: the label was clicked with the left button.
    """

    clicked = Signal()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """Emit ``clicked`` for a left click, then let the label handle the event."""
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mouseReleaseEvent(event)


class OpRowWidget(QFrame):
    """One op of the plan: its step and summary, what it does in words, its outcome."""

    def __init__(self, op: PlanOp, preview: OpPreview | None, step: int, parent: QWidget) -> None:
        """``preview``: the core's words for the op (``None``: none were read, and the row
        shows the tool and its arguments instead)."""
        super().__init__(parent)
        self.op = op
        self.preview = preview
        self.state = "pending"
        self.setObjectName("opRow")
        self.setToolTip(f"{op.op_id} · {op.tool}\n{format_args(op.args)}")
        heading = self.tr("Step {step}").format(step=step)
        summary = QLabel(f"<b>{html.escape(heading)}</b> · {html.escape(op.summary)}", self)
        summary.setWordWrap(True)
        self.outcome = QLabel(self)
        self.outcome.setVisible(False)
        head = QHBoxLayout()
        head.addWidget(summary, 1)
        head.addWidget(self.outcome, 0, Qt.AlignmentFlag.AlignTop)
        self.words = QLabel(self)
        self.words.setObjectName("opWords")
        self.words.setWordWrap(True)
        self.words.setTextFormat(Qt.TextFormat.RichText)
        self.words.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.show_words({})
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 6)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.words)
        self.detail = QLabel(self)
        self.detail.setObjectName("opOutcomeFailed")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setVisible(False)
        layout.addWidget(self.detail)

    def show_words(self, created: Mapping[str, RecordKey]) -> None:
        """Say what the op does, the records earlier steps made by their keys (``created``)."""
        if self.preview is None:
            text = html.escape(f"{self.op.tool} {format_args(self.op.args)}")
        else:
            text = op_words(self.preview, created)
        self.words.setText(text)

    def made_link(self, created: Mapping[str, RecordKey]) -> str:
        """The link to the record the op made or found (``""`` when it made none)."""
        key = created.get(self.op.op_id)
        if key is None:
            return ""
        made = self.preview.makes if self.preview is not None else None
        text = record_words(made, created) if made is not None else str(key)
        return f"<a href='{record_link(key)}'>{text}</a>"

    def show_outcome(self, state: str, detail: str, created_link: str = "") -> None:
        """Show how the op ended."""
        words = {
            "applied": self.tr("applied"),
            "failed": self.tr("failed"),
            "skipped": self.tr("skipped"),
        }
        text = words.get(state, state)
        if created_link:
            text += f" · {created_link}"
        self.detail.setText(html.escape(detail))
        self.detail.setVisible(bool(detail))
        self.detail.setObjectName("opOutcomeFailed" if state == "failed" else "opDetail")
        self.detail.style().unpolish(self.detail)
        self.detail.style().polish(self.detail)
        self.state = state
        self.outcome.setObjectName(OUTCOME_NAMES.get(state, "opOutcomeSkipped"))
        self.outcome.setText(text)
        self.outcome.setVisible(True)
        self.outcome.setWordWrap(True)
        self.outcome.setTextFormat(Qt.TextFormat.RichText)
        self.outcome.style().unpolish(self.outcome)
        self.outcome.style().polish(self.outcome)


class ConfirmCardWidget(QFrame):
    """A change plan awaiting confirmation.

    Signals:
        apply_requested: Apply was clicked.
        cancel_requested: Cancel was clicked.
        record_requested: (key, "") a created record's link was clicked.
        resolved: (state) the card left "pending" for good: applied, failed, declined,
            superseded or refused.
    """

    apply_requested = Signal()
    cancel_requested = Signal()
    record_requested = Signal(object, str)
    resolved = Signal(str)

    def __init__(
        self,
        pending: PendingPlan,
        previews: Mapping[str, OpPreview] | None = None,
        *,
        parent: QWidget | None = None,
    ) -> None:
        """``previews``: ``op_id → preview`` of the plan's ops (read by the core:
        :func:`~app.core.agent.plan_preview.plan_previews`)."""
        super().__init__(parent)
        self.setObjectName("confirmCard")
        self.pending = pending
        self.plan = pending.plan
        self.pending_id = pending.pending_id
        self.state = "pending"
        self.restricted_text = pending.restricted_text
        self._refusal = ""
        self.title = QLabel(self.tr("Proposed changes — nothing is written until you apply"), self)
        self.title.setObjectName("cardTitle")
        self.title.setWordWrap(True)
        summary = QLabel(self.plan.summary, self)
        summary.setWordWrap(True)
        found = previews or {}
        self.rows = [
            OpRowWidget(op, found.get(op.op_id), step, self)
            for step, op in enumerate(self.plan.ops, start=1)
        ]
        self.status = QLabel(self)
        self.status.setObjectName("toolLine")
        self.status.setWordWrap(True)
        self.status.setOpenExternalLinks(False)
        self.status.linkActivated.connect(self._on_link)
        self.apply_button = QPushButton(self.tr("Apply"), self)
        self.apply_button.setObjectName("primary")
        self.apply_button.clicked.connect(self.apply_requested)
        self.cancel_button = QPushButton(self.tr("Cancel"), self)
        self.cancel_button.clicked.connect(self.cancel_requested)
        warning = self.tr(
            "This plan contains text from restricted records and writes it into an open section."
        )
        self.warning = QLabel(f"<b>⚠ {html.escape(warning)}</b>", self)
        self.warning.setObjectName("restrictedWarning")
        self.warning.setTextFormat(Qt.TextFormat.RichText)
        self.warning.setWordWrap(True)
        self.second_confirm, self.second_row = self._second_confirmation()
        self.warning.setVisible(self.restricted_text)
        self.second_row.setVisible(self.restricted_text)
        self.apply_button.setEnabled(not self.restricted_text)
        self._layout(self.title, summary)
        self.show_status(pending.state)

    def _second_confirmation(self) -> tuple[QCheckBox, QWidget]:
        """The second confirmation's check box, with its text in a label that wraps.

        A check box's own text never wraps: in Catalan and Spanish it made the card wider than
        the assistant panel and pushed Apply out of sight.
        """
        text = self.tr("I have checked it: copy this text from restricted records")
        row = QWidget(self)
        box = QCheckBox(row)
        box.setAccessibleName(text)
        box.toggled.connect(self._on_second_confirm)
        label = ClickableLabel(text, row)
        label.setWordWrap(True)
        label.setBuddy(box)
        label.clicked.connect(box.toggle)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(box, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(label, 1)
        return box, row

    @property
    def confirm_restricted(self) -> bool:
        """Whether the person gave the second confirmation a flagged plan needs."""
        return self.restricted_text and self.second_confirm.isChecked()

    def _on_second_confirm(self, checked: bool) -> None:
        if self.state == "pending":
            self.apply_button.setEnabled(checked or not self.restricted_text)

    def _layout(self, title: QLabel, summary: QLabel) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.addWidget(title)
        layout.addWidget(self.warning)
        layout.addWidget(summary)
        for row in self.rows:
            row.outcome.linkActivated.connect(self._on_link)
            layout.addWidget(row)
        layout.addWidget(self.second_row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.apply_button)
        layout.addLayout(buttons)

    def set_busy(self) -> None:
        """Apply was clicked: buttons off while it runs."""
        self.apply_button.setEnabled(False)
        self.cancel_button.setEnabled(False)
        self.status.setText(self.tr("Applying…"))
        self.title.setText(self.tr("Applying the changes…"))

    def show_report(self, report: ApplyReport) -> None:
        """Show each op's outcome (a failure with its reason) and links to created records."""
        outcomes = op_outcomes(self.plan, report)
        created = created_records(self.plan, report)
        for row in self.rows:
            state, detail = outcomes.get(row.op.op_id, ("skipped", ""))
            row.show_words(created)
            row.show_outcome(state, detail, row.made_link(created))
        failed = report.failed is not None
        self.state = "failed" if failed else "applied"
        self.title.setText(
            self.tr("Changes stopped at a failure") if failed else self.tr("Changes applied")
        )
        self.status.setText(report_text(self.plan, report))
        self._finish()

    @property
    def settled(self) -> bool:
        """Whether the card left "pending" for good (its buttons are gone)."""
        return self.state in ("applied", "failed", "declined", "superseded", "refused")

    def show_status(self, state: PlanState) -> None:
        """Show a status the plan desk announced for this card's plan (a no-op while pending,
        and once the card is resolved)."""
        if state.status == "pending" or self.settled:
            return
        if state.status in ("applied", "failed") and state.report is not None:
            self.show_report(state.report)
        elif state.status in ("declined", "superseded"):
            self.show_declined(superseded=state.status == "superseded")
        elif state.status == "applying":
            self.state = "applying"
            self.title.setText(self.tr("Applying the changes…"))
            self.status.setText(
                self.tr("Interrupted while applying; Apply resumes it.")
                if state.interrupted
                else self.tr("Applying…")
            )
            self.apply_button.setEnabled(state.interrupted)
            self.cancel_button.setVisible(False)
        else:
            self.show_error(
                self._refusal or self.tr("The change was refused; nothing was written.")
            )

    def show_declined(self, superseded: bool = False) -> None:
        """The card was cancelled, or a new message superseded it."""
        self.state = "superseded" if superseded else "declined"
        self.title.setText(self.tr("Changes not applied"))
        self.status.setText(
            self.tr("Declined: superseded by a new message. Nothing was written.")
            if superseded
            else self.tr("Cancelled. Nothing was written.")
        )
        self._finish()

    def show_refusal(self, message: str) -> None:
        """A resolution was refused with ``message``. A card still waiting says why and offers
        Apply again (e.g. write mode was off); a resolved one keeps the status the desk
        announced (a refused apply says why)."""
        self._refusal = message
        if self.state == "refused":
            self.status.setText(message)
        if self.settled:
            return
        self.status.setText(message)
        self.apply_button.setEnabled(not self.restricted_text or self.second_confirm.isChecked())
        self.cancel_button.setEnabled(True)

    def show_error(self, message: str) -> None:
        """Apply was refused as a whole (nothing written)."""
        self.state = "refused"
        self.title.setText(self.tr("Changes not applied"))
        self.status.setText(message)
        self._finish()

    def _finish(self) -> None:
        self.apply_button.setVisible(False)
        self.cancel_button.setVisible(False)
        self.second_row.setVisible(False)
        self.resolved.emit(self.state)

    def _on_link(self, url: str) -> None:
        target = parse_record_link(url)
        if target is not None:
            self.record_requested.emit(target[0], target[1] or "")
