"""Timecoded transcripts: WebVTT and SRT cues, and the archive's ``[TC_…]`` timecodes.

An interview's transcript is stored in a ``transcription`` field as the cues' text, each after
the timecode it starts at, written ``[TC_HH:MM:SS.mmm_TC]`` as the demo oral histories write
them (``[TC_00:02:40.500_TC] Cap al cinquanta-set…``); the index splits the text there, so a
search hit and a citation name the moment (:mod:`app.core.index.chunking`).

:func:`parse_vtt` reads WebVTT (``WEBVTT`` header; ``NOTE``, ``STYLE`` and ``REGION`` blocks
skipped; cue identifiers and settings allowed; ``<v Speaker>`` voice tags kept as the cue's
speaker; other tags dropped; entities unescaped). :func:`parse_srt` reads SubRip (numbered cues,
``00:00:01,000 --> …``, ``<i>`` and ``{\\an8}`` tags dropped). A block that is not a cue is
reported by its line number in :attr:`Transcript.bad_lines`; the others are kept.
:func:`timecoded` writes the cues in the archive's form, one line each, ``SPEAKER: text``.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

MAX_CUES = 200_000
"""The most cues read from one transcript (a 24-hour recording cued every half second)."""

_TIME = r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})"
TIMING = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}(?:\s.*)?$")
_VOICE = re.compile(r"<v(?:\.[^\s>]*)?\s+([^>]+)>")
_TAG = re.compile(r"<[^>]*>")
_SRT_STYLE = re.compile(r"\{\\[^}]*\}")
_SPACE = re.compile(r"\s+")
MAX_TIMECODE_S = 100 * 3600 - 0.001
"""``[TC_…]`` has two hour digits."""


@dataclass(frozen=True)
class Cue:
    """One cue: when it starts and ends (seconds), who speaks (if named) and what is said."""

    start: float
    end: float
    text: str
    speaker: str = ""


@dataclass
class Transcript:
    """The cues of a transcript file and the lines of the blocks that were not cues."""

    cues: list[Cue] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)


def timecode(seconds: float) -> str:
    """The archive's timecode marker for ``seconds``: ``[TC_00:26:54.000_TC]``."""
    millis = round(min(max(seconds, 0.0), MAX_TIMECODE_S) * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"[TC_{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}_TC]"


def timecoded(cues: list[Cue]) -> str:
    """The cues as a transcription value: one line per cue, each after its timecode."""
    lines = []
    for cue in cues:
        text = f"{cue.speaker}: {cue.text}" if cue.speaker else cue.text
        lines.append(f"{timecode(cue.start)} {text}")
    return "\n".join(lines)


def _seconds(hours: str | None, minutes: str, secs: str, fraction: str) -> float:
    return (
        int(hours or 0) * 3600 + int(minutes) * 60 + int(secs) + int(fraction.ljust(3, "0")) / 1000
    )


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """The blank-line separated blocks of ``text`` with the line number each starts on."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line.rstrip())
        elif current:
            blocks.append((start, current))
            current = []
    if current:
        blocks.append((start, current))
    return blocks


def _cue(lines: list[str], *, vtt: bool) -> Cue | None:
    """The cue in a block (timing on its first or second line), or ``None``."""
    for position in (0, 1):
        if position < len(lines) and (match := TIMING.match(lines[position])):
            groups = match.groups()
            start, end = _seconds(*groups[:4]), _seconds(*groups[4:])
            return _payload(start, end, lines[position + 1 :], vtt=vtt)
    return None


def _payload(start: float, end: float, lines: list[str], *, vtt: bool) -> Cue:
    raw = " ".join(lines)
    voice = _VOICE.search(raw) if vtt else None
    speaker = _SPACE.sub(" ", html.unescape(voice.group(1))).strip() if voice else ""
    text = _SRT_STYLE.sub("", raw) if not vtt else raw
    text = _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip()
    return Cue(start, end, text, speaker)


def parse_vtt(text: str) -> Transcript:
    """The cues of a WebVTT document (see the module doc)."""
    result = Transcript()
    for number, lines in _blocks(text.lstrip("\ufeff")):
        head = lines[0].lstrip()
        if head.startswith("WEBVTT") or head.split(" ")[0] in ("NOTE", "STYLE", "REGION"):
            continue
        _add(result, number, _cue(lines, vtt=True))
        if len(result.cues) >= MAX_CUES:
            break
    return result


def parse_srt(text: str) -> Transcript:
    """The cues of a SubRip (SRT) document (see the module doc)."""
    result = Transcript()
    for number, lines in _blocks(text.lstrip("\ufeff")):
        _add(result, number, _cue(lines, vtt=False))
        if len(result.cues) >= MAX_CUES:
            break
    return result


def _add(result: Transcript, number: int, cue: Cue | None) -> None:
    if cue is None:
        result.bad_lines.append(number)
    elif cue.text:
        result.cues.append(cue)


def parse_transcript(text: str, suffix: str) -> Transcript:
    """The cues of a ``.vtt`` or ``.srt`` file's text (a WebVTT header wins over the suffix)."""
    if text.lstrip("\ufeff").startswith("WEBVTT") or suffix.lower() == ".vtt":
        return parse_vtt(text)
    return parse_srt(text)
