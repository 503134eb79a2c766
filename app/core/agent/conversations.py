"""Persisted conversations: titles, the stored turn record, the history window sent to the
model, export to Markdown and JSON.

A conversation stores its whole history; a run is sent only the latest exchanges that fit the
request's limits and the model's context window (:func:`history_window`). Taint is read from
the stored conversation (:func:`is_tainted`), so an exchange trimmed out of the window still
taints the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.core.agent.answer_citations import answer_citations, answer_claims, exported_answer
from app.core.agent.conversation_types import Conversation, TurnRecord
from app.core.agent.export_words import export_words
from app.core.agent.history_entry import HistoryEntry
from app.core.agent.request import MAX_HISTORY_BYTES, MAX_HISTORY_ENTRIES
from app.core.json_types import JsonObject

if TYPE_CHECKING:
    from app.core.agent.events import FinalEvent
    from app.core.models.catalog import ModelEntry

TITLE_CHARS = 60
EXPORT_FORMAT = "arxiu.conversation/1"
LOCAL_WINDOW_TOKENS = 8192
"""A local model's context window when its entry names none (the loader's own cap)."""
CHARS_PER_TOKEN = 3
"""A cautious estimate of characters per token (short words, Catalan and Spanish)."""
HISTORY_SHARE = 2
"""The history may use 1/HISTORY_SHARE of what the window leaves after the reply."""


def make_title(question: str) -> str:
    """A short title from the first question: its first line, cut at a word boundary."""
    line = next((ln for ln in question.strip().splitlines() if ln.strip()), "").strip()
    text = " ".join(line.split()).rstrip(" ?!.:;,")
    if len(text) <= TITLE_CHARS:
        return text or "New conversation"
    cut = text[: TITLE_CHARS - 1].rsplit(" ", 1)[0]
    return (cut or text[: TITLE_CHARS - 1]) + "…"


def history_bytes(model: ModelEntry | None) -> int:
    """The most bytes of history (as JSON) a run on ``model`` is sent.

    The request's own limit; for a model whose window is known (its ``context_size``, or the
    local loader's cap), no more than half of what the window leaves after the reply.
    """
    if model is None:
        return MAX_HISTORY_BYTES
    window = model.context_size or (LOCAL_WINDOW_TOKENS if model.provider == "local" else None)
    if window is None:
        return MAX_HISTORY_BYTES
    room = max(0, window - model.max_tokens) * CHARS_PER_TOKEN // HISTORY_SHARE
    return min(MAX_HISTORY_BYTES, room)


def history_window(
    history: Sequence[HistoryEntry], model: ModelEntry | None = None
) -> list[HistoryEntry]:
    """The latest whole exchanges of ``history`` that fit a request and ``model``'s window.

    At most :data:`~app.core.agent.request.MAX_HISTORY_ENTRIES` entries and
    :func:`history_bytes` bytes; the window starts at a question, so an answer is never sent
    without the question it answered. The stored history itself is not changed.
    """
    budget = history_bytes(model)
    size = 2  # the JSON list's brackets
    start = len(history)
    for number in range(len(history) - 1, -1, -1):
        entry = history[number]
        size += len(json.dumps(entry, ensure_ascii=False).encode("utf-8")) + 2
        if len(history) - number > MAX_HISTORY_ENTRIES or size > budget:
            break
        if entry.get("role") == "user":
            start = number
    return [entry.copy() for entry in history[start:]]


def add_exchange(
    stored: Sequence[HistoryEntry], sent: Sequence[HistoryEntry]
) -> list[HistoryEntry]:
    """The stored history with this run's exchange (the last question and answer of ``sent``,
    the window the run was given plus its exchange) appended: nothing trimmed is lost."""
    return [*stored, *sent[-2:]]


def turn_record(question: str, final: FinalEvent) -> TurnRecord:
    """The transcript entry stored for one finished run."""
    return TurnRecord(
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        question=question,
        answer=final.answer,
        stop=final.stop,
        model=final.model,
        turns=final.turns,
        usage=dict(final.usage),
        summary=list(final.transcript_summary),
        change_plan=final.change_plan.plan if final.change_plan else None,
        citations=final.citations,
        tainted=bool(final.tainted),
        claims=final.claims,
    )


def is_tainted(conversation: Conversation) -> bool:
    """Whether any answer of the conversation drew on restricted records (see
    :attr:`Conversation.tainted <app.core.agent.conversation_types.Conversation.tainted>`)."""
    return conversation.tainted


def export_json(conversation: Conversation) -> JsonObject:
    """The conversation as a self-describing JSON document."""
    return {"format": EXPORT_FORMAT, **conversation.to_dict()}


def export_markdown(conversation: Conversation, lang: str = "lg-eng") -> str:
    """The conversation as Markdown: a heading, then each question and answer, its citations
    marked ✓ or ⚠ as its run checked them (:mod:`~app.core.agent.answer_citations`); the
    headings and notes in ``lang``, the UI's archive language (:mod:`.export_words`)."""
    words = export_words(lang)
    lines = [f"# {conversation.title or words.untitled}", ""]
    if conversation.model:
        lines += [f"*{words.model}:* `{conversation.model}`", ""]
    checks = zip(answer_citations(conversation), answer_claims(conversation), strict=True)
    for entry, (citations, claims) in zip(conversation.history, checks, strict=True):
        text = str(entry.get("text", ""))
        if entry.get("role") == "user":
            lines += [f"## {words.you}", "", text.rstrip(), ""]
        else:
            answer = exported_answer(text, citations, words.unverified, claims)
            lines += [f"## {words.assistant}", "", *answer, ""]
    for turn in conversation.transcript:
        plan = turn.change_plan
        if plan:
            lines += [f"### {words.change_plan}: {plan.summary}", ""]
            lines += [f"- `{op.op_id}` {op.tool}: {op.summary}" for op in plan.ops]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
