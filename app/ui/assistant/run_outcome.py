"""How a turn ends in the conversation: its answer, its plan's card, its refusal or error.

Everything shown comes from the core's typed frames: the ``final`` frame's answer and
citations, its :class:`~app.core.agent.plan_types.PendingPlan` (shown through
:class:`~app.ui.assistant.plan_cards.PlanCards`, the one way to a card) and its ``refusal``
(restricted records an external model was refused); or the ``error`` frame.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.core.agent.events import ErrorEvent, FinalEvent
from app.ui.assistant.conversation_view import ConversationView
from app.ui.assistant.model_picker import ModelPicker
from app.ui.assistant.plan_cards import PlanCards


class RunOutcome(QObject):
    """Renders each turn's last frame.

    Signals:
        retry_requested: Retry was clicked on an error banner.
        local_requested: "Use the local model" was clicked on a banner.
    """

    retry_requested = Signal()
    local_requested = Signal()

    def __init__(
        self, view: ConversationView, picker: ModelPicker, cards: PlanCards, parent: QObject
    ) -> None:
        super().__init__(parent)
        self.view = view
        self.picker = picker
        self.cards = cards
        self._final: FinalEvent | None = None

    def keep(self, final: FinalEvent) -> None:
        """The turn's ``final`` frame arrived: :meth:`settle` shows it once the stream ends."""
        self._final = final

    def forget(self) -> None:
        """Show nothing of the turn in flight (the conversation was left)."""
        self._final = None

    async def settle(self) -> None:
        """Show the kept ``final`` frame: the answer, a stop, the plan's card, a refusal."""
        final, self._final = self._final, None
        if final is None:
            return
        if final.answer:
            self.view.set_answer(final.answer, final.citations, final.claims)
        if final.composed:  # the core listed the records: no model prose to trust or doubt
            self.view.add_notice(self.tr("Composed from the records: no model prose."))
        if final.stop == "stopped":
            self.view.add_notice(self.tr("Stopped. The partial answer is kept."))
        if final.change_plan is not None:
            await self.cards.show(final.change_plan)
        if final.refusal is not None:
            local = self.picker.local_model_id() is not None
            banner = self.view.add_error(final.refusal, offer_local=local)
            banner.switch_local_requested.connect(self.local_requested)
        self.view.end_turn()

    def show_error(self, error: ErrorEvent) -> None:
        """The turn ended with (or was refused for) a coded error: its banner."""
        offer = error.restricted and self.picker.is_external()
        banner = self.view.add_error(error, offer_local=offer)
        banner.retry_requested.connect(self.retry_requested)
        banner.switch_local_requested.connect(self.local_requested)
        self.view.end_turn()
