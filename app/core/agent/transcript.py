"""What a run remembers: text-only history, taint, usage and the bounded transcript summary.

History is ``[{role, text}]`` (:class:`~app.core.agent.history_entry.HistoryEntry`) — earlier
tool traffic is never replayed. An assistant entry that a local model produced from restricted
content carries ``tainted: true``; when a conversation continues on an external model those
entries (and the question they answered) are withheld and the run says so. The transcript
summary is the run's audit view: JSON entries (``{turn, tool, ok, code}``, notices), as the
``final`` frame and the stored turn record carry them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.agent.history_entry import HistoryEntry, history_entry
from app.core.json_types import JsonObject
from app.core.models.base import Message, Usage

MAX_SUMMARY_ENTRIES = 100


def withhold_tainted(history: Sequence[HistoryEntry]) -> tuple[list[HistoryEntry], int]:
    """History without tainted entries (and the questions tainted answers answered); and how
    many. A question is tainted only when the server's record marks it (a client's copy of
    restricted text: see :mod:`~app.core.agent.history_taint`)."""
    kept: list[HistoryEntry] = []
    withheld = 0
    for entry in history:
        if entry.get("tainted"):
            withheld += 1
            if entry.get("role") == "assistant" and kept and kept[-1].get("role") == "user":
                kept.pop()
            continue
        kept.append(entry)
    return kept, withheld


def history_messages(history: Sequence[HistoryEntry]) -> list[Message]:
    """History entries as chat messages (text only)."""
    return [Message(role=entry["role"], content=str(entry["text"])) for entry in history]


@dataclass
class Transcript:
    """The running record of one run."""

    answer_parts: list[str] = field(default_factory=list)
    summary: list[JsonObject] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    turns: int = 0
    core_spans: list[tuple[int, int]] = field(default_factory=list)
    """Where the answer holds the core's own text (notices, a sources list, a composed answer),
    not the model's: its claims are not checked."""

    @property
    def answer(self) -> str:
        """The visible answer so far."""
        return "".join(self.answer_parts)

    def add_text(self, text: str, *, by_core: bool = False) -> None:
        """Append visible answer text (``by_core``: the core's words, not the model's)."""
        if by_core:
            start = sum(len(part) for part in self.answer_parts)
            self.core_spans.append((start, start + len(text)))
        self.answer_parts.append(text)

    def add_usage(self, usage: Usage) -> None:
        """Add one model call's token counts."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_tokens += usage.cached_tokens

    def note(self, entry: JsonObject) -> None:
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
        self, before: Sequence[HistoryEntry], question: str, *, tainted: bool
    ) -> list[HistoryEntry]:
        """``before`` plus this exchange, ready to resend as the next request's history."""
        answer = history_entry("assistant", self.answer, tainted=tainted)
        return [*before, history_entry("user", question), answer]
