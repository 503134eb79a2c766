"""Records that say nothing but their title (the subject headings and names an import makes)
rank below the records that describe something, on both engines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.importing import import_dataset
from app.core.index import HashingEmbedder, Index, heading_links, headings
from app.core.index.opening import open_index
from app.core.index.record_hits import search_records
from app.core.index.search import HybridSearch
from tests.conftest import shared_data

INTERVIEWS = "ohms1"
CHEMICAL_WARFARE = "Chemical warfare"
"""An OHMS subject heading (a record of its own) that two interviews talk about."""


def test_a_heading_and_its_codes_say_only_the_title() -> None:
    assert headings.says_only_title([("Chemistry curricula", "subject", "lg-nolan")])
    assert headings.says_only_title(  # an EAD name: its kind and file, then its name again
        [
            ("Collins, Edward", "person · AFL-CIORegion9_5189.xml", "lg-nolan"),
            ("Collins, Edward", "Collins, Edward", "lg-eng"),
        ]
    )
    assert headings.says_only_title([("Seattle", "seattle", "lg-eng")])  # folded alike


def test_a_record_with_words_of_its_own_is_no_heading() -> None:
    assert not headings.says_only_title(
        [
            ("Collins, Edward", "person · AFL-CIORegion9_5189.xml", "lg-nolan"),
            ("Collins, Edward", "Organizer of the cannery workers in Seattle.", "lg-eng"),
        ]
    )
    assert not headings.says_only_title([("Vitet", "Vitet (famille)", "lg-fra")])


@pytest.fixture
def ohms(archive: Archive) -> Iterator[tuple[Archive, Index]]:
    import_dataset(archive, "ohms", shared_data("oral-history-ohms"))
    index = open_index(archive, HashingEmbedder())
    yield archive, index
    index.close()


def _sections(index: Index, query: str) -> list[str]:
    hits = index.search(query, k=8, mode="lexical", group_by_record=True, lang="lg-eng")
    return [hit.key.section_tipo for hit in hits]


def test_interviews_rank_above_the_headings_they_share_words_with(
    ohms: tuple[Archive, Index], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OHMS subject "Chemical warfare" and its neighbours ("Chemical Warfare Service")
    are two or three words long, so BM25 put them first; the Alyea and Smyth interviews,
    which talk about chemical warfare, came third and fourth."""
    _, index = ohms
    assert _sections(index, CHEMICAL_WARFARE)[:2] == [INTERVIEWS, INTERVIEWS]
    assert "subject1" in _sections(index, CHEMICAL_WARFARE)[2:5]  # still shown, further down

    monkeypatch.setattr(headings, "HEADING_WEIGHT", 1.0)  # as before
    monkeypatch.setattr(heading_links, "LINK_WEIGHT", 0.0)  # (the interviews are linked)
    assert _sections(index, CHEMICAL_WARFARE)[:2] == ["subject1", "subject1"]


def test_a_heading_named_exactly_still_comes_first(ohms: tuple[Archive, Index]) -> None:
    archive, index = ohms
    hits = search_records(index, archive, CHEMICAL_WARFARE, k=5, mode="lexical")
    assert hits[0].title == CHEMICAL_WARFARE
    assert hits[0].exact_name == CHEMICAL_WARFARE
    assert [h.key.section_tipo for h in hits[1:3]] == [INTERVIEWS, INTERVIEWS]


def test_which_records_are_headings_is_read_from_their_chunks(
    ohms: tuple[Archive, Index],
) -> None:
    archive, index = ohms
    keys = {key for tipo in (INTERVIEWS, "subject1", "agent1") for key in _keys(archive, tipo)}
    engine = index.engine
    assert isinstance(engine, HybridSearch)  # either engine's read of the chunks
    with engine._chunk_reads() as reads:
        found = reads.title_only(keys)
    assert {k.section_tipo for k in keys - found} == {INTERVIEWS}  # the six interviews
    assert {k.section_tipo for k in found} == {"subject1", "agent1"}
    assert len(keys - found) == 6


def _keys(archive: Archive, tipo: str) -> list[RecordKey]:
    return [record.key for record in archive.iter_records(tipo)]
