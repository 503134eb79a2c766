"""The records a composed answer lists, each with what the archive says of it.

For each relevant hit of a list search, a :class:`ListedRecord`: its label and its section's
label in the answer's language, its date (in an archival hierarchy the dates as the finding aid
writes them, ``1992-1994``; elsewhere the first date field that has a value), its box or folder
(a hierarchy's container: what "in which box is…" asks), its languages (those of its
transcriptions, else of its text values) and the passage that matched (the hit's snippet,
with its timecode or page). Records are grouped by section in rank order
(:func:`by_section`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.agent.citations import record_langs
from app.core.agent.sources import SourceHit
from app.core.archive.hierarchy import hierarchy_of
from app.core.archive.hierarchy_shape import Hierarchy
from app.core.archive.model import NEUTRAL_LANG, Record, RecordKey
from app.core.index.exact_names import titles
from app.core.index.hit_passages import worth_quoting
from app.core.index.lexical import query_words

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SPOKEN_KINDS = ("transcription",)
"""Fields whose language is the record's own (an interview's spoken language)."""


@dataclass(frozen=True)
class ListedRecord:
    """One record of a composed answer."""

    key: RecordKey
    label: str
    section_label: str
    date: str | None
    langs: tuple[str, ...]
    passage: str
    timecode: str | None = None
    page: str | None = None
    container: str | None = None


Shapes = dict[str, Hierarchy | None]
"""Each section's hierarchy (or ``None``), read once per answer."""


def listed_record(
    archive: Archive,
    hit: SourceHit,
    lang: str,
    shapes: Shapes | None = None,
    question: str = "",
) -> ListedRecord | None:
    """The record ``hit`` names, as a composed answer lists it (``None``: not in the archive);
    ``shapes`` keeps the hierarchies read for the records listed before. Its passage is quoted
    only where it says more than the record's title (:func:`worth_quoting` with the words of
    ``question``), as a search row shows it."""
    sid = hit.section_id
    if isinstance(sid, str):
        if not sid.isdigit():
            return None
        sid = int(sid)
    key = RecordKey(hit.section_tipo, sid)
    record = archive.find_record(key)
    if record is None:
        return None
    section = archive.section(key.section_tipo) if archive.has_section(key.section_tipo) else None
    shapes = {} if shapes is None else shapes
    if key.section_tipo not in shapes:
        shapes[key.section_tipo] = hierarchy_of(archive, key.section_tipo)
    shape = shapes[key.section_tipo]
    label = archive.label_of(record, lang)
    return ListedRecord(
        key=key,
        label=label,
        section_label=section.label(lang) if section else key.section_tipo,
        date=_shown(record, shape.date_field if shape else None, lang) or _date(archive, record),
        langs=_langs(archive, record),
        passage=_passage(hit.snippet, [label, *titles(archive, record)], question, lang),
        timecode=hit.timecode,
        page=hit.page,
        container=_shown(record, shape.container_field if shape else None, lang),
    )


def _passage(snippet: str, names: list[str], question: str, lang: str) -> str:
    """``snippet`` with its spaces collapsed, or nothing when it says no more than ``names``."""
    text = " ".join(snippet.split())
    words = query_words(question, lang)
    return text if text and worth_quoting(text, lang, names, words, question) else ""


def _shown(record: Record, tipo: str | None, lang: str) -> str | None:
    """Text field ``tipo``'s value in ``lang`` (else the best one), as written (``None``: no
    field, no value)."""
    text = record.text(tipo, lang) if tipo else None
    return " ".join(text.split()) if text and text.strip() else None


def _date(archive: Archive, record: Record) -> str | None:
    for field in archive.fields(record.section_tipo):
        if field.kind != "date":
            continue
        for item in record.items(field.tipo):
            value = item.get("value")
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def _langs(archive: Archive, record: Record) -> tuple[str, ...]:
    spoken = {
        str(item.get("lang"))
        for field in archive.fields(record.section_tipo)
        if field.kind in SPOKEN_KINDS
        for item in record.items(field.tipo)
        if isinstance(item.get("value"), str) and item.get("lang") not in (None, NEUTRAL_LANG)
    }
    return tuple(sorted(spoken)) if spoken else tuple(record_langs(archive, record.key))


def by_section(records: Sequence[ListedRecord]) -> list[list[ListedRecord]]:
    """``records`` grouped by section: sections in the order of their best record, records in
    rank order within each."""
    groups: dict[str, list[ListedRecord]] = {}
    for record in records:
        groups.setdefault(record.key.section_tipo, []).append(record)
    return list(groups.values())
