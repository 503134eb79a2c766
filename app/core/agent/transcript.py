"""What a run remembers: text-only history, taint, usage and the bounded transcript summary.

History is ``[{role, text}]`` — earlier tool traffic is never replayed. An assistant entry that
a local model produced from restricted content carries ``tainted: true``; when a conversation
continues on an external model those entries (and the question they answered) are withheld
and the run says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.models.base import Message, Usage

MAX_SUMMARY_ENTRIES = 100


def withhold_tainted(history: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """History without tainted entries (and the questions tainted answers answered); and how
    many. A question is tainted only when the server's record marks it (a client's copy of
    restricted text: see :mod:`~app.core.agent.history_taint`)."""
    kept: list[dict[str, Any]] = []
    withheld = 0
    for entry in history:
        if entry.get("tainted"):
            withheld += 1
            if entry.get("role") == "assistant" and kept and kept[-1].get("role") == "user":
                kept.pop()
            continue
        kept.append(entry)
    return kept, withheld


def history_messages(history: Sequence[dict[str, Any]]) -> list[Message]:
    """History entries as chat messages (text only)."""
    return [Message(role=entry["role"], content=str(entry["text"])) for entry in history]


@dataclass
class Transcript:
    """The running record of one run."""

    answer_parts: list[str] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    turns: int = 0

    @property
    def answer(self) -> str:
        """The visible answer so far."""
        return "".join(self.answer_parts)

    def add_text(self, text: str) -> None:
        """Append visible answer text."""
        self.answer_parts.append(text)

    def add_usage(self, usage: Usage) -> None:
        """Add one model call's token counts."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_tokens += usage.cached_tokens

    def note(self, entry: dict[str, Any]) -> None:
        """Append an entry to the bounded per-turn audit view."""
        if len(self.summary) < MAX_SUMMARY_ENTRIES:
            self.summary.append({"turn": self.turns, **entry})

    def usage(self) -> dict[str, int]:
        """Token totals for the ``final`` frame."""
        out = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.cached_tokens:
            out["cached_tokens"] = self.cached_tokens
        return out

    def history(
        self, before: Sequence[dict[str, Any]], question: str, *, tainted: bool
    ) -> list[dict[str, Any]]:
        """``before`` plus this exchange, ready to resend as the next request's history."""
        answer: dict[str, Any] = {"role": "assistant", "text": self.answer}
        if tainted:
            answer["tainted"] = True
        return [*before, {"role": "user", "text": question}, answer]
