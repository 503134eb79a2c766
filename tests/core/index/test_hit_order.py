"""Sorting, filtering and grouping results by record: by date, language, section, years."""

from __future__ import annotations

import pytest

from app.core.archive import RecordKey
from app.core.errors import ArxiuError
from app.core.index.hit_order import RecordFilter, by_section, filter_hits, sort_hits
from app.core.index.record_hits import RecordHit


def _hit(tipo: str, sid: int, rank: int, date: str | None, *langs: str) -> RecordHit:
    section = {"oh1": "Oral history", "rsc197": "People", "numisdata4": "Coins"}[tipo]
    return RecordHit(
        RecordKey(tipo, sid), f"{tipo}/{sid}", section, 1.0 / rank, rank, (), langs, date
    )


HITS = [
    _hit("oh1", 4, 1, "1992-11-10", "lg-spa"),
    _hit("rsc197", 9, 2, "1931-07-30", "lg-spa", "lg-eng"),
    _hit("oh1", 1, 3, "1987-05-14", "lg-cat"),
    _hit("numisdata4", 3, 4, "-44", "lg-eng"),
    _hit("oh1", 2, 5, None, "lg-cat"),
    _hit("oh1", 7, 6, "1987-02-01", "lg-eng"),
]


def _ids(hits: list[RecordHit]) -> list[str]:
    return [str(h.key) for h in hits]


def test_sorting_by_date_puts_undated_records_last() -> None:
    assert _ids(sort_hits(HITS, "oldest")) == [
        "numisdata4/3",
        "rsc197/9",
        "oh1/7",
        "oh1/1",
        "oh1/4",
        "oh1/2",
    ]
    assert _ids(sort_hits(HITS, "newest")) == [
        "oh1/4",
        "oh1/1",
        "oh1/7",
        "rsc197/9",
        "numisdata4/3",
        "oh1/2",
    ]
    assert sort_hits(list(reversed(HITS)), "relevance") == HITS


def test_filters_by_section_language_and_years() -> None:
    assert _ids(filter_hits(HITS, RecordFilter(sections=("rsc197",)))) == ["rsc197/9"]
    assert _ids(filter_hits(HITS, RecordFilter(langs=("lg-spa",)))) == ["oh1/4", "rsc197/9"]
    years = RecordFilter(year_from=1980, year_to=1990)
    assert _ids(filter_hits(HITS, years)) == ["oh1/1", "oh1/7"]
    assert _ids(filter_hits(HITS, RecordFilter(year_to=0))) == ["numisdata4/3"]  # BC
    assert filter_hits(HITS, RecordFilter()) == HITS


def test_a_backwards_year_range_is_a_coded_error() -> None:
    with pytest.raises(ArxiuError) as caught:
        RecordFilter(year_from=2000, year_to=1900)
    assert caught.value.code == "index.bad_date_range" and caught.value.category == "input"
    with pytest.raises(ArxiuError) as bad:
        sort_hits(HITS, "alphabetical")  # type: ignore[arg-type]
    assert bad.value.code == "index.bad_sort"


def test_groups_follow_their_first_record_and_keep_the_order_inside() -> None:
    groups = by_section(sort_hits(HITS, "oldest"))
    assert [(g.section_tipo, g.label) for g in groups] == [
        ("numisdata4", "Coins"),
        ("rsc197", "People"),
        ("oh1", "Oral history"),
    ]
    assert _ids(list(groups[2].hits)) == ["oh1/7", "oh1/1", "oh1/4", "oh1/2"]
    keys = [h.key for g in by_section(HITS) for h in g.hits]
    assert sorted(keys) == sorted(h.key for h in HITS)  # every record once


def test_the_access_points_an_import_made_follow_the_descriptions() -> None:
    """The query "correspondencia sindical de Oregón" over the UW finding aids: seven subject
    headings ranked above the Oregon State Correspondence files, so the Subjects group came
    first; the descriptions now lead and the subjects (then names) follow in their own order, except
    when a heading is named as the query is."""

    def hit(tipo: str, sid: int, rank: int, exact: str | None = None) -> RecordHit:
        return RecordHit(RecordKey(tipo, sid), f"{tipo}/{sid}", tipo, 1.0 / rank, rank,
                         exact_name=exact)  # fmt: skip

    ranked = [hit("subject1", 91, 1), hit("subject1", 6, 2), hit("agent1", 4, 3),
              hit("ead1", 122, 4), hit("subject1", 10, 5), hit("ead1", 118, 6)]  # fmt: skip
    groups = by_section(ranked)
    assert [g.section_tipo for g in groups] == ["ead1", "subject1", "agent1"]
    assert [h.rank for h in groups[0].hits] == [4, 6]
    assert [h.rank for h in groups[1].hits] == [1, 2, 5]

    named = [hit("subject1", 2, 1, exact="Chemical warfare"), hit("ohms1", 1, 2)]
    assert [g.section_tipo for g in by_section(named)] == ["subject1", "ohms1"]
