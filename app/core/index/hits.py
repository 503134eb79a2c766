"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from app.core.archive.model import RecordKey

SearchMode = Literal["hybrid", "dense", "lexical"]


@dataclass(frozen=True)
class SearchHit:
    """One ranked chunk: which record, where in it, and how well it matched."""

    key: RecordKey
    label: str
    snippet: str
    field_tipo: str
    lang: str
    score: float
    timecode: str | None = None
    page: str | None = None
    chunk_id: int | None = None
    record_langs: tuple[str, ...] = ()
    """The languages the record is written in (most of its text), e.g. ``("lg-cat",)``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (CLI ``--json`` and tool results)."""
        return {
            "section_tipo": self.key.section_tipo,
            "section_id": self.key.section_id,
            "label": self.label,
            "snippet": self.snippet,
            "field": self.field_tipo,
            "lang": self.lang,
            "record_langs": list(self.record_langs),
            "score": round(self.score, 6),
            "timecode": self.timecode,
            "page": self.page,
        }


@dataclass(frozen=True)
class SearchFilter:
    """Restrictions applied *inside* the search.

    ``exclude_restricted`` drops every chunk of a restricted section or record (runs on an
    external model); ``sections`` and ``records`` keep only those.
    """

    sections: tuple[str, ...] = ()
    records: tuple[RecordKey, ...] = ()
    exclude_restricted: bool = False


class Searcher(Protocol):
    """What the tools and the agent need from the index (implemented in ``app.core.index``)."""

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filter: SearchFilter | None = None,
        group_by_record: bool = False,
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` under ``filter`` (one per record with
        ``group_by_record``, each record ranked by how well its fields agree).

        The query's language is guessed from its words, and chunks and records written in it
        rank first. :meth:`app.core.index.Index.search` also takes ``lang`` (the language
        given rather than guessed).
        """
        ...
