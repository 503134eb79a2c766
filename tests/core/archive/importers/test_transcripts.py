"""WebVTT and SRT cues, and the ``[TC_…]`` timecodes the index splits transcriptions at."""

from __future__ import annotations

import re

from lxml import etree

from app.core.archive.importers.transcripts import (
    parse_srt,
    parse_transcript,
    parse_vtt,
    timecode,
    timecoded,
)
from app.core.index.chunking import TIMECODE, split_markers
from tests.conftest import shared_data

OHMS_NS = {"o": "https://www.weareavp.com/nunncenter/ohms"}


def chappelear_vtt() -> str:
    """The real WebVTT transcript embedded in the Chappelear OHMS file."""
    path = shared_data("oral-history-ohms", "chappelear-ohmsvtt-example.xml")
    root = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True))
    return str(root.xpath("string(//o:vtt_transcript)", namespaces=OHMS_NS))


def test_timecode_has_the_archive_form_that_the_index_reads() -> None:
    assert timecode(0) == "[TC_00:00:00.000_TC]"
    assert timecode(1614) == "[TC_00:26:54.000_TC]"
    assert timecode(3723.5) == "[TC_01:02:03.500_TC]"
    assert TIMECODE.fullmatch(timecode(359_999.9999))


def test_the_real_vtt_gives_every_timed_cue_with_its_speaker() -> None:
    text = chappelear_vtt()
    timings = re.findall(r"^\d\d:\d\d:\d\d\.\d{3} --> ", text, flags=re.MULTILINE)

    parsed = parse_vtt(text)

    assert len(parsed.cues) == len(timings) == 13
    assert parsed.bad_lines == []  # NOTE blocks are not cues, and are not errors
    first = parsed.cues[0]
    assert (first.start, first.end, first.speaker) == (4.0, 29.0, "SCHNEIDER")
    assert first.text.startswith("Okay. So today is Wednesday, January 24, 2024.")
    assert parsed.cues[1].start == parsed.cues[1].end == 29.0  # zero-length cue kept
    assert parsed.cues[4].speaker == ""  # a cue with no voice tag
    assert "TRANSCRIPTION" not in " ".join(c.text for c in parsed.cues)


def test_timecoded_cues_split_at_the_moment_each_starts() -> None:
    parsed = parse_vtt(chappelear_vtt())

    segments = split_markers(timecoded(parsed.cues))

    assert [s.timecode for s in segments][:3] == ["00:00:04.000", "00:00:29.000", "00:00:29.000"]
    assert segments[1].text == "CHAPPELEAR: Burnet."
    assert len(segments) == len(parsed.cues)


def test_srt_cues_and_a_block_that_is_not_a_cue() -> None:
    srt = (
        "1\n00:00:01,000 --> 00:00:03,500\n<i>Vam marxar</i> de casa.\n\n"
        "2\n00:01:10,250 --> 00:01:12,000\n{\\an8}L'església va quedar\nsota l'aigua.\n\n"
        "3\nno timing here\n\n"
    )

    parsed = parse_srt(srt)

    assert [(c.start, c.text) for c in parsed.cues] == [
        (1.0, "Vam marxar de casa."),
        (70.25, "L'església va quedar sota l'aigua."),
    ]
    assert parsed.bad_lines == [10]


def test_a_vtt_header_wins_over_the_suffix_and_entities_are_unescaped() -> None:
    vtt = (
        "\ufeffWEBVTT - interview\n\nSTYLE\n::cue { color: red }\n\n"
        "c1\n01:02.500 --> 01:04.000 align:start\n<v.loud Rosa Vila>Fish &amp; chips</v>\n"
    )

    parsed = parse_transcript(vtt, ".srt")

    assert [(c.start, c.speaker, c.text) for c in parsed.cues] == [
        (62.5, "Rosa Vila", "Fish & chips")
    ]
