"""Choosing what a grounded answer cites: the relevant records among a search's hits.

A hybrid search always returns its ``k`` best chunks, relevant or not, so citing all of them
cites weak hits (the interviewer's person record under a question about interviews). The
sources are chosen from the hits alone — every cited record was returned by the search — by
three deterministic rules:

1. one entry per record, scored by its best hit;
2. *lead sections*: the sections of the records scoring at least ``STRONG`` × the best score
   (the best record's section always among them), and the section whose records at or above
   ``RELEVANT`` × the best score add up to the most (where most of what the search found is: a
   question about a strike in a finding aid whose best hit is the company's authority record,
   one record against seven of the finding aid's files); records of other sections are weak
   hits;
3. a relative cut-off: a record of a lead section is cited when it scores at least
   ``RELEVANT`` × the best score.

Scores are the index's fused scores (best chunk 1.0 when both retrievers agree), so the
cut-offs are ratios to the best hit rather than absolute values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from app.core.json_types import JsonObject, JsonValue

STRONG = 0.9
"""A record scoring at least this share of the best score makes its section a lead section."""
RELEVANT = 0.6
"""A record of a lead section scoring at least this share of the best score is cited."""
MAX_SOURCES = 5
HIT_LISTS = ("hits", "results", "records")
"""The keys of a search result object that may hold its list of hits."""


@dataclass(frozen=True)
class SourceHit:
    """One hit of a search result, as a grounded answer reads it from the tool's JSON.

    ``label`` may be empty or name only the record's key; ``timecode`` and ``page`` are
    ``None`` when the hit has none.
    """

    section_tipo: str
    section_id: int | str
    label: str = ""
    snippet: str = ""
    score: float = 0.0
    timecode: str | None = None
    page: str | None = None

    @classmethod
    def from_json(cls, hit: JsonObject) -> SourceHit | None:
        """The hit of a search result's JSON object (``None``: it names no record)."""
        tipo, sid = hit.get("section_tipo"), hit.get("section_id")
        if not isinstance(tipo, str) or isinstance(sid, bool) or not isinstance(sid, int | str):
            return None
        return cls(
            tipo,
            sid,
            label=str(hit.get("label") or ""),
            snippet=str(hit.get("snippet", "")),
            score=_score(hit.get("score")),
            timecode=_mark(hit.get("timecode")),
            page=_mark(hit.get("page")),
        )

    def labelled(self, label: str) -> SourceHit:
        """The hit with ``label`` instead of its own."""
        return dataclasses.replace(self, label=label)


@dataclass
class Source:
    """One record a grounded answer cites, with the hits that found it (best first)."""

    section_tipo: str
    section_id: int | str
    score: float
    hits: list[SourceHit] = field(default_factory=list)
    record_label: str = ""
    """The archive's label for the record, used when no hit carries a label of its own."""

    @property
    def key(self) -> str:
        """``section_tipo/section_id``."""
        return f"{self.section_tipo}/{self.section_id}"

    @property
    def label(self) -> str:
        """The record's label as the hits give it (a hit naming only the key is skipped)."""
        for hit in self.hits:
            text = hit.label.strip()
            if text and text != self.key:
                return text
        return self.record_label or self.key

    @property
    def needs_label(self) -> bool:
        """Whether no hit names the record by more than its key."""
        return self.label == self.key


def hits_of(data: JsonValue) -> list[SourceHit]:
    """The hits in a search result (a list, or ``{"hits": [...]}``/``{"results": ...}``);
    an item that is not an object naming a record (``section_tipo``, ``section_id``) is
    skipped."""
    if isinstance(data, dict):
        for name in HIT_LISTS:
            found = data.get(name)
            if isinstance(found, list):
                data = found
                break
    if not isinstance(data, list):
        return []
    hits = (SourceHit.from_json(item) for item in data if isinstance(item, dict))
    return [hit for hit in hits if hit is not None]


def _score(value: JsonValue) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _mark(value: JsonValue) -> str | None:
    """A timecode or page as the prompt shows it (``None`` for none)."""
    return str(value) if value else None


def group_by_record(hits: list[SourceHit]) -> list[Source]:
    """One :class:`Source` per record, best score first (search order breaks ties)."""
    by_key: dict[tuple[str, str], Source] = {}
    for hit in hits:
        key = (hit.section_tipo, str(hit.section_id))
        source = by_key.get(key)
        if source is None:
            source = by_key[key] = Source(hit.section_tipo, hit.section_id, hit.score)
        source.score = max(source.score, hit.score)
        source.hits.append(hit)
    order = {key: n for n, key in enumerate(by_key)}
    return sorted(
        by_key.values(),
        key=lambda s: (-s.score, order[(s.section_tipo, str(s.section_id))]),
    )


def select_sources(hits: list[SourceHit], limit: int = MAX_SOURCES) -> list[Source]:
    """The records worth citing among ``hits`` (see the module docstring), at most ``limit``.

    With no positive score at all, only the first record is kept: the search found
    something, but nothing stands out.
    """
    records = group_by_record(hits)
    if not records:
        return []
    best = records[0].score
    if best <= 0:
        return records[:1]
    lead = set(leading_sections(records))
    chosen = [r for r in records if r.section_tipo in lead and r.score >= RELEVANT * best]
    return chosen[:limit]


def leading_sections(records: list[Source]) -> list[str]:
    """The lead sections of ``records`` (one per record, best first; see the module), in the
    order of their best records: the sections of the records scoring at least ``STRONG`` × the
    best, and the one whose records at or above ``RELEVANT`` × the best score most together
    (the first of equals)."""
    if not records:
        return []
    best = records[0].score
    if best <= 0:
        return [records[0].section_tipo]
    strong = {r.section_tipo for r in records if r.score >= STRONG * best}
    mass: dict[str, float] = {}
    for record in records:
        if record.score >= RELEVANT * best:
            mass[record.section_tipo] = mass.get(record.section_tipo, 0.0) + record.score
    strong.add(max(mass, key=mass.__getitem__))  # max keeps the first of equals
    return [tipo for tipo in dict.fromkeys(r.section_tipo for r in records) if tipo in strong]
