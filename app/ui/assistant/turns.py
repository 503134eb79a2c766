"""The panel's turns: a typed request to the session, its stream to the bridge, its outcome.

The session starts or continues the stored conversation itself and names it on the ``start``
frame; a request refused before streaming becomes a banner; once the stream ends, the turn's
last frame is shown (:class:`~app.ui.assistant.run_outcome.RunOutcome`).
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QObject, Signal

from app.core.agent.events import ErrorEvent, StartEvent
from app.core.agent.request import ChatRequest
from app.core.errors import ArxiuError
from app.ui.assistant.conversation_view import ConversationView
from app.ui.assistant.model_picker import ModelPicker
from app.ui.assistant.plan_cards import PlanCards
from app.ui.assistant.request_builder import on_model
from app.ui.assistant.run_outcome import RunOutcome
from app.ui.bridge import RunBridge
from app.ui.services import Services
from app.ui.tasks import TaskGroup


class Turns(QObject):
    """Runs one question at a time in the panel's conversation.

    Signals:
        finished: a question's turn is over (its outcome is shown, its stream has ended); a
            turn a bug ended too, its partial answer kept (the bug goes to the crash handler).
        started: a turn's request reached the session (the conversation list may change).
    """

    finished = Signal()
    started = Signal()

    def __init__(
        self,
        services: Services,
        bridge: RunBridge,
        view: ConversationView,
        cards: PlanCards,
        outcome: RunOutcome,
    ) -> None:
        super().__init__(view)
        self.services, self.bridge, self.view = services, bridge, view
        self.cards, self.outcome = cards, outcome
        self.tasks = TaskGroup(self)
        self.conversation_id: str | None = None
        """The stored conversation the panel shows (``None``: the next turn starts one)."""
        self.last_request: ChatRequest | None = None
        bridge.run_started.connect(self._on_started)

    def ask(self, request: ChatRequest) -> None:
        """Run ``request`` (its question is already shown)."""
        self.tasks.start(self._run(request), name="run")

    def again(self, model_id: str | None = None) -> None:
        """Ask the last question again (of ``model_id``, when given)."""
        request = self.last_request
        if request is None:
            return
        request = on_model(request, model_id) if model_id else request
        self.view.add_user_turn(request.question)
        self.ask(request)

    def to_local(self, picker: ModelPicker) -> None:
        """Choose ``picker``'s local model and ask the last question again."""
        local = picker.local_model_id()
        if local is None:
            return
        picker.select(local)
        if self.last_request is not None:
            self.view.add_notice(self.tr("Switched to the local model; asking again."))
            self.again(local)

    async def _run(self, request: ChatRequest) -> None:
        self.last_request = request
        try:
            await self._turn(request)
        except asyncio.CancelledError:
            raise  # the panel is closing: nothing more of this turn is shown
        except Exception:  # a bug: the crash handler hears of it through this task, once
            self.view.end_turn()  # the partial answer stays, the turn is over all the same
            self.finished.emit()
            raise
        self.finished.emit()

    async def _turn(self, request: ChatRequest) -> None:
        try:
            session = await self.cards.session()
            events = await session.chat(request, conversation_id=self.conversation_id, stored=True)
        except ArxiuError as error:  # refused before anything streamed
            self.outcome.show_error(ErrorEvent.from_error(error))
            return
        self.services.settings.set("last_model", request.model)
        self.started.emit()
        try:
            await self.bridge.start(events)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this turn itself was cancelled (the panel is closing)
        await self.outcome.settle()

    def _on_started(self, start: StartEvent) -> None:
        self.conversation_id = start.conversation_id or self.conversation_id

    def stop(self) -> None:
        """Stop the run; the partial answer stays."""
        session = self.services.session_now
        if session is not None:
            session.stop(self.conversation_id)

    def leave(self) -> None:
        """The panel leaves the conversation: its run stops, nothing more of it is shown."""
        self.stop()
        self.bridge.cancel()
        self.outcome.forget()
        self.conversation_id = None
