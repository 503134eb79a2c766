"""A heading that matches brings the records that link to it, inside the search's filters, on
both engines."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from app.core.archive import Archive, Field, RecordKey, Section
from app.core.index import HashingEmbedder, Index, heading_links
from app.core.index.hits import SearchFilter
from app.core.index.opening import open_index
from app.core.index.storage import ChunkRow


def _row(cid: int, key: RecordKey) -> ChunkRow:
    return ChunkRow(cid, key, "f", "lg-eng", str(key), str(key), None, None)


HEADING = RecordKey("subj", 1)
OTHER_HEADING = RecordKey("subj", 2)
LETTER = RecordKey("doc", 1)
DIARY = RecordKey("doc", 2)


def test_a_linked_record_gets_a_share_of_the_headings_score() -> None:
    rows = {1: _row(1, HEADING), 2: _row(2, DIARY)}
    ranked = [(1, 1.0), (2, 0.3)]
    best = heading_links.best_headings(ranked, rows, {HEADING})
    assert best == {HEADING: 1.0}

    links = {HEADING: [(LETTER, 10), (DIARY, 20), (OTHER_HEADING, 30)]}
    counts = {HEADING: 1}  # (as if the filters had left one of them)
    carry = heading_links.carried(ranked, rows, best, links, {HEADING, OTHER_HEADING}, counts)

    assert carry.scores == {LETTER: 0.5, DIARY: 0.5}  # a heading linked to it gets nothing
    assert carry.chunks == {LETTER: 10, DIARY: 2}  # the diary keeps the chunk that ranked
    rows[10] = _row(10, LETTER)
    assert heading_links.raised(ranked, rows, carry) == [(1, 1.0), (2, 0.5), (10, 0.5)]


def test_a_heading_many_records_link_to_gives_each_less() -> None:
    rows = {1: _row(1, HEADING)}
    many = [(RecordKey("doc", n), 100 + n) for n in range(1, 5)]
    best = heading_links.best_headings([(1, 1.0)], rows, {HEADING})
    carry = heading_links.carried([(1, 1.0)], rows, best, {HEADING: many}, {HEADING})
    assert set(carry.scores.values()) == {0.25}  # 0.5 over the square root of 4


def test_a_record_ranked_higher_keeps_its_own_score() -> None:
    rows = {1: _row(1, DIARY), 2: _row(2, HEADING)}
    ranked = [(1, 0.9), (2, 0.5)]
    best = heading_links.best_headings(ranked, rows, {HEADING})
    carry = heading_links.carried(ranked, rows, best, {HEADING: [(DIARY, 7)]}, {HEADING})
    assert heading_links.raised(ranked, rows, carry) == ranked


def test_records_already_ranked_are_the_ones_kept_when_a_heading_has_too_many() -> None:
    many = [(RecordKey("doc", n), 100 + n) for n in range(1, 40)]
    late = RecordKey("doc", 39)
    rows = {1: _row(1, HEADING), 2: _row(2, late)}
    ranked = [(1, 1.0), (2, 0.1)]
    best = heading_links.best_headings(ranked, rows, {HEADING})
    carry = heading_links.carried(ranked, rows, best, {HEADING: many}, {HEADING})
    assert len(carry.scores) == heading_links.LINKS_PER_HEADING
    assert late in carry.scores


@dataclass
class Letters:
    archive: Archive
    index: Index
    letter: RecordKey
    closed: RecordKey


@pytest.fixture
def letters(archive: Archive) -> Iterator[Letters]:
    """A subject heading that says only "Tear gas", a letter and a closed letter indexed under
    it whose own words never say so, and a recipe book that has nothing to do with it."""
    archive.put_section(Section("subj", {"lg-eng": "Subjects"}, label_field="subj2"))
    archive.put_field(Field("subj2", "subj", {"lg-eng": "Heading"}))
    archive.put_section(Section("doc", {"lg-eng": "Letters"}, label_field="doc2"))
    archive.put_field(Field("doc2", "doc", {"lg-eng": "Title"}))
    archive.put_field(Field("doc3", "doc", {"lg-eng": "Description"}))
    archive.put_field(
        Field("doc4", "doc", {"lg-eng": "Subjects"}, kind="relation", target_section="subj")
    )
    heading = archive.create_record("subj", {"subj2": [{"value": "Tear gas", "lang": "lg-eng"}]})

    def letter(title: str, text: str, **kwargs: bool) -> RecordKey:
        return archive.create_record(
            "doc",
            {
                "doc2": [{"value": title, "lang": "lg-eng"}],
                "doc3": [{"value": text, "lang": "lg-eng"}],
                "doc4": [{"value": heading.to_locator()}],
            },
            **kwargs,
        )

    found = letter("Letter from Ypres", "Written home in April 1915 about the trenches.")
    closed = letter("Letter to a nurse", "Written in May 1915 from a field hospital.",
                    restricted=True)  # fmt: skip
    archive.create_record(
        "doc", {"doc2": [{"value": "A recipe book", "lang": "lg-eng"}]}
    )  # links to nothing
    index = open_index(archive, HashingEmbedder())
    yield Letters(archive, index, found, closed)
    index.close()


def _found(letters: Letters, flt: SearchFilter | None = None) -> list[RecordKey]:
    hits = letters.index.search(
        "tear gas", k=10, mode="lexical", group_by_record=True, lang="lg-eng", filter=flt
    )
    return [hit.key for hit in hits]


def test_the_letters_indexed_under_a_heading_come_with_it(
    letters: Letters, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _found(letters)
    assert found[0] == RecordKey("subj", 1)
    assert set(found[1:]) == {letters.letter, letters.closed}  # their words never say it

    monkeypatch.setattr(heading_links, "LINK_WEIGHT", 0.0)  # as before
    assert _found(letters) == [RecordKey("subj", 1)]


def test_a_closed_letter_is_not_brought_into_an_egress_search(letters: Letters) -> None:
    found = _found(letters, SearchFilter(exclude_restricted=True))
    assert found == [RecordKey("subj", 1), letters.letter]


def test_the_filters_of_the_search_hold_for_the_records_brought(letters: Letters) -> None:
    assert _found(letters, SearchFilter(sections=("subj",))) == [RecordKey("subj", 1)]
    within = SearchFilter(records=(RecordKey("subj", 1), letters.closed))
    assert _found(letters, within) == [RecordKey("subj", 1), letters.closed]
