"""``AssistantSession``: the one façade every front end calls. It keeps the runs and the models
(created lazily, cached per id); its state owners hold the rest: ``session.conversations`` (a
:class:`~app.core.agent.conversation_book.ConversationBook`) and ``session.plans`` (a
:class:`~app.core.agent.plan_resolution.PlanDesk`). A new run in a conversation stops the one
still running there and supersedes its pending plan. A run streams from its own loop thread
(:mod:`app.core.agent.run_thread`), so its work never holds the caller's loop."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, TypedDict

from app.core.agent.apply import ApplyContext
from app.core.agent.assistant_settings import AssistantSettings as AssistantSettings
from app.core.agent.conversation_book import ConversationBook
from app.core.agent.events import ErrorEvent, Event, FinalEvent, StartEvent
from app.core.agent.follow_ups import previous_records
from app.core.agent.loop import AgentRun, RunSetup
from app.core.agent.plan_book import LOCAL_PERSON
from app.core.agent.plan_resolution import PlanDesk
from app.core.agent.request import check_request
from app.core.agent.run_thread import RUNS
from app.core.archive.write_switch import writes_allowed
from app.core.errors import ArxiuError, log_bug
from app.core.models.stop_signal import StopSignal

if TYPE_CHECKING:
    from app.core.agent.request import ChatRequest, CheckedRequest
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher
    from app.core.models.base import ChatModel
    from app.core.models.catalog import Catalog, ModelEntry, PublicModel
    from app.core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

ModelFactory = Callable[["ModelEntry"], "ChatModel"]


class ModelListing(TypedDict):
    """What :meth:`AssistantSession.models` answers (the API's ``agent_models`` data)."""

    models: list[PublicModel]
    write_allowed: bool


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
        person: str = LOCAL_PERSON,
    ) -> None:
        """``person``: who proposes and resolves plans here (an API user's name; the local
        person for the CLI and the app)."""
        self.archive = archive
        self.searcher = searcher
        self.settings = settings or AssistantSettings()
        self._catalog: Catalog | ArxiuError | None = catalog
        self._registry = registry
        self._factory = model_factory
        self._models: dict[str, ChatModel] = {}
        self._runs: dict[str, StopSignal] = {}
        """Stop events of the runs in flight, by conversation id (``run-N`` when stateless)."""
        self._run_numbers = itertools.count(1)
        self.plans = PlanDesk(archive, self._apply_env, lambda: self.write_allowed, person)
        self.conversations = ConversationBook(archive, self.plans, self.stop)

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

    def reload_catalog(self) -> None:
        """Read ``models.json`` again on next use (a model was added or removed)."""
        self._catalog = None

    @property
    def registry(self) -> ToolRegistry:
        """The tool registry (built on first use)."""
        if self._registry is None:
            from app.core.tools.registry import build_registry

            self._registry = build_registry()
        return self._registry

    def models(self) -> ModelListing:
        """The secret-free catalog and whether write mode may be offered (raises the catalog's
        ``ai.model_catalog_invalid`` when it cannot be used)."""
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
        """Stop every run and release the models (on the loop their runs used)."""
        self.stop()
        for model in self._models.values():
            await (RUNS.call(model.aclose()) if RUNS.started else model.aclose())
        self._models.clear()

    def _apply_env(self, model_id: str, egress: str) -> ApplyContext:
        return ApplyContext(
            self.archive,
            self.registry,
            self.searcher,
            model_id,
            egress,
            self.settings.lang,
            actor=self._actor(),
            exclude_restricted=not self.settings.can_read_restricted,
        )

    def _actor(self) -> str:
        """Who applies, for the audit log: on a shared archive the archivist's server role
        (and the API user it applies for), on a folder archive the assistant."""
        role = self.archive.database_role()
        if role is None:
            return "assistant"
        return role if self.plans.person == LOCAL_PERSON else f"{role} for {self.plans.person}"

    # -- runs --------------------------------------------------------------------------------
    async def chat(
        self,
        request: ChatRequest,
        *,
        conversation_id: str | None = None,
        stored: bool = False,
        supersedes: str | None = None,
        history_owner: str | None = None,
    ) -> AsyncIterator[Event]:
        """Check ``request`` and return the run's event stream.

        A run of a stored conversation — ``conversation_id``'s, or with ``stored`` a new one,
        made once the request is accepted — names it on its ``start`` frame, is sent its
        history (the request's own ``history`` is ignored; the latest exchanges that fit the
        model are sent), supersedes its pending plan, and is saved back to it. ``supersedes``
        names a pending plan this message abandons (an implicit decline, for stateless front
        ends); an unknown id is ignored. ``history_owner`` (an API user's id) makes the
        request's own history that owner's stateless conversation: each entry's taint comes
        from the server's answer ledger, never from the client, and the finished exchange is
        added to the ledger.

        Raises:
            ArxiuError: the request is refused before anything streams (``request.invalid``,
                ``ai.model_unknown``, ``conversation.unknown``...); nothing is changed then.
        """
        conversation = await self.conversations.open(conversation_id)
        writes_on = await self.archive.db.aread(lambda _: self.write_allowed)
        checked = check_request(request, self.catalog, write_allowed=writes_on)
        model = self.model(checked.entry)
        if conversation is None and stored:
            conversation = await self.conversations.new()
        if conversation is not None:
            history = self.conversations.window(conversation, checked.entry)
            checked = dataclasses.replace(checked, history=history)
            await self.plans.supersede_conversation(conversation.id)
        elif history_owner is not None:
            judged = await self.conversations.judge_history(history_owner, checked.history)
            checked = dataclasses.replace(checked, history=judged)
        if supersedes is not None:
            await self.plans.supersede(supersedes)
        key = conversation.id if conversation else f"run-{next(self._run_numbers)}"
        self.stop(key)  # the run still going in this conversation
        stop_event = self._runs[key] = StopSignal()
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
            tainted_history=conversation.tainted if conversation else False,
            previous=previous_records(conversation, checked.history),
        )
        stream = self._stream(setup, conversation.id if conversation else None, key, history_owner)
        return RUNS.relay(stream)  # the run works on its own loop, never on the caller's

    async def _stream(
        self, setup: RunSetup, conversation_id: str | None, key: str, owner: str | None = None
    ) -> AsyncIterator[Event]:
        request = setup.request
        run = AgentRun(setup)
        waiting = contextlib.ExitStack()
        try:
            waiting.enter_context(self._person_waiting())  # indexing yields until the run ends
            async for event in run.events():
                if isinstance(event, StartEvent):  # the conversation it continues (or began)
                    event = dataclasses.replace(event, conversation_id=conversation_id)
                if isinstance(event, FinalEvent):
                    try:  # the plan into the book, the turn into the conversation
                        event = await self.plans.propose(
                            event,
                            conversation_id=conversation_id,
                            model_id=request.entry.id,
                            egress=request.entry.egress,
                        )
                        await self._keep(event, request, conversation_id, owner)
                    except ArxiuError as error:  # e.g. the disk is full: still a terminal frame
                        yield ErrorEvent.from_error(error)
                        return
                yield event
        except Exception:  # a bug ended the run: what streamed is kept, the bug goes on up
            await self._keep_partial(run, conversation_id, owner)
            raise
        finally:
            waiting.close()
            if self._runs.get(key) is setup.stop_event:
                del self._runs[key]

    def _person_waiting(self) -> contextlib.AbstractContextManager[None]:
        """The searcher's "a person is waiting" signal, held while a run streams (its search
        and its model turns then get the cores before background indexing)."""
        if self.searcher is None:
            return contextlib.nullcontext()
        from app.core.index.foreground import HoldsForeground  # the searcher's own package

        if isinstance(self.searcher, HoldsForeground):
            return self.searcher.person_waiting()
        return contextlib.nullcontext()

    async def _keep(
        self,
        final: FinalEvent,
        request: CheckedRequest,
        conversation_id: str | None,
        owner: str | None,
    ) -> None:
        """A finished turn into its conversation (or a stateless owner's answer ledger)."""
        if conversation_id is not None:
            await self.conversations.record(conversation_id, request, final)
        elif owner is not None:
            await self.conversations.record_exchange(owner, request.question, final)

    async def _keep_partial(
        self, run: AgentRun, conversation_id: str | None, owner: str | None
    ) -> None:
        """Keep what a run a bug ended streamed (the bug itself is raised on by the caller)."""
        try:
            await self._keep(run.partial(), run.request, conversation_id, owner)
        except ArxiuError as error:
            log.warning("the partial answer of a failed run was not kept: %s", error)
        except Exception as error:  # a second bug: logged; the first one is the one raised
            log_bug(log, error, "keeping a failed run's partial answer")

    def stop(self, conversation_id: str | None = None) -> None:
        """Stop the run of one conversation (``None``: every run); the partial answer is kept."""
        for key, event in list(self._runs.items()):
            if conversation_id is None or key == conversation_id:
                event.set()
