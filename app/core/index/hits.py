"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired, Protocol, TypedDict

from app.core.archive.model import RecordKey

SearchMode = Literal["hybrid", "dense", "lexical"]


class ViaDict(TypedDict):
    """:class:`Via`'s JSON form."""

    section_tipo: str
    section_id: int
    label: str
    field: str


class HitDict(TypedDict):
    """:class:`SearchHit`'s JSON form (CLI ``--json`` and tool results)."""

    section_tipo: str
    section_id: int
    label: str
    snippet: str
    field: str
    lang: str
    record_langs: list[str]
    score: float
    timecode: str | None
    page: str | None
    via: NotRequired[ViaDict]


@dataclass(frozen=True)
class Via:
    """The heading that brought a record into a search (:mod:`app.core.index.heading_links`):
    the record links to ``key`` (a subject, a name, a series titled ``label``) in its field
    ``field_tipo``, and the heading matched the query better than anything the record says."""

    key: RecordKey
    label: str
    field_tipo: str

    def to_dict(self) -> ViaDict:
        """JSON form."""
        return {
            "section_tipo": self.key.section_tipo,
            "section_id": self.key.section_id,
            "label": self.label,
            "field": self.field_tipo,
        }


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
    via: Via | None = None
    """The heading the record was found through, when not through its own words."""

    def to_dict(self) -> HitDict:
        """JSON form (CLI ``--json`` and tool results; ``via`` only when there is one)."""
        out: HitDict = {
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
        if self.via is not None:
            out["via"] = self.via.to_dict()
        return out


@dataclass(frozen=True)
class SearchFilter:
    """Restrictions applied *inside* the search.

    ``exclude_restricted`` drops every chunk of a restricted section or record (runs on an
    external model); ``sections`` and ``records`` keep only those.
    """

    sections: tuple[str, ...] = ()
    records: tuple[RecordKey, ...] = ()
    exclude_restricted: bool = False

    def lets_in(self, key: RecordKey) -> bool:
        """Whether the sections and records let ``key`` in (restriction is read live, by
        the engine)."""
        if self.sections and key.section_tipo not in self.sections:
            return False
        return not self.records or key in self.records


class Searcher(Protocol):
    """What the tools and the agent need from the index.

    Implemented by :class:`app.core.index.Index` and the
    :class:`~app.core.index.search.SearchEngine` it delegates to; mypy checks both (the
    ``Index.engine`` attribute is typed ``Searcher``, and ``Index`` is handed on as one by
    the API context and the desktop app's ``Services``).
    """

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filter: SearchFilter | None = None,
        group_by_record: bool = False,
        lang: str | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` under ``filter`` (one per record with
        ``group_by_record``, each record ranked by how well its fields agree).

        ``lang`` is the query's language (``lg-cat``…); by default it is guessed from the
        query's words, and chunks and records written in it rank first; ``lg-nolan`` ranks
        without any language preference.
        """
        ...
