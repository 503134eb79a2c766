"""Filtering, sorting and grouping results by record (:class:`~app.core.index.record_hits.
RecordHit`), the same in the results view and in ``arxiu search``.

* :func:`filter_hits` keeps the records of some sections, written in some languages, or dated
  within a range of years (a range leaves out the records without a date);
* :func:`sort_hits` orders them by relevance (an exact title first, then the ranking) or by
  date, oldest or newest first (records without a date last);
* :func:`by_section` groups them by section, each section where its first record is (the
  access points an import made after the sections that describe), keeping the order inside
  each group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from app.core.archive.access_points import AUTHORITY_SECTIONS
from app.core.errors import IndexError_
from app.core.index.record_hits import RecordHit
from app.core.phrases import Phrase

SortOrder = Literal["relevance", "oldest", "newest"]
SORT_ORDERS: tuple[SortOrder, ...] = ("relevance", "oldest", "newest")


@dataclass(frozen=True)
class RecordFilter:
    """What a person narrowed the results to (empty: everything).

    ``langs`` are Dédalo codes (``lg-cat``); ``year_from`` and ``year_to`` are inclusive.
    """

    sections: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    year_from: int | None = None
    year_to: int | None = None

    def __post_init__(self) -> None:
        if (
            self.year_from is not None
            and self.year_to is not None
            and self.year_from > self.year_to
        ):
            raise IndexError_(
                "index.bad_date_range",
                Phrase.of(
                    "The date range starts after it ends ({start} > {end}).",
                    start=self.year_from,
                    end=self.year_to,
                ),
                hint="Give the earlier year first.",
                category="input",
            )

    def keeps(self, hit: RecordHit) -> bool:
        """Whether ``hit`` passes every restriction."""
        if self.sections and hit.key.section_tipo not in self.sections:
            return False
        if self.langs and not set(self.langs) & set(hit.langs):
            return False
        if self.year_from is None and self.year_to is None:
            return True
        year = hit.year
        if year is None:
            return False
        low = self.year_from if self.year_from is not None else year
        high = self.year_to if self.year_to is not None else year
        return low <= year <= high


def filter_hits(hits: Sequence[RecordHit], flt: RecordFilter) -> list[RecordHit]:
    """The hits ``flt`` keeps, in their order."""
    return [hit for hit in hits if flt.keeps(hit)]


def sort_hits(hits: Sequence[RecordHit], order: SortOrder = "relevance") -> list[RecordHit]:
    """``hits`` by relevance (their rank) or by date; undated records last, by rank."""
    if order not in SORT_ORDERS:
        raise IndexError_(
            "index.bad_sort",
            Phrase.of("Unknown sort order {order!r}.", order=order),
            hint="Use relevance, oldest or newest.",
            category="input",
        )
    by_rank = sorted(hits, key=lambda h: h.rank)
    if order == "relevance":
        return by_rank
    dated = [h for h in by_rank if h.year is not None]
    undated = [h for h in by_rank if h.year is None]
    dated.sort(key=lambda h: (h.year or 0, (h.date or "").lstrip("-")), reverse=order == "newest")
    return dated + undated


@dataclass(frozen=True)
class SectionGroup:
    """The results of one section, in the order shown."""

    section_tipo: str
    label: str
    hits: tuple[RecordHit, ...]


def by_section(hits: Sequence[RecordHit]) -> list[SectionGroup]:
    """``hits`` grouped by section: sections in the order of their first hit, except that the
    access points an import made (its names, places and subjects:
    :data:`~app.core.archive.access_points.AUTHORITY_SECTIONS`) come after the
    sections that describe, unless one of them holds a record named as the query is. A
    heading that matches outranks the descriptions it heads, even halved
    (:mod:`app.core.index.headings`): "correspondencia sindical de Oregón" over the UW finding
    aids showed seven subjects above the six Oregon State Correspondence files."""
    groups: dict[str, list[RecordHit]] = {}
    for hit in hits:
        groups.setdefault(hit.key.section_tipo, []).append(hit)
    found = [
        SectionGroup(tipo, members[0].section_label, tuple(members))
        for tipo, members in groups.items()
    ]
    return sorted(found, key=_after_descriptions)


def _after_descriptions(group: SectionGroup) -> bool:
    """Whether ``group`` goes after the others (:func:`by_section`; the sort keeps order)."""
    return group.section_tipo in AUTHORITY_SECTIONS and not any(hit.exact for hit in group.hits)
