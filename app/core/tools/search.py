"""Search tools (egress class ``content``): semantic search over the index, passages of a record."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sized
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from app.core.archive.hierarchy import subtree
from app.core.archive.model import Record, RecordKey
from app.core.errors import ToolError
from app.core.index.hits import HitDict, SearchFilter, SearchHit
from app.core.phrases import Phrase
from app.core.tools.base import ToolContext, ToolResult, tool
from app.core.tools.resolve import fold, resolve_section

MAX_K = 50
MARKER = re.compile(r"\[TC_(\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)_TC\]|\[page-n-([^\]]+)\]")
PASSAGE_KINDS = ("transcription", "rich_text")
MAX_PASSAGE_CHARS = 1500


def _unavailable() -> ToolError:
    return ToolError(
        "index.unavailable",
        "The semantic index is not available in this run.",
        hint="Use dedalo_search_section or dedalo_search_records for text searches.",
        category="environment",
        retryable=True,
    )


class PassageDict(TypedDict):
    """A passage as the model sees it (``score`` when the index found it)."""

    field: str
    lang: str
    timecode: str | None
    page: str | None
    text: str
    score: NotRequired[float]


def _hit_dicts(hits: list[SearchHit]) -> list[HitDict]:
    return [hit.to_dict() for hit in hits]


def _keys(hits: list[SearchHit]) -> tuple[RecordKey, ...]:
    return tuple(dict.fromkeys(h.key for h in hits))


def _search_summary(args: Mapping[str, object]) -> tuple[str, dict[str, str]]:
    """The summary template of a search by meaning, saying the record it is kept to (with what
    is under it) or how many sections (so a composed answer's list search does not read as its
    first search again)."""
    if args.get("within"):
        return "Search by meaning within {within}: “{query}”", {}
    sections = args.get("sections")
    count = len(sections) if isinstance(sections, Sized) and sections else 0
    where = {0: "", 1: " in 1 section"}.get(count, " in {count} sections")
    return "Search by meaning" + where + ": “{query}”", {"count": str(count)}


@tool("content", _search_summary)
async def dedalo_semantic_search(
    ctx: ToolContext,
    query: str,
    k: int = 8,
    sections: list[str] | None = None,
    per_record: bool = True,
    within: str | None = None,
) -> ToolResult:
    """Find the passages of records closest in meaning to a description, in any language.

    Describe the idea rather than exact words ("people who had to leave their homes when the
    reservoir was built"). Each hit names its record, the field, a snippet and, for
    transcriptions and documents, the timecode or page. Cite hits as Label (section_tipo/id).

    Args:
        query: what to look for, in plain words.
        k: how many hits to return (1-50).
        sections: only search these sections (tipos or exact labels).
        per_record: one hit per record, its best passage (false: every matching passage).
        within: only this record and every record under it, as section_tipo/id (a fonds
            with its series and files: "ead1/12").
    """
    if ctx.searcher is None:
        raise _unavailable()
    tipos = tuple(resolve_section(ctx.archive, s, ctx.lang).tipo for s in sections or [])
    records = await asyncio.to_thread(_within, ctx, within) if within else ()
    flt = SearchFilter(sections=tipos, records=records, exclude_restricted=ctx.exclude_restricted)
    hits = await asyncio.to_thread(
        ctx.searcher.search,
        query,
        k=max(1, min(k, MAX_K)),
        mode="hybrid",
        filter=flt,
        group_by_record=per_record,
    )
    keys = _keys(hits)
    data = {"query": query, "hits": _hit_dicts(hits)}
    return ToolResult(
        ok=True, data=data, records=keys, sections=tuple(sorted({k.section_tipo for k in keys}))
    )


def _within(ctx: ToolContext, within: str) -> tuple[RecordKey, ...]:
    """The record ``within`` names (``section_tipo/id``, which must exist) and every record
    under it."""
    try:
        key = RecordKey.parse(within.strip())
    except ValueError:
        raise ToolError(
            "mcp.invalid_value",
            Phrase.of("within {value!r} is not a record: give section_tipo/id.", value=within),
            hint='Name the record as its hits cite it, e.g. "ead1/12".',
        ) from None
    top = ctx.archive.get_record(key).key  # archive.record_not_found
    return subtree(ctx.archive, top)


@dataclass(frozen=True)
class Passage:
    """A part of a long text, with where it starts."""

    field_tipo: str
    lang: str
    text: str
    timecode: str | None = None
    page: str | None = None

    def to_dict(self) -> PassageDict:
        """JSON form for the model."""
        return {
            "field": self.field_tipo,
            "lang": self.lang,
            "timecode": self.timecode,
            "page": self.page,
            "text": self.text,
        }


def split_passages(field_tipo: str, lang: str, text: str) -> list[Passage]:
    """Split a text at ``[TC_HH:MM:SS.mmm_TC]`` and ``[page-n-X]`` markers (then by length)."""
    out: list[Passage] = []
    timecode: str | None = None
    page: str | None = None
    position = 0
    for match in [*MARKER.finditer(text), None]:
        end = match.start() if match else len(text)
        chunk = " ".join(text[position:end].split())
        for start in range(0, len(chunk), MAX_PASSAGE_CHARS):
            out.append(
                Passage(field_tipo, lang, chunk[start : start + MAX_PASSAGE_CHARS], timecode, page)
            )
        if match:
            timecode = match.group(1) or timecode
            page = match.group(2) or page
            position = match.end()
    return out


def record_passages(ctx: ToolContext, record: Record) -> list[Passage]:
    """Every passage of the record's long texts (else of its plain texts), in field order."""
    fields = [f for f in ctx.archive.fields(record.section_tipo) if record.items(f.tipo)]
    long_texts = [f for f in fields if f.kind in PASSAGE_KINDS]
    out: list[Passage] = []
    for fld in long_texts or [f for f in fields if f.kind == "text"]:
        for item in record.items(fld.tipo):
            if isinstance(item.get("value"), str):
                out.extend(split_passages(fld.tipo, str(item.get("lang")), item["value"]))
    return out


def _rank(passages: list[Passage], query: str) -> list[Passage]:
    words = fold(query).split()
    scored = [(sum(fold(p.text).count(w) for w in words), n, p) for n, p in enumerate(passages)]
    return [p for score, _, p in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0]


@tool("content", "Passages of {section_tipo}/{section_id}")
async def dedalo_retrieve_passages(
    ctx: ToolContext,
    section_tipo: str,
    section_id: int,
    query: str | None = None,
    k: int = 5,
    offset: int = 0,
) -> ToolResult:
    """Read passages of one record's long texts (transcriptions, documents) with timecode/page.

    With a query, returns the passages that best match it (by meaning when the index is
    available); without one, the passages in order, k at a time from offset.

    Args:
        section_tipo: the record's section tipo.
        section_id: the record's id within its section.
        query: what to look for within the record.
        k: how many passages to return (1-50).
        offset: without a query, skip this many passages (for the next part).
    """
    key = RecordKey(resolve_section(ctx.archive, section_tipo, ctx.lang).tipo, section_id)
    record = ctx.archive.get_record(key)
    k = max(1, min(k, MAX_K))
    data: dict[str, object] = {"section_tipo": key.section_tipo, "section_id": key.section_id}
    if query and ctx.searcher is not None:
        flt = SearchFilter(records=(key,), exclude_restricted=ctx.exclude_restricted)
        hits = await asyncio.to_thread(ctx.searcher.search, query, k=k, mode="hybrid", filter=flt)
        data["passages"] = [_hit_passage(h) for h in hits if h.key == key]
        return ToolResult(ok=True, data=data, records=(key,), sections=(key.section_tipo,))
    passages = record_passages(ctx, record)
    data["total"] = len(passages)
    chosen = _rank(passages, query)[:k] if query else passages[max(0, offset) : offset + k]
    data["passages"] = [p.to_dict() for p in chosen]
    return ToolResult(ok=True, data=data, records=(key,), sections=(key.section_tipo,))


def _hit_passage(hit: SearchHit) -> PassageDict:
    return {
        "field": hit.field_tipo,
        "lang": hit.lang,
        "timecode": hit.timecode,
        "page": hit.page,
        "text": hit.snippet,
        "score": round(hit.score, 6),
    }


TOOLS = (dedalo_semantic_search, dedalo_retrieve_passages)
