"""The conversations store: every conversation of an archive, typed, by id.

It owns titles, renaming, resetting, deleting and exporting, and what a run of a conversation
is sent: the latest exchanges that fit the model's window (:meth:`ConversationBook.window`),
while the whole history and transcript stay stored (:meth:`ConversationBook.record`). A
conversation's latest plan is read from the plan book, never stored with it.

A stateless front end's conversation (an API user's: the client keeps the history) is the
owner's answer ledger: :meth:`ConversationBook.judge_history` marks the history a client
sent from what the server answered (:mod:`~app.core.agent.history_taint`), and
:meth:`ConversationBook.record_exchange` adds each finished run to it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.agent import conversations as convs
from app.core.agent import history_taint
from app.core.agent.conversation_types import Conversation, ConversationSummary
from app.core.agent.history_entry import HistoryEntry
from app.core.archive import answer_ledger
from app.core.errors import ToolError
from app.core.json_types import JsonObject

if TYPE_CHECKING:
    from app.core.agent.events import FinalEvent
    from app.core.agent.plan_resolution import PlanDesk
    from app.core.agent.request import CheckedRequest
    from app.core.archive.store import Archive
    from app.core.models.catalog import ModelEntry

Stopper = Callable[[str], None]
"""Stops the run in flight in a conversation (by id)."""


def unknown_conversation() -> ToolError:
    """The refusal of a conversation id the archive does not hold."""
    return ToolError(
        "conversation.unknown",
        "There is no conversation with that id.",
        hint="Open the conversations list to pick one that exists.",
        category="input",
    )


class ConversationBook:
    """The conversations of one session's archive.

    Every method awaits the archive on its read or writer thread (no blocking twin), so the
    event loop that calls it (the GUI's) goes on meanwhile.
    """

    def __init__(self, archive: Archive, plans: PlanDesk, stop: Stopper) -> None:
        self.archive = archive
        self._plans = plans
        self._stop = stop

    # -- reading -----------------------------------------------------------------------------
    async def summaries(self) -> list[ConversationSummary]:
        """Every conversation, most recently updated first."""
        rows = await self.archive.conversations()
        return [Conversation.from_dict(row).summary for row in rows]

    async def get(self, conversation_id: str) -> Conversation:
        """One conversation with its latest plan's record from the plan book.

        Raises:
            ToolError: ``conversation.unknown``.
        """
        stored = await self.stored(conversation_id)
        latest = await self._plans.latest(conversation_id)
        return dataclasses.replace(stored, pending_plan=latest)

    async def stored(self, conversation_id: str) -> Conversation:
        """One conversation as stored (no plan record).

        Raises:
            ToolError: ``conversation.unknown``.
        """
        row = await self.archive.conversation(conversation_id)
        if row is None:
            raise unknown_conversation()
        return Conversation.from_dict({**row, "pending_plan": None})

    async def open(self, conversation_id: str | None) -> Conversation | None:
        """The stored conversation a run continues (``None`` for a run outside any
        conversation).

        Raises:
            ToolError: ``conversation.unknown``.
        """
        return await self.stored(conversation_id) if conversation_id is not None else None

    # -- changing ----------------------------------------------------------------------------
    async def new(self, title: str = "") -> Conversation:
        """Create and save an empty conversation; returns it as stored."""
        conversation = Conversation.new(title)
        await self.save(conversation)
        return await self.stored(conversation.id)

    async def save(self, conversation: Conversation) -> None:
        """Insert or update ``conversation`` (its plan record is not stored)."""
        await self.archive.save_conversation(conversation.stored())

    async def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title (spaces folded, at most twice a made title's size)."""
        clean = " ".join(title.split())[: convs.TITLE_CHARS * 2]
        stored = await self.stored(conversation_id)
        await self.save(dataclasses.replace(stored, title=clean))

    async def reset(self, conversation_id: str) -> None:
        """Forget a conversation's history; keeps its title and its latest plan's record.

        Its run is stopped and a pending plan is superseded (an implicit decline).
        """
        conversation = await self.stored(conversation_id)
        self._stop(conversation_id)
        await self._plans.supersede_conversation(conversation_id)
        await self.save(dataclasses.replace(conversation, history=(), transcript=()))

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation (stopping its run, superseding its pending plan)."""
        self._stop(conversation_id)
        await self._plans.supersede_conversation(conversation_id)
        await self.archive.delete_conversation(conversation_id)

    async def export_markdown(self, conversation_id: str, lang: str = "lg-eng") -> str:
        """A conversation as Markdown, its headings in ``lang`` (an archive language code)."""
        return convs.export_markdown(await self.stored(conversation_id), lang)

    async def export_json(self, conversation_id: str) -> JsonObject:
        """A conversation as a JSON document (its latest plan's record from the plan book)."""
        return convs.export_json(await self.get(conversation_id))

    # -- runs --------------------------------------------------------------------------------
    @staticmethod
    def window(conversation: Conversation, model: ModelEntry) -> tuple[HistoryEntry, ...]:
        """What a run of ``conversation`` on ``model`` is sent: the latest whole exchanges
        that fit the request's limits and the model's window (the one place a stored history
        is windowed)."""
        return tuple(convs.history_window(conversation.history, model))

    async def record(
        self, conversation_id: str, request: CheckedRequest, final: FinalEvent
    ) -> None:
        """Store a finished run: its exchange appended to the whole history, its turn record to
        the transcript, the model used, and a title from the first question.

        The stored conversation is read on a read thread and written on the writer thread, so
        the event loop (the GUI's) goes on while a long history is decoded and saved.
        """
        found = await self.archive.conversation(conversation_id)
        if found is None:  # deleted while the run went on: nothing to keep it in
            return
        conversation = Conversation.from_dict({**found, "pending_plan": None})
        await self.save(
            dataclasses.replace(
                conversation,
                history=tuple(convs.add_exchange(conversation.history, final.history)),
                transcript=(
                    *conversation.transcript,
                    convs.turn_record(request.question, final),
                ),
                model=request.entry.id,
                title=conversation.title or convs.make_title(request.question),
            )
        )

    # -- stateless conversations: the answer ledger ------------------------------------------
    async def judge_history(
        self, owner: str, history: tuple[HistoryEntry, ...]
    ) -> tuple[HistoryEntry, ...]:
        """The history a client of ``owner`` sent, each entry marked ``tainted`` where the
        server's own record says it may hold restricted text (the client's flags are not
        trusted; see :func:`~app.core.agent.history_taint.judge`)."""
        if not history:
            return history
        found = history_taint.probe(history)
        view = await self.archive.db.aread(
            lambda conn: answer_ledger.look_up(conn, owner, found.digests, found.all_shingles)
        )
        marked, _count = history_taint.judge(history, found, view)
        return tuple(marked)

    async def record_exchange(self, owner: str, question: str, final: FinalEvent) -> None:
        """Add a finished run's question and answer (with its taint) to ``owner``'s ledger."""
        answer = final.history[-1]["text"] if final.history else final.answer
        rows, pieces = history_taint.exchange_rows(question, answer, bool(final.tainted))
        await self.archive.db.awrite(lambda conn: answer_ledger.record(conn, owner, rows, pieces))
