"""``AssistantSession``: the one façade every front end calls.

It lists the models, runs chats as async streams of events, applies and resolves change plans,
stops runs, and keeps conversations in the archive (titled after the first turn, renamable,
resettable, exportable). Models are created lazily and cached per id; starting a new run in a
conversation stops the one still running there, and a new message supersedes the
conversation's pending plan (an implicit decline). Every plan and its one status live in the
archive's plan book (see :mod:`app.core.agent.plan_book`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.agent import conversations as convs
from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.events import ErrorEvent, Event, FinalEvent
from app.core.agent.loop import AgentRun, RunSetup
from app.core.agent.plan_resolution import PlanDesk, needs_second_confirmation
from app.core.agent.plan_types import ApplyReport, PlanRecord
from app.core.agent.request import ChatRequest, validate_request
from app.core.archive.write_switch import write_disabled, writes_allowed
from app.core.errors import ArxiuError, ToolError

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.models.base import ChatModel
    from app.core.models.catalog import Catalog, ModelEntry
    from app.core.tools.registry import ToolRegistry

ModelFactory = Callable[["ModelEntry"], "ChatModel"]


@dataclass(frozen=True)
class AssistantSettings:
    """The assistant's settings (privacy and write mode)."""

    write_allowed: bool = True
    """The app's write mode switch; writes also need the archive's own ``write_allowed``."""
    external_content: bool = False
    """Whether record content may reach external models at all (never restricted content)."""
    lang: str = "lg-eng"
    can_read_restricted: bool = True
    """Whether the person reading the answers may see restricted records (an API user without
    that permission: the egress gate then treats every run like one on an external model)."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> AssistantSettings:
        """Read the known keys of a settings mapping, ignoring the rest."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class AssistantSession:
    """The assistant over one open archive."""

    def __init__(
        self,
        archive: Archive,
        catalog: Catalog | None = None,
        searcher: Searcher | None = None,
        settings: AssistantSettings | None = None,
        *,
        registry: ToolRegistry | None = None,
        model_factory: ModelFactory | None = None,
    ) -> None:
        self.archive = archive
        self.searcher = searcher
        self.settings = settings or AssistantSettings()
        self._catalog: Catalog | ArxiuError | None = catalog
        self._registry = registry
        self._factory = model_factory
        self._models: dict[str, ChatModel] = {}
        self._runs: dict[str, threading.Event] = {}
        """Stop events of the runs in flight, by conversation id (``run-N`` when stateless)."""
        self._run_count = 0
        self.plans = PlanDesk(archive)

    # -- models ------------------------------------------------------------------------------
    @property
    def catalog(self) -> Catalog | ArxiuError:
        """The model catalog, loaded on first use (or the error that made it unusable)."""
        if self._catalog is None:
            from app.core.models.catalog import load_catalog

            try:
                self._catalog = load_catalog()
            except ArxiuError as error:
                self._catalog = error
        return self._catalog

    @property
    def registry(self) -> ToolRegistry:
        """The tool registry (built on first use)."""
        if self._registry is None:
            from app.core.tools.registry import build_registry

            self._registry = build_registry()
        return self._registry

    def models(self) -> dict[str, Any]:
        """The secret-free catalog and whether write mode may be offered.

        Raises:
            ArxiuError: ``ai.model_catalog_invalid`` when the catalog cannot be used.
        """
        catalog = self.catalog
        if isinstance(catalog, ArxiuError):
            raise catalog
        return {"models": catalog.public(), "write_allowed": self.write_allowed}

    @property
    def write_allowed(self) -> bool:
        """Whether writes are on: the archive's switch and the app's write mode both."""
        return self.settings.write_allowed and writes_allowed(self.archive)

    def model(self, entry: ModelEntry) -> ChatModel:
        """The model for ``entry``, created on first use and then reused."""
        if entry.id not in self._models:
            factory = self._factory
            if factory is None:
                from app.core.models.factory import create_model

                factory = create_model
            self._models[entry.id] = factory(entry)
        return self._models[entry.id]

    async def aclose(self) -> None:
        """Stop every run and release the models."""
        self.stop()
        for model in self._models.values():
            await model.aclose()
        self._models.clear()

    # -- chat --------------------------------------------------------------------------------
    async def chat(
        self,
        request: Mapping[str, Any],
        *,
        conversation_id: str | None = None,
        supersedes: str | None = None,
    ) -> AsyncIterator[Event]:
        """Validate ``request`` and return the run's event stream.

        With ``conversation_id`` the history is the stored conversation's (the request's own
        ``history`` is ignored), the conversation's pending plan is superseded, and the
        finished turn is saved back to it. ``supersedes`` names a pending plan this message
        abandons (an implicit decline, for stateless front ends); an unknown id is ignored.

        Raises:
            ArxiuError: the request is refused before anything streams (``request.invalid``,
                ``ai.model_unknown``, ``ai.model_no_vision``, ...); nothing is changed then.
        """
        raw = dict(request)
        conversation = self._conversation(conversation_id) if conversation_id else None
        if conversation is not None:  # the latest exchanges that fit; the rest stays stored
            raw["history"] = convs.history_window(conversation["history"])
        checked = validate_request(raw, self.catalog, write_allowed=self.write_allowed)
        model = self.model(checked.entry)
        if conversation is not None:
            checked = convs.fit_window(checked)
            self.plans.supersede_conversation(conversation["id"])
        if supersedes is not None:
            self.plans.book.supersede_id(supersedes)
        self._run_count += 1
        key = conversation_id or f"run-{self._run_count}"
        previous = self._runs.get(key)
        if previous is not None:
            previous.set()
        stop_event = threading.Event()
        self._runs[key] = stop_event
        setup = RunSetup(
            request=checked,
            model=model,
            archive=self.archive,
            registry=self.registry,
            searcher=self.searcher,
            external_content=self.settings.external_content,
            lang=self.settings.lang,
            stop_event=stop_event,
            can_read_restricted=self.settings.can_read_restricted,
            tainted_history=convs.is_tainted(conversation) if conversation else False,
        )
        return self._stream(setup, conversation, key)

    async def _stream(
        self, setup: RunSetup, conversation: dict[str, Any] | None, key: str
    ) -> AsyncIterator[Event]:
        try:
            async for event in AgentRun(setup).events():
                if isinstance(event, FinalEvent):
                    try:
                        event = self._finish(event, setup.request, conversation)
                    except ArxiuError as error:  # e.g. the disk is full: still a terminal frame
                        yield ErrorEvent.from_error(error)
                        return
                yield event
        finally:
            if self._runs.get(key) is setup.stop_event:
                del self._runs[key]

    def _finish(
        self, final: FinalEvent, request: ChatRequest, conversation: dict[str, Any] | None
    ) -> FinalEvent:
        final = self.plans.propose(
            final,
            conversation_id=conversation["id"] if conversation else None,
            model_id=request.entry.id,
            egress=request.entry.egress,
        )
        if conversation is not None:
            conversation = self.archive.conversation(conversation["id"]) or conversation
            stored = conversation.get("history", [])  # whole; the run was sent a window of it
            conversation["history"] = convs.add_exchange(stored, final.history)
            conversation["model"] = request.entry.id
            conversation["transcript"] = [
                *conversation.get("transcript", []),
                convs.turn_record(request.question, final.to_dict()),
            ]
            if not conversation.get("title"):
                conversation["title"] = convs.make_title(request.question)
            self.archive.save_conversation(conversation)
        return final

    def stop(self, conversation_id: str | None = None) -> None:
        """Stop the run of one conversation (``None``: every run); the partial answer is kept."""
        for key, event in list(self._runs.items()):
            if conversation_id is None or key == conversation_id:
                event.set()

    # -- change plans ------------------------------------------------------------------------
    async def apply(
        self,
        plan: Any,
        plan_hash: Any,
        *,
        model_id: str = "",
        egress: str = "local",
        confirm_restricted: bool = False,
    ) -> ApplyReport:
        """Apply a confirmed plan outside the plan book (integrators holding the plan).

        A plan the book flags (a tainted run's, writing into an open section) still needs
        ``confirm_restricted``.

        Raises:
            ArxiuError: ``mcp.write_disabled``, ``mcp.plan_needs_confirmation``,
                ``mcp.plan_hash_mismatch`` or a validation error — the plan was refused as a
                whole and nothing was written.
        """
        if not self.write_allowed:
            raise write_disabled()
        flagged = isinstance(plan_hash, str) and self.plans.book.flagged(plan_hash)
        if flagged and not confirm_restricted:
            raise needs_second_confirmation()
        return await apply_plan(plan, plan_hash, self._apply_env(model_id, egress))

    async def resolve(
        self, pending_id: str, approved: bool, *, confirm_restricted: bool = False
    ) -> ApplyReport | None:
        """Apply (``approved``) or decline a plan of the plan book; only the first counts.

        A plan left ``applying`` by an apply that was killed resumes where it stopped.
        ``confirm_restricted`` is the second confirmation a plan flagged ``restricted_text``
        needs (a tainted run's plan writing into an open section).

        Returns:
            The apply report, or ``None`` for a decline.

        Raises:
            ArxiuError: ``mcp.plan_unknown``, ``mcp.plan_resolved``, ``mcp.write_disabled``,
                ``mcp.plan_needs_confirmation`` or the apply's refusal of the plan as a whole.
        """
        return await self.plans.resolve(
            pending_id,
            approved,
            self._apply_env,
            writes_on=self.write_allowed,
            confirm_restricted=confirm_restricted,
        )

    def plan(self, pending_id: str) -> PlanRecord | None:
        """A proposed plan with its status (``pending``, ``applying``, ``applied``,
        ``failed``, ``declined``, ``superseded``); ``None`` for an unknown id."""
        return self.plans.book.get(pending_id)

    def plan_record(self, pending_id: str) -> dict[str, Any] | None:
        """:meth:`plan` in its JSON form (for front ends that send it on)."""
        found = self.plans.book.get(pending_id)
        return found.to_dict() if found is not None else None

    def _apply_env(self, model_id: str, egress: str) -> ApplyContext:
        return ApplyContext(
            self.archive, self.registry, self.searcher, model_id, egress, self.settings.lang
        )

    # -- conversations -----------------------------------------------------------------------
    def new_conversation(self, title: str = "") -> dict[str, Any]:
        """Create and save an empty conversation; returns it (its ``id`` names it)."""
        conversation = convs.new_conversation(title)
        self.archive.save_conversation(conversation)
        return self._conversation(conversation["id"])

    def conversations(self) -> list[dict[str, Any]]:
        """Every conversation, most recent first: ``{id, title, model, updated_at}``."""
        keys = ("id", "title", "model", "created_at", "updated_at")
        return [{k: c.get(k) for k in keys} for c in self.archive.conversations()]

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        """One stored conversation (``conversation.unknown`` when there is none).

        Its ``pending_plan`` is the plan book's record of the latest plan proposed in it.
        """
        found = self._conversation(conversation_id)
        latest = self.plans.latest(conversation_id)
        found["pending_plan"] = latest.to_dict() if latest is not None else None
        return found

    def rename_conversation(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title."""
        conversation = self._conversation(conversation_id)
        conversation["title"] = " ".join(title.split())[: convs.TITLE_CHARS * 2]
        self.archive.save_conversation(conversation)

    def reset_conversation(self, conversation_id: str) -> None:
        """Forget a conversation's history; keeps its title and its latest plan's record.

        A pending plan is superseded (an implicit decline).
        """
        conversation = self._conversation(conversation_id)
        self.stop(conversation_id)
        self.plans.supersede_conversation(conversation_id)
        conversation.update(history=[], transcript=[])
        self.archive.save_conversation(conversation)

    def delete_conversation(self, conversation_id: str) -> None:
        """Delete a conversation (stopping its run, declining its pending plan)."""
        self.stop(conversation_id)
        self.plans.supersede_conversation(conversation_id)
        self.archive.delete_conversation(conversation_id)

    def export_markdown(self, conversation_id: str) -> str:
        """A conversation as Markdown."""
        return convs.export_markdown(self._conversation(conversation_id))

    def export_json(self, conversation_id: str) -> dict[str, Any]:
        """A conversation as a JSON document (its latest plan's record from the plan book)."""
        return convs.export_json(self.conversation(conversation_id))

    def _conversation(self, conversation_id: str) -> dict[str, Any]:
        found = self.archive.conversation(conversation_id)
        if found is None:
            raise ToolError(
                "conversation.unknown",
                "There is no conversation with that id.",
                category="input",
            )
        return found
