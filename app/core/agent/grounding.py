"""Grounded answers for models that cannot plan tool calls (the small bundled default): helpers.

The grounded run itself lives in :mod:`app.core.agent.loop` (``AgentRun``), where its search is
one ordinary, gated tool step: it searches ``dedalo_semantic_search`` on the question, gives the
model the hits and asks it to answer from them. The relevant records among the hits (see
:mod:`app.core.agent.sources`: a cut-off relative to the best hit, lead sections, one entry per
record) are cited in a "Sources" list appended to the answer, whatever the model wrote — only
records the search returned to the model through the egress gate, so every source is a verified
citation; the model is shown only those records' hits. With no hits the model is not asked at
all: the answer says that the archive has nothing on it, rather than letting a small model
invent something.

This module holds the pieces that need no run: the search call, the sources, the messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.core.agent.history_entry import HistoryEntry
from app.core.agent.prompts import citation, grounded_turn, sources_block, system_prompt
from app.core.agent.sources import Source, SourceHit, hits_of, select_sources
from app.core.agent.transcript import history_messages
from app.core.archive.hierarchy import has_contents
from app.core.archive.model import RecordKey
from app.core.json_types import JsonObject
from app.core.models.base import Message, ToolCall

if TYPE_CHECKING:
    from app.core.agent.citations import ReturnedRecords
    from app.core.agent.request import CheckedRequest, RecordContext
    from app.core.archive.store import Archive
    from app.core.tools.base import ToolResult

SEARCH_TOOL = "dedalo_semantic_search"
SEARCH_CALL_ID = "call_search_1"
SEARCH_K = 8
MAX_ANSWER_TOKENS = 256
NOTHING_FOUND = "I found no records about this in the archive."


def search_call(question: str, within: RecordKey | None = None) -> ToolCall:
    """The grounded run's one tool call: a semantic search on the question (``within``: kept
    to that record and every record under it)."""
    args: JsonObject = {"query": question, "k": SEARCH_K}
    if within is not None:
        args["within"] = str(within)
    return ToolCall(SEARCH_CALL_ID, SEARCH_TOOL, args)


def asked_within(archive: Archive, context: RecordContext | None) -> RecordKey | None:
    """The record asked about when it has contents (a fonds, a series: "Ask about this
    record" on it), to which the grounded search is kept with everything under it; ``None``
    for a record without contents (the whole archive is searched)."""
    if context is None:
        return None
    key = RecordKey(context.section_tipo, context.section_id)
    return key if has_contents(archive, key) else None


def grounded_sources(
    result: ToolResult, returned: ReturnedRecords, archive: Archive, lang: str
) -> list[Source]:
    """The records to cite: the relevant hits of ``result`` whose records the gate let through
    (``returned``), labelled from the archive where their hits carry no label."""
    sources = [
        source
        for source in select_sources(hits_of(result.data) if result.ok else [])
        if _key(source) in returned
    ]
    for source in sources:
        if source.needs_label and isinstance(source.section_id, int):
            key = RecordKey(source.section_tipo, source.section_id)
            source.record_label = archive.record_label(key, lang)
    return sources


def no_sources_answer(shown: ToolResult) -> str:
    """The answer when nothing is cited: nothing found, or why the search failed (``shown``
    is the result as the run's model may see it)."""
    return NOTHING_FOUND if shown.ok else f"I could not search the archive: {shown.message}"


def shown_hits(sources: Sequence[Source]) -> list[SourceHit]:
    """The hits the model answers from: those of the cited records, labelled alike."""
    return [hit.labelled(source.label) for source in sources for hit in source.hits][:SEARCH_K]


def grounded_messages(
    request: CheckedRequest,
    history: Sequence[HistoryEntry],
    sources: Sequence[Source],
    context: str | None,
) -> list[Message]:
    """The one model turn of a grounded run: answer ``request`` from the sources' hits."""
    return [
        Message("system", system_prompt(request.mode, grounded=True)),
        *history_messages(history),
        Message(
            "user",
            grounded_turn(request.question, shown_hits(sources), context),
            images=request.images,
        ),
    ]


def sources_text(sources: Sequence[Source]) -> str:
    """The "Sources" list appended to a grounded answer."""
    return sources_block([citation(source) for source in sources])


def _key(source: Source) -> RecordKey | None:
    """The record a source names (``None`` for an id that is not a number)."""
    sid = source.section_id
    if isinstance(sid, int) and not isinstance(sid, bool):
        return RecordKey(source.section_tipo, sid)
    if isinstance(sid, str) and sid.isdigit():
        return RecordKey(source.section_tipo, int(sid))
    return None
