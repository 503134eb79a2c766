"""Read tools (egress class ``content``): records, field and relation searches, counts, media."""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import TypedDict

from app.core.archive.media import media_of
from app.core.archive.model import Record, RecordKey
from app.core.tools.base import ToolContext, ToolResult, tool
from app.core.tools.query import Filter, compile_filters, run_search
from app.core.tools.records_view import record_view, search_text, snippet_for
from app.core.tools.resolve import resolve_field, resolve_section

MAX_LIMIT = 100


class Listed(TypedDict):
    """A record in a listing."""

    section_tipo: str
    section_id: int
    label: str


def _filters_summary(args: Mapping[str, object]) -> tuple[str, dict[str, str]]:
    """The summary template of a filtered search, and its ``{count}`` of filters."""
    filters = args.get("filters")
    count = len(filters) if isinstance(filters, Sized) and filters else 0
    where = {0: "", 1: " with 1 filter"}.get(count, " with {count} filters")
    return "Search records in {section_tipo}" + where, {"count": str(count)}


def _count_summary(args: Mapping[str, object]) -> tuple[str, dict[str, str]]:
    """The summary template of a count (see :func:`_filters_summary`)."""
    template, slots = _filters_summary(args)
    return "Count" + template.removeprefix("Search"), slots


@tool("content", "Read record {section_tipo}/{section_id}")
async def dedalo_read_record(
    ctx: ToolContext,
    section_tipo: str,
    section_id: int,
    fields: list[str] | None = None,
    lang: str | None = None,
) -> ToolResult:
    """Read one record: its values by language, and its relations with the linked records' labels.

    Also lists the records that link to it. Long texts are cut; read passages of a transcription
    with dedalo_retrieve_passages.

    Args:
        section_tipo: the record's section tipo (e.g. oh1).
        section_id: the record's id within its section.
        fields: only these fields (tipos or labels); all when omitted.
        lang: only values in this language (e.g. lg-cat) and language-neutral ones.
    """
    section = resolve_section(ctx.archive, section_tipo, ctx.lang)
    record = ctx.archive.get_record(RecordKey(section.tipo, section_id))
    wanted = [resolve_field(ctx.archive, section.tipo, f, ctx.lang).tipo for f in fields or []]
    data, related = await ctx.archive.db.aread(
        lambda _conn: record_view(ctx, record, wanted or None, lang)
    )
    keys = (record.key, *related)
    return ToolResult(
        ok=True, data=data, records=keys, sections=tuple(sorted({k.section_tipo for k in keys}))
    )


def _listing(ctx: ToolContext, records: list[Record]) -> list[Listed]:
    return [
        Listed(
            section_tipo=r.section_tipo,
            section_id=r.section_id,
            label=ctx.archive.label_of(r, ctx.lang),
        )
        for r in records
    ]


@tool("content", _filters_summary)
async def dedalo_search_records(
    ctx: ToolContext,
    section_tipo: str,
    filters: list[Filter] | None = None,
    limit: int = 20,
    offset: int = 0,
) -> ToolResult:
    """Find the records of one section whose fields (or linked records' fields) match filters.

    Filters combine with AND. A filter's path can cross portals: ["oh1", "oh24", "rsc197",
    "rsc85"] with op contains and value "Pujol" finds interviews whose informant's name contains
    Pujol. Text comparisons ignore case and accents. Returns labels; read a record for its values.

    Args:
        section_tipo: the section searched (tipo or exact label).
        filters: the conditions, all of which must hold; none lists the section's records.
        limit: at most this many records (1-100).
        offset: skip this many records (for the next page).
    """
    section = resolve_section(ctx.archive, section_tipo, ctx.lang)
    compiled = compile_filters(
        ctx.archive, section.tipo, list(filters or []), ctx.exclude_restricted
    )
    limit = max(1, min(limit, MAX_LIMIT))
    total, records = await ctx.archive.db.aread(
        lambda _conn: run_search(ctx.archive, compiled, limit=limit, offset=max(0, offset))
    )
    data = {"total": total, "offset": offset, "records": _listing(ctx, records)}
    return ToolResult(
        ok=True,
        data=data,
        records=tuple(r.key for r in records),
        sections=tuple(sorted(compiled.sections)),
    )


@tool("content", _count_summary)
async def dedalo_count_records(
    ctx: ToolContext, section_tipo: str, filters: list[Filter] | None = None
) -> ToolResult:
    """Count the records of one section, optionally only those matching filters.

    Args:
        section_tipo: the section counted (tipo or exact label).
        filters: conditions as in dedalo_search_records, all of which must hold.
    """
    section = resolve_section(ctx.archive, section_tipo, ctx.lang)
    compiled = compile_filters(
        ctx.archive, section.tipo, list(filters or []), ctx.exclude_restricted
    )
    total, _ = await ctx.archive.db.aread(
        lambda _conn: run_search(ctx.archive, compiled, limit=1, offset=0)
    )
    data = {"section_tipo": section.tipo, "count": total}
    return ToolResult(ok=True, data=data, sections=tuple(sorted(compiled.sections)))


@tool("content", "Search {section_tipo} for “{query}”")
async def dedalo_search_section(
    ctx: ToolContext, section_tipo: str, query: str, limit: int = 20
) -> ToolResult:
    """Find records of one section containing every word of a text, in any field or language.

    Matching ignores case and accents; each result has a snippet around the first match. For
    searches by meaning use dedalo_semantic_search.

    Args:
        section_tipo: the section searched (tipo or exact label).
        query: the words to find (all of them must appear).
        limit: at most this many records (1-100).
    """
    section = resolve_section(ctx.archive, section_tipo, ctx.lang)
    limit = max(1, min(limit, MAX_LIMIT))
    total, records = await ctx.archive.db.aread(
        lambda _conn: search_text(ctx, section.tipo, query, limit)
    )
    listing = [
        {**item, **snippet_for(ctx, record, query)}
        for item, record in zip(_listing(ctx, records), records, strict=True)
    ]
    data = {"total": total, "records": listing}
    return ToolResult(
        ok=True, data=data, records=tuple(r.key for r in records), sections=(section.tipo,)
    )


@tool("content", "Media of {section_tipo}/{section_id}")
async def dedalo_get_media_info(ctx: ToolContext, section_tipo: str, section_id: int) -> ToolResult:
    """Describe the media files attached to a record: kind, size, dimensions, duration.

    Args:
        section_tipo: the record's section tipo.
        section_id: the record's id within its section.
    """
    key = RecordKey(resolve_section(ctx.archive, section_tipo, ctx.lang).tipo, section_id)
    ctx.archive.get_record(key)
    labels = {f.tipo: f.label(ctx.lang) for f in ctx.archive.fields(key.section_tipo)}
    media = [
        {
            "id": m.id,
            "field": m.field_tipo,
            "field_label": labels.get(m.field_tipo, m.field_tipo),
            "mime": m.mime,
            "size": m.size,
            "width": m.width,
            "height": m.height,
            "duration_s": m.duration_s,
            "path": m.path,
            "thumbnail": m.thumbnail,
        }
        for m in media_of(ctx.archive, key)
    ]
    data = {"section_tipo": key.section_tipo, "section_id": key.section_id, "media": media}
    return ToolResult(ok=True, data=data, records=(key,), sections=(key.section_tipo,))


TOOLS = (
    dedalo_read_record,
    dedalo_search_records,
    dedalo_count_records,
    dedalo_search_section,
    dedalo_get_media_info,
)
