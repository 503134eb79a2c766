"""Persisted conversations: titles, the stored turn record, export to Markdown and JSON."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

TITLE_CHARS = 60
EXPORT_FORMAT = "arxiu.conversation/1"


def new_conversation(title: str = "", model: str | None = None) -> dict[str, Any]:
    """A new, empty conversation record (not yet saved)."""
    return {
        "id": uuid.uuid4().hex,
        "title": title,
        "model": model,
        "history": [],
        "transcript": [],
        "pending_plan": None,
    }


def make_title(question: str) -> str:
    """A short title from the first question: its first line, cut at a word boundary."""
    line = next((ln for ln in question.strip().splitlines() if ln.strip()), "").strip()
    text = " ".join(line.split()).rstrip(" ?!.:;,")
    if len(text) <= TITLE_CHARS:
        return text or "New conversation"
    cut = text[: TITLE_CHARS - 1].rsplit(" ", 1)[0]
    return (cut or text[: TITLE_CHARS - 1]) + "…"


def turn_record(question: str, final: dict[str, Any]) -> dict[str, Any]:
    """The transcript entry stored for one finished run."""
    return {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "question": question,
        "answer": final["answer"],
        "stop": final["stop"],
        "model": final["model"],
        "turns": final["turns"],
        "usage": final["usage"],
        "summary": final["transcript_summary"],
        "change_plan": final["change_plan"],
        "citations": final.get("citations", []),
        "tainted": bool(final.get("tainted")),
    }


def is_tainted(conversation: dict[str, Any]) -> bool:
    """Whether any answer of the conversation drew on restricted records.

    A conversation's taint never drops: it is read from every stored turn and history entry,
    so a later untainted answer cannot clear it (only a reset, which forgets the text, does).
    """
    turns = conversation.get("transcript") or []
    entries = conversation.get("history") or []
    return any(isinstance(t, dict) and t.get("tainted") for t in turns) or any(
        isinstance(e, dict) and e.get("tainted") for e in entries
    )


def export_json(conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation as a self-describing JSON document."""
    return {
        "format": EXPORT_FORMAT,
        "id": conversation["id"],
        "title": conversation.get("title", ""),
        "model": conversation.get("model"),
        "created_at": conversation.get("created_at"),
        "updated_at": conversation.get("updated_at"),
        "history": conversation.get("history", []),
        "transcript": conversation.get("transcript", []),
        "pending_plan": conversation.get("pending_plan"),
    }


def export_markdown(conversation: dict[str, Any]) -> str:
    """The conversation as Markdown: a heading, then each question and answer."""
    lines = [f"# {conversation.get('title') or 'Conversation'}", ""]
    if conversation.get("model"):
        lines += [f"*Model:* `{conversation['model']}`", ""]
    for entry in conversation.get("history", []):
        who = "You" if entry.get("role") == "user" else "Assistant"
        lines += [f"## {who}", "", str(entry.get("text", "")).rstrip(), ""]
    for turn in conversation.get("transcript", []):
        plan = turn.get("change_plan")
        if plan:
            lines += [f"### Change plan: {plan.get('summary', '')}", ""]
            lines += [
                f"- `{op['op_id']}` {op['tool']}: {op.get('summary', '')}" for op in plan["ops"]
            ]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
