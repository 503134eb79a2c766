"""The panel's confirm cards: the one path a plan takes to a card, and the core's word on it.

A plan reaches a card in one way, whether a run just proposed it or a reopened conversation
holds it: :meth:`PlanCards.show` with the core's
:class:`~app.core.agent.plan_types.PendingPlan`, its ops' previews read on a read thread.
Afterwards the card shows only what the plan desk announces (applying, applied, failed,
declined, superseded): each announcement is re-emitted through a queued signal, so it reaches
the card on the GUI thread whatever thread made it, and the panel never asks the plan book.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal

from app.core.agent.plan_preview import plan_previews
from app.core.agent.plan_types import PendingPlan, PlanState
from app.core.errors import ArxiuError
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.conversation_view import ConversationView
from app.ui.i18n import error_text
from app.ui.services import Services
from app.ui.tasks import TaskGroup

if TYPE_CHECKING:
    from app.core.session import AssistantSession


class PlanCards(QObject):
    """Shows each proposed plan as a card, resolves it, and shows what the core announces.

    Signals:
        card_shown: (ConfirmCardWidget) a plan became a card (every card is announced here).
        status_announced: (PlanState) the plan desk announced a status (emitted on any
            thread; delivered queued, on the GUI thread).
        archive_changed: an apply changed the archive (applied, or failed part-way).
    """

    card_shown = Signal(object)
    status_announced = Signal(object)
    archive_changed = Signal()

    def __init__(self, services: Services, view: ConversationView, parent: QObject) -> None:
        super().__init__(parent)
        self.services = services
        self.view = view
        self.tasks = TaskGroup(self)
        self._session: AssistantSession | None = None
        self._stop_listening: Callable[[], None] | None = None
        self.status_announced.connect(self._on_status, Qt.ConnectionType.QueuedConnection)

    async def session(self) -> AssistantSession:
        """The assistant session, its plan desk heard from now on."""
        session = await self.services.session()
        self.listen(session)
        return session

    def listen(self, session: AssistantSession) -> None:
        """Hear ``session``'s plan desk from now on (once per session)."""
        if session is self._session:
            return
        self.stop_listening()
        self._session = session
        self._stop_listening = session.plans.listen(self.status_announced.emit)

    def stop_listening(self) -> None:
        """Hear no more announcements (the panel is closing)."""
        if self._stop_listening is not None:
            self._stop_listening()
        self._stop_listening = self._session = None

    async def show(self, pending: PendingPlan) -> ConfirmCardWidget:
        """The card of ``pending`` (its ops' previews read on a read thread), wired to resolve
        it: the one way a plan becomes a card."""
        archive, lang = self.services.archive, self.services.lang
        previews = await self.services.read(lambda: plan_previews(archive, pending.plan, lang))
        card = self.view.add_card(pending, previews)
        card.apply_requested.connect(lambda: self.resolve(card, True))
        card.cancel_requested.connect(lambda: self.resolve(card, False))
        self.card_shown.emit(card)
        return card

    def resolve(self, card: ConfirmCardWidget, approved: bool) -> None:
        """Apply (``approved``) or decline the card's plan; the desk announces the outcome."""
        if approved:
            card.set_busy()
        self.tasks.start(self._resolve(card, approved), name=f"resolve-{card.pending_id}")

    async def _resolve(self, card: ConfirmCardWidget, approved: bool) -> None:
        try:
            session = await self.session()
            await session.plans.resolve(
                card.pending_id, approved, confirm_restricted=card.confirm_restricted
            )
        except ArxiuError as error:  # the desk announces any status it changed; say why here
            card.show_refusal(error_text(error))

    def _on_status(self, state: PlanState) -> None:
        for card in self.view.cards:
            if card.pending_id == state.plan_id:
                card.show_status(state)
        if state.report is not None:
            self.archive_changed.emit()
