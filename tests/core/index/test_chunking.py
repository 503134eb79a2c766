"""Cutting records into chunks."""

from __future__ import annotations

import pytest

from app.core.archive import Field, Record
from app.core.index.chunking import (
    MAX_WORDS,
    OVERLAP_WORDS,
    SHORT_WORDS,
    Chunk,
    _spaced,
    chunk_record,
    split_markers,
)

FIELDS = [
    Field("t0", "s1", {}, "text"),
    Field("t1", "s1", {}, "text"),
    Field("t2", "s1", {}, "transcription"),
    Field("t3", "s1", {}, "rich_text"),
    Field("t4", "s1", {}, "date"),
]


def record(values: dict[str, list[dict[str, str]]]) -> Record:
    return Record("s1", 7, {"t0": [{"lang": "lg-eng", "value": "Title"}], **values})


def body_chunks(values: dict[str, list[dict[str, str]]]) -> list[Chunk]:
    return [c for c in chunk_record(record(values), FIELDS, "t0") if c.field_tipo != "t0"]


def words(n: int, stem: str = "w") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


def test_transcription_chunks_start_at_timecodes() -> None:
    long_turn = words(MAX_WORDS - 10, "a")
    value = (
        f"[TC_00:00:01.000_TC] {long_turn} [TC_00:02:00.500_TC] {words(30, 'b')} "
        f"[TC_00:03:10.000_TC] {words(20, 'c')}"
    )
    chunks = body_chunks({"t2": [{"lang": "lg-cat", "value": value}]})
    assert [c.timecode for c in chunks] == ["00:00:01.000", "00:02:00.500"]
    assert chunks[0].text == long_turn
    assert chunks[1].text.startswith("b0 ") and chunks[1].text.endswith("c19")
    assert {c.lang for c in chunks} == {"lg-cat"}
    assert all(c.field_tipo == "t2" and c.key.section_id == 7 for c in chunks)


def test_documents_split_at_pages_and_pages_never_merge() -> None:
    value = "[page-n-1] First page text. [page-n-2] Second page. [page-n-3] Third."
    chunks = body_chunks({"t3": [{"lang": "lg-eng", "value": value}]})
    assert [(c.page, c.text) for c in chunks] == [
        ("1", "First page text."),
        ("2", "Second page."),
        ("3", "Third."),
    ]


def test_long_passages_become_overlapping_windows() -> None:
    body = words(2 * MAX_WORDS + 50)
    chunks = body_chunks({"t3": [{"lang": "lg-eng", "value": body}]})
    first, second = chunks[0].text.split(), chunks[1].text.split()
    assert len(first) == MAX_WORDS
    assert first[-OVERLAP_WORDS:] == second[:OVERLAP_WORDS]
    assert chunks[-1].text.split()[-1] == f"w{2 * MAX_WORDS + 49}"


def test_short_values_form_one_metadata_chunk_per_language_headed_by_its_label() -> None:
    values = {
        "t0": [{"lang": "lg-eng", "value": "Label"}, {"lang": "lg-cat", "value": "Etiqueta"}],
        "t1": [{"lang": "lg-eng", "value": "Barcelona"}, {"lang": "lg-cat", "value": "Sants"}],
        "t4": [{"lang": "lg-nolan", "value": "1962"}],
    }
    chunks = chunk_record(Record("s1", 7, values), FIELDS, "t0")
    by_lang = {c.lang: c for c in chunks}
    assert sorted(by_lang) == ["lg-cat", "lg-eng"] and len(chunks) == 2
    assert by_lang["lg-eng"].embed_text == "Label\nBarcelona"
    assert by_lang["lg-cat"].embed_text == "Etiqueta\nSants"


def test_label_languages_without_chunks_get_a_label_chunk() -> None:
    values = {
        "t0": [{"lang": "lg-eng", "value": "Leaving"}, {"lang": "lg-cat", "value": "Marxar"}],
        "t3": [{"lang": "lg-cat", "value": " ".join(["paraula"] * 40)}],
    }
    chunks = chunk_record(Record("s1", 7, values), FIELDS, "t0")
    assert [(c.lang, c.field_tipo, c.label) for c in chunks] == [
        ("lg-cat", "t3", "Marxar"),
        ("lg-eng", "t0", "Leaving"),
    ]
    assert chunks[1].embed_text == "Leaving"


def test_tags_are_dropped_and_hashes_follow_the_text() -> None:
    segments = split_markers("<p>Hola <b>món</b></p> [index-n-1-data:x] text")
    assert [s.text for s in segments] == ["Hola món text"]
    a = body_chunks({"t3": [{"lang": "lg-cat", "value": "same text here"}]})
    b = body_chunks({"t3": [{"lang": "lg-cat", "value": "same text here"}]})
    c = body_chunks({"t3": [{"lang": "lg-cat", "value": "other text here"}]})
    assert a[0].content_hash == b[0].content_hash != c[0].content_hash


@pytest.mark.parametrize(
    "value",
    [
        "Oil paint on canvas",
        "",
        " leading",
        "trailing ",
        "two  spaces",
        "a\nnew line",
        "a\ttab",
        "no\xa0break",
        "em\u2003space",
        "line\u2028separator",
        "zero\u200bwidth",
        "unit\x1fseparator",
        "Col·lecció d'Amades ✓",
    ],
)
def test_a_text_taken_as_it_is_is_what_splitting_and_joining_gives(value: str) -> None:
    if _spaced(value):  # enough, not needed: the others are split and joined
        assert " ".join(value.split()) == value
    record = Record("s1", 1, {"f2": [{"id": 1, "lang": "lg-eng", "value": f"{value} x"}]})
    field = Field("f2", "s1", {"lg-eng": "f2"}, "text")
    (chunk,) = chunk_record(record, [field], None)
    assert chunk.text == " ".join(f"{value} x".split())


@pytest.mark.parametrize("separator", [" ", "  "])
def test_a_text_of_more_than_short_words_is_a_passage(separator: str) -> None:
    short = body_chunks({"t1": [{"lang": "lg-eng", "value": separator.join(["w"] * SHORT_WORDS)}]})
    long = body_chunks(
        {"t1": [{"lang": "lg-eng", "value": separator.join(["w"] * (SHORT_WORDS + 1))}]}
    )
    assert [c.label for c in short] == ["Title"]  # the metadata chunk of a record without passages
    assert [c.label for c in long] == ["Title"] and long[0].text.count("w") == SHORT_WORDS + 1
    both = body_chunks(
        {
            "t1": [{"lang": "lg-eng", "value": separator.join(["w"] * SHORT_WORDS)}],
            "t3": [{"lang": "lg-eng", "value": separator.join(["v"] * (SHORT_WORDS + 1))}],
        }
    )
    assert [c.field_tipo for c in both] == ["t3", "t1"]  # the passage, then the short text
    assert both[1].label == ""  # the metadata chunk beside a passage has no label
