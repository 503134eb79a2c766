"""Read tools on the small oral-history archive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.archive import Archive, RecordKey
from app.core.archive.media import add_media
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry

from .conftest import TRANSCRIPT


async def _ids(registry: ToolRegistry, ctx: ToolContext, tipo: str, *filters: Any) -> list[int]:
    result = await registry.call(
        "dedalo_search_records", {"section_tipo": tipo, "filters": list(filters)}, ctx
    )
    assert result.ok, result.message
    assert [RecordKey(tipo, r["section_id"]) for r in result.data["records"]] == list(
        result.records
    )
    return [r["section_id"] for r in result.data["records"]]


async def test_read_record_values_by_language_and_portal_labels(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await registry.call(
        "dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}, ctx
    )
    assert result.ok
    data = result.data
    assert data["label"] == "When they made us leave"
    fields = {f["tipo"]: f for f in data["fields"]}
    assert fields["oh16"]["values"] == {
        "lg-cat": "Quan ens van fer marxar",
        "lg-eng": "When they made us leave",
    }
    assert fields["oh24"]["links"] == [
        {"section_tipo": "rsc197", "section_id": 1, "label": "Josep Vila"}
    ]
    assert fields["oh25"]["values"] == {"lg-cat": TRANSCRIPT}
    assert result.records == (RecordKey("oh1", 1), RecordKey("rsc197", 1))
    assert set(result.sections) == {"oh1", "rsc197"}


async def test_read_record_lists_portal_targets_in_restricted_sections(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await registry.call(
        "dedalo_read_record", {"section_tipo": "oh1", "section_id": 2}, ctx
    )
    assert RecordKey("oh99", 1) in result.records
    assert "oh99" in result.sections


async def test_read_record_shows_who_links_to_it(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call(
        "dedalo_read_record", {"section_tipo": "rsc197", "section_id": 2}, ctx
    )
    assert result.data["linked_from"] == [
        {
            "section_tipo": "oh1",
            "section_id": 2,
            "label": "La fàbrica",
            "field": "oh24",
            "field_label": "Informant",
        }
    ]
    assert RecordKey("oh1", 2) in result.records


async def test_read_record_by_field_labels_and_language(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    args = {"section_tipo": "oh1", "section_id": 1, "fields": ["Títol"], "lang": "lg-eng"}
    result = await registry.call("dedalo_read_record", args, ctx)
    assert [f["tipo"] for f in result.data["fields"]] == ["oh16"]
    assert result.data["fields"][0]["values"] == {"lg-eng": "When they made us leave"}
    bad = await registry.call("dedalo_read_record", {**args, "fields": ["Place of birth"]}, ctx)
    assert (bad.ok, bad.code) == (False, "mcp.field_unknown")


async def test_search_by_field_ignores_case_and_accents(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    assert await _ids(registry, ctx, "rsc197", {"field": "Birthplace", "value": "SURIA"}) == [1]
    assert await _ids(
        registry, ctx, "rsc197", {"field": "rsc85", "op": "equals", "value": "maria serra"}
    ) == [2]
    assert await _ids(
        registry, ctx, "rsc197", {"field": "rsc85", "op": "starts_with", "value": "jos"}
    ) == [1]
    assert (
        await _ids(registry, ctx, "oh1", {"field": "oh16", "value": "fabrica", "lang": "lg-eng"})
        == []
    )


async def test_search_across_a_portal_path(registry: ToolRegistry, ctx: ToolContext) -> None:
    path = ["oh1", "oh24", "rsc197", "rsc85"]
    assert await _ids(registry, ctx, "oh1", {"path": path, "value": "vila"}) == [1]
    short = ["Informant", "Birth date"]
    assert await _ids(registry, ctx, "oh1", {"path": short, "op": "gt", "value": 1930}) == [2]


async def test_relation_filters(registry: ToolRegistry, ctx: ToolContext) -> None:
    locator = {"section_tipo": "rsc197", "section_id": 2}
    assert await _ids(
        registry, ctx, "oh1", {"field": "oh24", "op": "equals", "value": locator}
    ) == [2]
    assert await _ids(registry, ctx, "oh1", {"field": "Informant", "op": "missing"}) == [3]
    by_label = {"field": "Informant", "op": "contains", "value": "VILA"}
    assert await _ids(registry, ctx, "oh1", by_label) == [1]
    no_id = {"field": "oh24", "op": "equals", "value": {"section_tipo": "rsc197"}}
    result = await registry.call(
        "dedalo_search_records", {"section_tipo": "oh1", "filters": [no_id]}, ctx
    )
    assert result.code == "mcp.invalid_filter"


async def test_ranges_on_numbers_and_dates(registry: ToolRegistry, ctx: ToolContext) -> None:
    weight = "numisdata30"
    assert await _ids(registry, ctx, "numisdata4", {"field": weight, "op": "gte", "value": 4}) == [
        2,
        3,
    ]
    assert await _ids(
        registry, ctx, "numisdata4", {"field": weight, "op": "between", "value": [3, 4.5]}
    ) == [1, 3]
    assert await _ids(
        registry, ctx, "rsc197", {"field": "rsc89", "op": "lt", "value": "1930-01-01"}
    ) == [1]
    assert await _ids(registry, ctx, "rsc197", {"field": "rsc90", "op": "exists"}) == [1]


async def test_exclude_restricted_drops_restricted_records_inside(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    assert await _ids(registry, ctx, "oh1") == [1, 2, 3]
    ctx.exclude_restricted = True
    assert await _ids(registry, ctx, "oh1") == [1, 2]
    closed = {"path": ["oh30", "oh99t"], "value": "secret"}
    assert await _ids(registry, ctx, "oh1", closed) == []
    ctx.exclude_restricted = False
    assert await _ids(registry, ctx, "oh1", closed) == [2]


async def test_search_paging_and_sections_touched(registry: ToolRegistry, ctx: ToolContext) -> None:
    args = {"section_tipo": "numisdata4", "limit": 2, "offset": 1}
    result = await registry.call("dedalo_search_records", args, ctx)
    assert result.data["total"] == 3
    assert [r["label"] for r in result.data["records"]] == ["Tarraco", "Ebusus"]
    path = {"path": ["oh24", "rsc85"], "value": "a"}
    result = await registry.call(
        "dedalo_search_records", {"section_tipo": "oh1", "filters": [path]}, ctx
    )
    assert set(result.sections) == {"oh1", "rsc197"}


async def test_count_records(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("dedalo_count_records", {"section_tipo": "People"}, ctx)
    assert result.data == {"section_tipo": "rsc197", "count": 2}
    filtered = await registry.call(
        "dedalo_count_records",
        {"section_tipo": "numisdata4", "filters": [{"field": "Mint", "value": "o"}]},
        ctx,
    )
    assert filtered.data["count"] == 2


async def test_search_section_finds_every_word_with_a_snippet(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await registry.call(
        "dedalo_search_section", {"section_tipo": "oh1", "query": "esglesia aigua"}, ctx
    )
    assert [r["section_id"] for r in result.data["records"]] == [1]
    hit = result.data["records"][0]
    assert hit["field"] == "oh25" and hit["field_label"] == "Transcription"
    assert "L'església del poble" in hit["snippet"]
    none = await registry.call(
        "dedalo_search_section", {"section_tipo": "oh1", "query": "esglesia fabrica"}, ctx
    )
    assert none.data["records"] == [] and none.records == ()


async def test_media_info(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive, tmp_path: Path
) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("interview notes")
    add_media(oral, RecordKey("oh1", 1), "oh17", source)
    result = await registry.call(
        "dedalo_get_media_info", {"section_tipo": "oh1", "section_id": "1"}, ctx
    )
    assert result.ok and result.records == (RecordKey("oh1", 1),)
    (media,) = result.data["media"]
    assert media["field_label"] == "Audio"
    assert media["mime"] == "text/plain" and media["size"] == len("interview notes")
