"""Cutting a record into chunks: timecoded transcriptions, paged documents, windows of words.

A chunk is the unit that is embedded, matched by FTS5 and returned as a search hit. Every chunk
keeps its record, field, language and, where the text carries them, the timecode
(``[TC_HH:MM:SS.mmm_TC]``) or page (``[page-n-X]``) it starts at. Chunks hold about 180 words
(roughly 230–280 word-piece tokens, inside MiniLM's 256-token window); longer passages are cut
into overlapping windows. The record's label is put in front of every chunk's embedded text so
that a passage keeps its context.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.core.archive.hierarchy_shape import lead_with_code
from app.core.archive.lexemes import GATHERED
from app.core.archive.model import Field, Record, RecordKey

TEXT_KINDS = ("text", "rich_text", "transcription")
"""Field kinds whose values are indexed."""

MAX_WORDS = 180
OVERLAP_WORDS = 30
SHORT_WORDS = 24
"""Text values up to this many words are metadata, gathered into one chunk per language."""

TIMECODE = re.compile(r"\[TC_(\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)_TC\]")
PAGE = re.compile(r"\[page-n-([^\]\s]+)\]")
_DEDALO_TAG = re.compile(r"\[/?[a-z]+-[a-z]+-[^\]]*\]")
_HTML_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
_GATHER = f" {GATHERED} "
"""What joins the short values of one language in the metadata chunk."""


@dataclass(frozen=True)
class Chunk:
    """One indexed passage of a record."""

    key: RecordKey
    field_tipo: str
    lang: str
    position: int
    text: str
    label: str = ""
    timecode: str | None = None
    page: str | None = None

    @property
    def embed_text(self) -> str:
        """What the embedder sees: the record's label, then the passage."""
        if not self.label or self.text.startswith(self.label):
            return self.text
        return f"{self.label}\n{self.text}"

    @property
    def content_hash(self) -> str:
        """Hash of the embedded text: equal text is embedded once, whatever record holds it."""
        return hashlib.sha256(self.embed_text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Context:
    """What leads a record's metadata chunk: the titles of the records it is part of (its
    trail, :mod:`app.core.index.chunk_context`) and the "part of" field they come from."""

    text: str
    field_tipo: str


@dataclass(frozen=True)
class Segment:
    """A run of text that starts at a marker (or at the start of the value)."""

    text: str
    timecode: str | None = None
    page: str | None = None


def clean(text: str) -> str:
    """Drop HTML and Dédalo tags and collapse whitespace."""
    if "<" not in text and "[" not in text:  # no tag: the same result, 3x faster
        return " ".join(text.split())
    text = _HTML_TAG.sub(" ", text)
    text = _DEDALO_TAG.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


def _spaced(text: str) -> bool:
    """Whether ``" ".join(text.split()) == text``: words one space apart, none at either end.

    Every whitespace character but the space is unprintable, so a printable text with no two
    spaces in a row and none at its ends is already what splitting and joining would make; such
    a text is taken as it is (the chunks of the 72,736 Tate records: 1.00-1.04 s against
    1.07-1.10 s, the same chunks).
    """
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def split_markers(text: str) -> list[Segment]:
    """Split a value at its timecode and page markers; each segment keeps the marker it follows."""
    marks = sorted(
        [(m.start(), m.end(), m.group(1), None) for m in TIMECODE.finditer(text)]
        + [(m.start(), m.end(), None, m.group(1)) for m in PAGE.finditer(text)]
    )
    segments: list[Segment] = []
    head = clean(text[: marks[0][0]] if marks else text)
    if head:
        segments.append(Segment(head))
    for i, (_, end, timecode, page) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        body = clean(text[end:stop])
        if body:
            segments.append(Segment(body, timecode, page))
    return segments


def windows(words: list[str], size: int = MAX_WORDS, overlap: int = OVERLAP_WORDS) -> Iterator[str]:
    """Overlapping windows of at most ``size`` words."""
    if len(words) <= size:
        yield " ".join(words)
        return
    step = max(size - overlap, 1)
    for start in range(0, len(words), step):
        yield " ".join(words[start : start + size])
        if start + size >= len(words):
            return


def pack(segments: list[Segment], size: int = MAX_WORDS) -> Iterator[Segment]:
    """Merge short timecoded segments up to ``size`` words; cut long ones into windows.

    Chunks always begin at a segment boundary, so a chunk's timecode is where it starts. Pages
    are never merged with each other.
    """
    buffer: list[Segment] = []
    count = 0
    for segment in segments:
        n = len(segment.text.split())
        mergeable = segment.page is None and (not buffer or buffer[0].page is None)
        if buffer and (not mergeable or count + n > size):
            yield _join(buffer)
            buffer, count = [], 0
        if n > size:
            for part in windows(segment.text.split(), size):
                yield Segment(part, segment.timecode, segment.page)
            continue
        buffer.append(segment)
        count += n
    if buffer:
        yield _join(buffer)


def _join(segments: list[Segment]) -> Segment:
    first = segments[0]
    return Segment(" ".join(s.text for s in segments), first.timecode, first.page)


def chunk_record(
    record: Record,
    fields: list[Field],
    label_field: str | None,
    code_field: str | None = None,
    *,
    context: Context | None = None,
) -> list[Chunk]:
    """Every chunk of ``record``.

    Long values (and any transcription or marked-up value) are cut into passages; short text
    values of one language (names, places, identifiers) are gathered into one metadata chunk, so
    that a catalogue entry is one chunk rather than a dozen tiny ones. Each chunk's label is the
    record's label in the chunk's language (not on the metadata chunk of a record that has
    passages: a title-only vector there outranked the passages of better records); a language
    the label has but no chunk has gets a chunk holding just the label, so every title stays
    findable.

    Args:
        record: the record to cut.
        fields: its section's fields (only the text-like kinds are read).
        label_field: the section's label field (its values head the chunks).
        code_field: in an archival hierarchy, the reference-code field the label leads with.
        context: in an archival hierarchy, the record's trail ("Fonds › Series"), first in
            its metadata chunk of its label's language (a chunk of its own if need be).
    """
    chunks: list[Chunk] = []
    short: dict[str, tuple[str, list[str]]] = {}
    label = _labeller(record, label_field, code_field)
    key, values = record.key, record.values
    for field in fields:
        tipo = field.tipo
        items = values.get(tipo)
        if not items or field.kind not in TEXT_KINDS or tipo == label_field:
            continue
        plain = field.kind == "text"
        for item in items:
            value = item.get("value")
            if type(value) is not str:
                if not isinstance(value, str):
                    continue
                value = str(value)
            cleaned, is_short = _cleaned(field, value, plain)
            if not cleaned:
                continue
            lang = item.get("lang")
            lang = lang if type(lang) is str and lang else str(lang or "lg-nolan")
            if is_short:
                gathered = short.get(lang)
                if gathered is None:
                    short[lang] = (tipo, [cleaned])
                else:
                    gathered[1].append(cleaned)
                continue
            for segment in _passages(value, cleaned):
                chunks.append(_chunk(key, tipo, lang, len(chunks), segment, label(lang)))
    if context is not None:
        _lead(short, context, _label_language(record, label_field))
    _gathered(record, chunks, short, label, label_field)
    return chunks


def _gathered(
    record: Record,
    chunks: list[Chunk],
    short: dict[str, tuple[str, list[str]]],
    label: Callable[[str], str],
    label_field: str | None,
) -> None:
    """Add the metadata chunk of each language of ``short`` (led by the label where the
    record has no passage), then the label chunks (:func:`_label_chunks`)."""
    passages = bool(chunks)
    for lang, (tipo, texts) in short.items():
        segment = Segment(_GATHER.join(texts))
        head = "" if passages else label(lang)  # passages already carry the label
        chunks.append(_chunk(record.key, tipo, lang, len(chunks), segment, head))
    if label_field:
        _label_chunks(record, label_field, chunks, label)


def _label_language(record: Record, label_field: str | None) -> str:
    """The language of the record's first label value (``lg-nolan``: none)."""
    for item in record.values.get(label_field, []) if label_field else []:
        if isinstance(item.get("value"), str) and item["value"].strip():
            return str(item.get("lang") or "lg-nolan")
    return "lg-nolan"


def _lead(short: dict[str, tuple[str, list[str]]], context: Context, lang: str) -> None:
    """Put ``context`` first among the short values of ``lang``."""
    gathered = short.get(lang)
    if gathered is None:
        short[lang] = (context.field_tipo, [context.text])
    else:
        gathered[1].insert(0, context.text)


def _cleaned(field: Field, value: str, plain: bool) -> tuple[str, bool]:
    """A value's text as it is chunked, and whether it is short (gathered into the metadata
    chunk): :func:`clean` and :func:`_is_short`, from one split where no tag or marker needs
    them."""
    if "<" in value or "[" in value:
        return clean(value), _is_short(field, value)
    if _spaced(value):  # no tag, no marker, no whitespace to collapse
        return value, plain and value.count(" ") < SHORT_WORDS
    words = value.split()
    return " ".join(words), plain and len(words) <= SHORT_WORDS


def _labeller(
    record: Record, label_field: str | None, code_field: str | None
) -> Callable[[str], str]:
    """``label(lang)``: the record's label in ``lang`` (cached), led by its reference code."""
    labels: dict[str, str] = {}

    def label(lang: str) -> str:
        found = labels.get(lang)
        if found is None:
            value = record.text(label_field, lang) if label_field else None
            code = record.text(code_field, lang) if code_field else None
            found = labels[lang] = lead_with_code(clean(value) if value else "", code)
        return found

    return label


def _label_chunks(
    record: Record, label_field: str, chunks: list[Chunk], label: Callable[[str], str]
) -> None:
    """Add a chunk holding just the label for each language of it that no chunk has
    (``label(lang)`` names it, with the reference code where the section has one)."""
    covered = {c.lang for c in chunks}
    for item in record.values.get(label_field, []):
        lang, value = str(item.get("lang") or "lg-nolan"), item.get("value")
        if isinstance(value, str) and lang not in covered and (text := clean(value)):
            segment = Segment(text)
            chunks.append(_chunk(record.key, label_field, lang, len(chunks), segment, label(lang)))
            covered.add(lang)


def _passages(value: str, cleaned: str) -> Iterator[Segment]:
    """``pack(split_markers(value))``; ``cleaned`` is ``clean(value)``. A value without a
    marker is one segment, ``cleaned`` itself (no regular expression run on it)."""
    if "[" in value:
        return pack(split_markers(value))
    return pack([Segment(cleaned)])


def _is_short(field: Field, value: str) -> bool:
    if field.kind != "text" or ("[" in value and (TIMECODE.search(value) or PAGE.search(value))):
        return False
    return len(value.split()) <= SHORT_WORDS


def _chunk(
    key: RecordKey, field_tipo: str, lang: str, position: int, segment: Segment, label: str
) -> Chunk:
    return Chunk(
        key, field_tipo, lang, position, segment.text, label, segment.timecode, segment.page
    )
