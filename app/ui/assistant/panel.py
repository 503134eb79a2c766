"""The assistant panel: picker, mode, conversation, composer; it shows what the core decides.

Its jobs live in small modules: the typed request (``request_builder``), the turns
(``turns``), their outcome (``run_outcome``), the plan cards and the plan desk's announcements
(``plan_cards``), a stored conversation shown again (``conversation_opening``).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QStackedWidget, QVBoxLayout, QWidget

from app.core.agent.events import ErrorEvent
from app.core.archive import RecordKey
from app.core.errors import ArxiuError
from app.ui.assistant.composer import ComposerWidget
from app.ui.assistant.conversation_opening import show_conversation
from app.ui.assistant.conversation_view import ConversationView
from app.ui.assistant.conversations_view import ConversationsView
from app.ui.assistant.panel_header import PanelHeader
from app.ui.assistant.plan_cards import PlanCards
from app.ui.assistant.request_builder import build_request
from app.ui.assistant.run_outcome import RunOutcome
from app.ui.assistant.turns import Turns
from app.ui.bridge import RunBridge
from app.ui.i18n import error_text
from app.ui.services import Services
from app.ui.tasks import TaskGroup


class AssistantPanel(QWidget):
    """The assistant dock's contents.

    Signals:
        record_requested: (key, timecode or "") open a record (a citation was clicked).
        archive_changed: a change plan was applied.
        notice: a sentence for the status bar.
        models_loaded: the picker holds the catalog's models (after a load or a reload).
        turn_finished: a question's turn is over (a bug's too): its answer, plan, error or
            refusal is shown and its stream has ended.
        conversation_opened: (id) a stored conversation is shown, its waiting card included.
    """

    record_requested = Signal(object, str)
    archive_changed = Signal()
    notice = Signal(str)
    models_loaded = Signal()
    turn_finished = Signal()
    conversation_opened = Signal(str)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.tasks = TaskGroup(self)
        self.bridge = RunBridge(parent=self)
        self.header = PanelHeader(self)
        self.picker, self.mode = self.header.picker, self.header.mode
        self.view = ConversationView(self)
        self.conversations = ConversationsView(services, self)
        self.composer = ComposerWidget(self)
        self.cards = PlanCards(services, self.view, self)
        self.outcome = RunOutcome(self.view, self.picker, self.cards, self)
        self.turns = Turns(services, self.bridge, self.view, self.cards, self.outcome)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.conversations)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.composer)
        self._connect()
        self.setMinimumWidth(380)

    @property
    def conversation_id(self) -> str | None:
        """The stored conversation shown (``None``: the next question starts one)."""
        return self.turns.conversation_id

    def _connect(self) -> None:
        b = self.bridge
        self.view.follow(b)
        b.run_finished.connect(self.outcome.keep)
        b.run_failed.connect(self.outcome.show_error)
        b.busy_changed.connect(self.composer.set_busy)
        self.turns.finished.connect(self.turn_finished)
        self.turns.finished.connect(self.conversations.refresh)
        self.outcome.retry_requested.connect(self.turns.again)
        self.outcome.local_requested.connect(lambda: self.turns.to_local(self.picker))
        self.header.list_button.clicked.connect(self.show_conversations)
        self.cards.archive_changed.connect(self.archive_changed)
        self.view.record_requested.connect(self.record_requested)
        self.composer.send_requested.connect(self._on_send)
        self.composer.stop_requested.connect(self.turns.stop)
        self.picker.model_changed.connect(
            lambda _id: self.composer.set_vision(self.picker.current_vision())
        )
        self.header.new_button.clicked.connect(self.new_conversation)
        self.conversations.opened.connect(self.open_conversation)
        self.conversations.closed.connect(lambda: self.stack.setCurrentWidget(self.view))
        self.conversations.deleted.connect(self._on_deleted)

    # -- models ------------------------------------------------------------------------------
    async def load_models(self) -> None:
        """Fill the picker from the session's catalog."""
        try:
            session = await self.cards.session()
            offered = await self.services.read(session.models)
        except ArxiuError as error:
            self.view.add_error(ErrorEvent.from_error(error))
            return
        self.header.show_models(offered, self.services.settings.get("last_model"))
        self.models_loaded.emit()

    def reload_models(self) -> None:
        """Re-read the catalog (after the settings changed)."""
        self.tasks.start(self.load_models(), name="models")

    # -- sending -----------------------------------------------------------------------------
    def ask_about(self, key: RecordKey) -> None:
        """Send the record ``key`` as context with the next question."""
        self.tasks.start(self.set_context_record(key), name="context")

    async def set_context_record(self, key: RecordKey) -> None:
        """Show ``key`` (its label read on a read thread) as the next question's context."""
        label = await self.services.record_label(key)
        self.composer.ask_about(key, label)
        self.stack.setCurrentWidget(self.view)

    def send(self, question: str) -> None:
        """Ask ``question`` with the current model, mode, context and images."""
        request = build_request(question, self.picker, self.header.chosen_mode(), self.composer)
        self.composer.set_images([])
        context = self.composer.context_chip.text() if request.context is not None else ""
        self.view.add_user_turn(question, context)
        self.stack.setCurrentWidget(self.view)
        self.turns.ask(request)

    # -- conversations -----------------------------------------------------------------------
    def new_conversation(self) -> None:
        """Start afresh (the old conversation stays in the list)."""
        self.turns.leave()
        self.view.clear()
        self.composer.set_context(None, "")
        self.stack.setCurrentWidget(self.view)

    def show_conversations(self) -> None:
        """Show the conversations list."""
        self.conversations.refresh()
        self.stack.setCurrentWidget(self.conversations)

    def open_conversation(self, conversation_id: str) -> None:
        """Show a stored conversation and continue it."""
        self.tasks.start(self._open(conversation_id), name="open")

    async def _open(self, conversation_id: str) -> None:
        try:
            session = await self.cards.session()
            conversation = await session.conversations.get(conversation_id)
        except ArxiuError as error:
            self.notice.emit(error_text(error))
            return
        self.new_conversation()
        self.turns.conversation_id = conversation_id
        await show_conversation(self.view, self.cards, conversation)
        self.conversation_opened.emit(conversation_id)

    def _on_deleted(self, conversation_id: str) -> None:
        if conversation_id == self.conversation_id:
            self.new_conversation()

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Load the models in the background (after the window is shown)."""
        self.reload_models()

    def _on_send(self) -> None:
        question = self.composer.take_question()
        if question:
            self.send(question)

    def _task_groups(self) -> tuple[TaskGroup, ...]:
        return (self.tasks, self.turns.tasks, self.cards.tasks, self.conversations.tasks)

    def is_busy(self) -> bool:
        """Whether a run or another panel task is going."""
        return self.bridge.is_running() or any(group.busy() for group in self._task_groups())

    def shutdown(self) -> None:
        """Stop runs and tasks (the window is closing)."""
        self.turns.leave()
        self.cards.stop_listening()
        for group in self._task_groups():
            group.cancel_all()

    async def aclose(self) -> None:
        """Wait for the cancelled work to end."""
        await self.bridge.wait()
        for group in self._task_groups():
            await group.wait()
