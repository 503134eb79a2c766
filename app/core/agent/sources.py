"""Choosing what a grounded answer cites: the relevant records among a search's hits.

A hybrid search always returns its ``k`` best chunks, relevant or not, so citing all of them
cites weak hits (the interviewer's person record under a question about interviews). The
sources are chosen from the hits alone — every cited record was returned by the search — by
three deterministic rules:

1. one entry per record, scored by its best hit;
2. *lead sections*: the sections of the records scoring at least ``STRONG`` × the best score
   (the best record's section always among them); records of other sections are weak hits;
3. a relative cut-off: a record of a lead section is cited when it scores at least
   ``RELEVANT`` × the best score.

Scores are the index's fused scores (best chunk 1.0 when both retrievers agree), so the
cut-offs are ratios to the best hit rather than absolute values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STRONG = 0.9
"""A record scoring at least this share of the best score makes its section a lead section."""
RELEVANT = 0.6
"""A record of a lead section scoring at least this share of the best score is cited."""
MAX_SOURCES = 5


@dataclass
class Source:
    """One record a grounded answer cites, with the hits that found it (best first)."""

    section_tipo: str
    section_id: Any
    score: float
    hits: list[dict[str, Any]] = field(default_factory=list)
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
            text = str(hit.get("label") or "").strip()
            if text and text != self.key:
                return text
        return self.record_label or self.key

    @property
    def needs_label(self) -> bool:
        """Whether no hit names the record by more than its key."""
        return self.label == self.key

    def to_citation_item(self) -> dict[str, Any]:
        """A locator with a label, for :func:`~app.core.agent.prompts.citation`."""
        return {
            "section_tipo": self.section_tipo,
            "section_id": self.section_id,
            "label": self.label,
        }


def hits_of(data: Any) -> list[dict[str, Any]]:
    """The hit dicts in a search result (a list, or ``{"hits": [...]}``/``{"results": ...}``)."""
    if isinstance(data, dict):
        for name in ("hits", "results", "records"):
            if isinstance(data.get(name), list):
                data = data[name]
                break
    if not isinstance(data, list):
        return []
    return [
        hit
        for hit in data
        if isinstance(hit, dict)
        and isinstance(hit.get("section_tipo"), str)
        and "section_id" in hit
    ]


def _score(hit: dict[str, Any]) -> float:
    value = hit.get("score")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def group_by_record(hits: list[dict[str, Any]]) -> list[Source]:
    """One :class:`Source` per record, best score first (search order breaks ties)."""
    by_key: dict[tuple[str, str], Source] = {}
    for hit in hits:
        key = (hit["section_tipo"], str(hit["section_id"]))
        source = by_key.get(key)
        if source is None:
            source = by_key[key] = Source(hit["section_tipo"], hit["section_id"], _score(hit))
        source.score = max(source.score, _score(hit))
        source.hits.append(hit)
    order = {key: n for n, key in enumerate(by_key)}
    return sorted(
        by_key.values(),
        key=lambda s: (-s.score, order[(s.section_tipo, str(s.section_id))]),
    )


def select_sources(hits: list[dict[str, Any]], limit: int = MAX_SOURCES) -> list[Source]:
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
    lead = {r.section_tipo for r in records if r.score >= STRONG * best}
    chosen = [r for r in records if r.section_tipo in lead and r.score >= RELEVANT * best]
    return chosen[:limit]
