"""The assistant panel: picker, mode, conversation, composer; runs chats through the bridge."""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.events import ErrorEvent, FinalEvent
from app.core.archive import RecordKey
from app.core.errors import ArxiuError
from app.ui.assistant.composer import ComposerWidget
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.conversation_view import ConversationView
from app.ui.assistant.conversations_view import ConversationsView
from app.ui.assistant.model_picker import ModelPicker
from app.ui.bridge import RunBridge
from app.ui.services import Services
from app.ui.tasks import TaskGroup

if TYPE_CHECKING:
    from app.core.session import AssistantSession

log = logging.getLogger(__name__)

RESTRICTED_CODE = "mcp.egress_restricted"


class AssistantPanel(QWidget):
    """The assistant dock's contents.

    Signals:
        record_requested: (key, timecode or "") open a record (a citation was clicked).
        archive_changed: a change plan was applied.
        notice: a sentence for the status bar.
        models_loaded: the picker holds the catalog's models (after a load or a reload).
        turn_finished: a question's turn is over: its answer, plan, error or refusal is shown
            and its stream has ended.
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
        self.conversation_id: str | None = None
        self._last_request: dict[str, Any] | None = None
        self._refused = False
        self._write_allowed = False
        self.picker = ModelPicker(self)
        self.mode = QComboBox(self)
        self.mode.setObjectName("modeCombo")
        self.mode.addItem(self.tr("Read"), "read")
        self.mode.setToolTip(self.tr("Write mode lets the assistant propose changes"))
        self.new_button = QToolButton(self)
        self.new_button.setText(self.tr("New"))
        self.new_button.setToolTip(self.tr("Start a new conversation"))
        self.new_button.clicked.connect(self.new_conversation)
        self.list_button = QToolButton(self)
        self.list_button.setText(self.tr("Conversations"))
        self.list_button.clicked.connect(self.show_conversations)
        self.view = ConversationView(services.archive, services.lang, self)
        self.conversations = ConversationsView(services, self)
        self.composer = ComposerWidget(self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.conversations)
        self._layout()
        self._connect()
        self.setMinimumWidth(380)

    def _layout(self) -> None:
        head = QHBoxLayout()
        head.setContentsMargins(10, 6, 10, 2)
        head.addWidget(self.picker, 1)
        tools = QHBoxLayout()
        tools.setContentsMargins(10, 2, 10, 6)
        tools.addWidget(self.mode)
        tools.addStretch(1)
        tools.addWidget(self.new_button)
        tools.addWidget(self.list_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(head)
        layout.addLayout(tools)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.composer)

    def _connect(self) -> None:
        b = self.bridge
        b.text_received.connect(self.view.append_text)
        b.thinking_started.connect(self.view.start_thinking)
        b.thinking_received.connect(self.view.add_thinking_text)
        b.thinking_stopped.connect(self.view.stop_thinking)
        b.tool_started.connect(self.view.start_tool)
        b.tool_finished.connect(self._on_tool_finished)
        b.run_finished.connect(self._on_finished)
        b.run_failed.connect(self._on_failed)
        b.busy_changed.connect(self.composer.set_busy)
        b.busy_changed.connect(lambda busy: None if busy else self.turn_finished.emit())
        self.view.record_requested.connect(self.record_requested)
        self.composer.send_requested.connect(self._on_send)
        self.composer.stop_requested.connect(self.stop)
        self.picker.model_changed.connect(self._on_model)
        self.conversations.opened.connect(self.open_conversation)
        self.conversations.closed.connect(lambda: self.stack.setCurrentWidget(self.view))
        self.conversations.deleted.connect(self._on_deleted)

    # -- models ------------------------------------------------------------------------------
    async def load_models(self) -> None:
        """Fill the picker from the session's catalog."""
        try:
            session = await self.services.session()
            offered = session.models()
        except ArxiuError as error:
            self.view.add_error(ErrorEvent.from_error(error))
            return
        self._write_allowed = bool(offered.get("write_allowed"))
        self.mode.clear()
        self.mode.addItem(self.tr("Read"), "read")
        if self._write_allowed:
            self.mode.addItem(self.tr("Write"), "write")
        self.picker.set_models(offered["models"], self.services.settings.get("last_model"))
        self.models_loaded.emit()

    def reload_models(self) -> None:
        """Re-read the catalog (after the settings changed)."""
        self.tasks.start(self.load_models(), name="models")

    def _on_model(self, model_id: str) -> None:
        model = self.picker.current() or {}
        self.composer.set_vision(bool(model.get("vision")))

    # -- sending -----------------------------------------------------------------------------
    def ask_about(self, key: RecordKey) -> None:
        """Send the open record as context with the next question."""
        label = self.services.archive.record_label(key, self.services.lang)
        self.composer.set_context(key, f"{label} ({key})")
        self.stack.setCurrentWidget(self.view)
        self.composer.edit.setFocus()

    def send(self, question: str) -> None:
        """Ask ``question`` with the current model, mode, context and images."""
        request: dict[str, Any] = {"question": question, "mode": self.mode.currentData() or "read"}
        if self.picker.current_id():
            request["model"] = self.picker.current_id()
        if self.picker.current_effort():
            request["effort"] = self.picker.current_effort()
        key = self.composer.context_key
        if key is not None:
            request["context"] = {"section_tipo": key.section_tipo, "section_id": key.section_id}
        if self.composer.images:
            request["images"] = [
                {"mime": mime, "data": base64.b64encode(data).decode("ascii")}
                for mime, data in self.composer.images
            ]
            self.composer.set_images([])
        context = self.composer.context_chip.text() if key is not None else ""
        self.view.add_user_turn(question, context)
        self.tasks.start(self._run(request), name="run")

    async def _run(self, request: dict[str, Any]) -> None:
        self._last_request = request
        self._refused = False
        self.stack.setCurrentWidget(self.view)
        try:
            session = await self.services.session()
            try:
                if self.conversation_id is None:
                    self.conversation_id = session.conversations.new().id
                events = await session.chat(request, conversation_id=self.conversation_id)
            finally:  # sent or refused, the cards show what the core decided, never a guess
                self.refresh_cards(session)
        except ArxiuError as error:
            self._on_failed(ErrorEvent.from_error(error))
            self.turn_finished.emit()  # refused: no stream was started
            return
        self.services.settings.set("last_model", request.get("model"))
        await self.bridge.start(events)

    def retry(self) -> None:
        """Send the last request again."""
        if self._last_request is not None:
            self.view.add_user_turn(self._last_request["question"])
            self.tasks.start(self._run(dict(self._last_request)), name="run")

    def switch_to_local(self) -> None:
        """Choose the local model and ask the last question again."""
        local = self.picker.local_model_id()
        if local is None:
            return
        self.picker.select(local)
        if self._last_request is not None:
            request = {**self._last_request, "model": local}
            self.view.add_notice(self.tr("Switched to the local model; asking again."))
            self.view.add_user_turn(request["question"])
            self.tasks.start(self._run(request), name="run")

    def stop(self) -> None:
        """Stop the run; the partial answer stays."""
        session = self.services.session_now
        if session is not None:
            session.stop(self.conversation_id)

    # -- run outcomes ------------------------------------------------------------------------
    def _on_tool_finished(self, call_id: str, name: str, ok: bool, code: str) -> None:
        self.view.finish_tool(call_id, name, ok, code)
        if code == RESTRICTED_CODE:
            self._refused = True

    def _on_finished(self, final: FinalEvent) -> None:
        if final.answer:
            self.view.set_answer(final.answer, final.citations)
        if final.stop == "stopped":
            self.view.add_notice(self.tr("Stopped. The partial answer is kept."))
        if final.change_plan is not None:
            card = self.view.add_card(final.change_plan)
            card.apply_requested.connect(lambda c=card: self._resolve(c, True))
            card.cancel_requested.connect(lambda c=card: self._resolve(c, False))
        if self._refused and self.picker.is_external():
            self._offer_local()
        self.view.end_turn()
        self.conversations.refresh()

    def _offer_local(self) -> None:
        error = ErrorEvent(
            code=RESTRICTED_CODE,
            category="permission",
            message=self.tr("Restricted records are never sent to an external model."),
            label_key="error." + RESTRICTED_CODE,
            retryable=False,
            hint=self.tr("Switch to the local model to ask about them privately."),
        )
        banner = self.view.add_error(error, offer_local=self.picker.local_model_id() is not None)
        banner.switch_local_requested.connect(self.switch_to_local)

    def _on_failed(self, error: ErrorEvent) -> None:
        offer = error.code == RESTRICTED_CODE and self.picker.is_external()
        banner = self.view.add_error(error, offer_local=offer)
        banner.retry_requested.connect(self.retry)
        banner.switch_local_requested.connect(self.switch_to_local)
        self.view.end_turn()

    def refresh_cards(self, session: AssistantSession) -> None:
        """Show on each waiting card the status the plan book holds for its plan."""
        for card in self.view.pending_cards():
            record = session.plans.get(card.pending_id)
            if record is not None:
                card.show_status(record)

    def _resolve(self, card: ConfirmCardWidget, approved: bool) -> None:
        if approved:
            card.set_busy()
        self.tasks.start(self._resolve_async(card, approved), name=f"resolve-{card.pending_id}")

    async def _resolve_async(self, card: ConfirmCardWidget, approved: bool) -> None:
        try:
            session = await self.services.session()
        except ArxiuError as error:
            card.show_error(f"{error.message} {error.hint or ''}".strip())
            return
        try:
            report = await session.plans.resolve(
                card.pending_id, approved, confirm_restricted=card.confirm_restricted
            )
        except ArxiuError as error:
            message = f"{error.message} {error.hint or ''}".strip()
            record = session.plans.get(card.pending_id)
            if record is not None and record.status == "pending":
                card.show_refusal(message)  # nothing was claimed: the plan still waits
            else:
                card.show_error(message)
            return
        if report is None:
            card.show_declined()
            return
        card.show_report(report)
        self.archive_changed.emit()

    # -- conversations -----------------------------------------------------------------------
    def new_conversation(self) -> None:
        """Start afresh (the old conversation stays in the list)."""
        self.stop()
        self.bridge.cancel()
        self.conversation_id = None
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
        session = await self.services.session()
        try:
            conversation = session.conversations.get(conversation_id)
        except ArxiuError as error:
            self.notice.emit(error.message)
            return
        self.new_conversation()
        self.conversation_id = conversation_id
        for entry in conversation.history:
            if entry.get("role") == "user":
                self.view.add_user_turn(str(entry.get("text", "")))
            else:
                self.view.set_answer(str(entry.get("text", "")))
                self.view.end_turn()
        pending = conversation.pending_plan
        # an apply that was killed can be resumed from its card
        if pending is not None and (pending.status == "pending" or pending.interrupted):
            plan = {**pending.plan.to_dict(), "pending_id": pending.id}
            if pending.restricted_text:
                plan["restricted_text"] = True
            card = self.view.add_card(plan)
            card.apply_requested.connect(lambda c=card: self._resolve(c, True))
            card.cancel_requested.connect(lambda c=card: self._resolve(c, False))
            self.refresh_cards(session)
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

    def is_busy(self) -> bool:
        """Whether a run or another panel task is going."""
        return self.bridge.is_running() or self.tasks.busy()

    def shutdown(self) -> None:
        """Stop runs and tasks (the window is closing)."""
        self.stop()
        self.bridge.cancel()
        self.tasks.cancel_all()

    async def aclose(self) -> None:
        """Wait for the cancelled work to end."""
        await self.bridge.wait()
        await self.tasks.wait()
