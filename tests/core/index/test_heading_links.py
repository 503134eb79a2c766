"""A heading that matches brings the records that link to it, inside the search's filters, on
both engines."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from app.core.archive import Archive, Field, RecordKey, Section
from app.core.index import HashingEmbedder, Index, heading_links
from app.core.index.heading_links import Linked
from app.core.index.hits import SearchFilter, SearchHit, Via
from app.core.index.opening import open_index
from app.core.index.record_hits import search_records
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

    links = {
        HEADING: [
            Linked(LETTER, 10, "f1"),
            Linked(DIARY, 20, "f2"),
            Linked(OTHER_HEADING, 30, "f1"),
        ]
    }
    counts = {HEADING: 1}  # (as if the filters had left one of them)
    carry = heading_links.carried(ranked, rows, best, links, {HEADING, OTHER_HEADING}, counts)

    assert carry.scores == {LETTER: 0.5, DIARY: 0.5}  # a heading linked to it gets nothing
    assert carry.chunks == {LETTER: 10, DIARY: 2}  # the diary keeps the chunk that ranked
    # both are there through the heading: the diary's own chunk ranked lower (0.3)
    assert carry.via == {LETTER: (HEADING, "f1"), DIARY: (HEADING, "f2")}
    rows[10] = _row(10, LETTER)
    assert heading_links.raised(ranked, rows, carry) == [(1, 1.0), (2, 0.5), (10, 0.5)]


def test_a_heading_many_records_link_to_gives_each_less() -> None:
    rows = {1: _row(1, HEADING)}
    many = [Linked(RecordKey("doc", n), 100 + n, "f") for n in range(1, 5)]
    best = heading_links.best_headings([(1, 1.0)], rows, {HEADING})
    carry = heading_links.carried([(1, 1.0)], rows, best, {HEADING: many}, {HEADING})
    assert set(carry.scores.values()) == {0.25}  # 0.5 over the square root of 4


def test_a_record_ranked_higher_keeps_its_own_score() -> None:
    rows = {1: _row(1, DIARY), 2: _row(2, HEADING)}
    ranked = [(1, 0.9), (2, 0.5)]
    best = heading_links.best_headings(ranked, rows, {HEADING})
    carry = heading_links.carried(ranked, rows, best, {HEADING: [Linked(DIARY, 7, "f")]}, {HEADING})
    assert heading_links.raised(ranked, rows, carry) == ranked
    assert carry.via == {}  # found by its own words, not through the heading


def test_a_record_linked_by_two_fields_counts_once() -> None:
    rows = [
        (HEADING, LETTER, 10, "subjects"),
        (HEADING, LETTER, 10, "names"),
        (HEADING, DIARY, 20, "subjects"),
        (HEADING, HEADING, 1, "see_also"),  # linked to itself: left out
        (HEADING, RecordKey("doc", 3), None, "subjects"),  # not indexed: left out
    ]
    assert heading_links.by_heading(rows) == {
        HEADING: [Linked(LETTER, 10, "names"), Linked(DIARY, 20, "subjects")]
    }


def test_records_already_ranked_are_the_ones_kept_when_a_heading_has_too_many() -> None:
    many = [Linked(RecordKey("doc", n), 100 + n, "f") for n in range(1, 40)]
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
        Field(
            "doc4",
            "doc",
            {"lg-eng": "Subjects", "lg-cat": "Matèries", "lg-spa": "Materias"},
            kind="relation",
            target_section="subj",
        )
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


def _hits(letters: Letters, flt: SearchFilter | None = None) -> list[SearchHit]:
    return letters.index.search(
        "tear gas", k=10, mode="lexical", group_by_record=True, lang="lg-eng", filter=flt
    )


def _found(letters: Letters, flt: SearchFilter | None = None) -> list[RecordKey]:
    return [hit.key for hit in _hits(letters, flt)]


def test_the_letters_indexed_under_a_heading_come_with_it(
    letters: Letters, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _found(letters)
    assert found[0] == RecordKey("subj", 1)
    assert set(found[1:]) == {letters.letter, letters.closed}  # their words never say it

    monkeypatch.setattr(heading_links, "LINK_WEIGHT", 0.0)  # as before
    assert _found(letters) == [RecordKey("subj", 1)]


def test_a_record_brought_by_a_heading_says_which_and_through_what_field(
    letters: Letters,
) -> None:
    hits = {hit.key: hit for hit in _hits(letters)}
    via = Via(RecordKey("subj", 1), "Tear gas", "doc4")
    assert hits[letters.letter].via == via
    assert hits[letters.letter].to_dict()["via"] == {
        "section_tipo": "subj", "section_id": 1, "label": "Tear gas", "field": "doc4"
    }  # fmt: skip
    assert hits[RecordKey("subj", 1)].via is None  # found by its own words
    assert "via" not in hits[RecordKey("subj", 1)].to_dict()


def test_a_record_whose_own_words_match_better_has_no_via(letters: Letters) -> None:
    letters.archive.update_record(
        letters.letter,
        {"doc3": [{"value": "Tear gas at Ypres: tear gas in the trenches.", "lang": "lg-eng"}]},
    )
    letters.index.index_now()
    hits = {hit.key: hit for hit in _hits(letters)}
    assert hits[letters.letter].via is None
    assert hits[letters.closed].via is not None


def test_a_closed_letter_is_not_brought_into_an_egress_search(letters: Letters) -> None:
    found = _found(letters, SearchFilter(exclude_restricted=True))
    assert found == [RecordKey("subj", 1), letters.letter]


def test_the_filters_of_the_search_hold_for_the_records_brought(letters: Letters) -> None:
    assert _found(letters, SearchFilter(sections=("subj",))) == [RecordKey("subj", 1)]
    within = SearchFilter(records=(RecordKey("subj", 1), letters.closed))
    assert _found(letters, within) == [RecordKey("subj", 1), letters.closed]


@pytest.mark.parametrize(
    ("lang", "said"), [("lg-eng", "Subjects"), ("lg-cat", "Matèries"), ("lg-spa", "Materias")]
)
def test_a_record_found_through_a_heading_says_so_in_the_persons_language(
    letters: Letters, lang: str, said: str
) -> None:
    """The results by record (the window's rows, ``arxiu search``): the letter found through
    "Tear gas" names the field that links it there in the person's language, and the heading
    with the query's words marked; the heading itself, found by its words, names nothing."""
    hits = search_records(letters.index, letters.archive, "tear gas", mode="lexical", lang=lang)
    by_key = {hit.key: hit for hit in hits}
    via = by_key[letters.letter].via
    assert via is not None
    assert (via.key, via.field_label, via.title) == (RecordKey("subj", 1), said, "Tear gas")
    assert [via.title[a:b] for a, b in via.title_marks] == ["Tear", "gas"]
    assert by_key[letters.letter].to_dict()["via"] == {
        "section_tipo": "subj", "section_id": 1, "field": said, "label": "Tear gas"
    }  # fmt: skip
    assert by_key[RecordKey("subj", 1)].via is None
