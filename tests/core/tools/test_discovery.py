"""Discovery tools and label resolution: candidates, never a guess."""

from __future__ import annotations

import pytest

from app.core.archive import Archive
from app.core.errors import ToolError
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry
from app.core.tools.resolve import fold, resolve_field, resolve_section, resolve_tipo_path


def test_fold_ignores_case_accents_and_spacing() -> None:
    assert fold("  Història   ORAL ") == "historia oral"


def test_labels_in_any_language_resolve(oral: Archive) -> None:
    assert resolve_section(oral, "historia oral").tipo == "oh1"
    assert resolve_section(oral, "Persones").tipo == "rsc197"
    assert resolve_field(oral, "rsc197", "nom").tipo == "rsc85"
    assert resolve_field(oral, "oh1", "oh24").tipo == "oh24"


def test_a_partial_name_gives_candidates_not_a_guess(oral: Archive) -> None:
    with pytest.raises(ToolError) as info:
        resolve_field(oral, "rsc197", "birth")
    assert info.value.code == "mcp.field_unknown"
    tipos = {c["tipo"] for c in info.value.details["candidates"]}
    assert tipos == {"rsc89", "rsc90", "rsc91"}
    assert "Birth date (rsc89)" in info.value.message


def test_an_unrelated_name_lists_the_sections_fields(oral: Archive) -> None:
    with pytest.raises(ToolError) as info:
        resolve_field(oral, "numisdata4", "zzz")
    assert [c["tipo"] for c in info.value.details["candidates"]] == ["numisdata27", "numisdata30"]


def test_an_ambiguous_exact_label_is_not_guessed(oral: Archive) -> None:
    with pytest.raises(ToolError) as info:
        resolve_section(oral, "title")  # a field label, not a section
    assert info.value.code == "mcp.section_unknown"


def test_label_paths_cross_portals(oral: Archive) -> None:
    assert resolve_tipo_path(oral, ["Oral history", "Informant", "Name"]) == [
        "oh1",
        "oh24",
        "rsc197",
        "rsc85",
    ]
    assert resolve_tipo_path(oral, ["oh1", "oh24", "Persones", "rsc85"]) == [
        "oh1",
        "oh24",
        "rsc197",
        "rsc85",
    ]
    with pytest.raises(ToolError) as info:
        resolve_tipo_path(oral, ["oh1", "Title", "Name"])
    assert info.value.code == "mcp.path_invalid"


async def test_list_and_describe_sections(registry: ToolRegistry, ctx: ToolContext) -> None:
    listed = await registry.call("dedalo_list_sections", {}, ctx)
    tipos = [s["tipo"] for s in listed.data["sections"]]
    assert tipos == ["numisdata4", "oh1", "oh99", "rsc197"]
    closed = next(s for s in listed.data["sections"] if s["tipo"] == "oh99")
    assert closed["restricted"] is True and closed["writable"] is False
    assert listed.records == ()

    described = await registry.call(
        "dedalo_describe_section", {"section_tipo": "Oral history"}, ctx
    )
    fields = {f["tipo"]: f for f in described.data["fields"]}
    assert fields["oh24"]["kind"] == "relation"
    assert fields["oh24"]["target_section"] == "rsc197"
    assert fields["oh24"]["target_label"] == "People"
    assert list(fields) == ["oh16", "oh24", "oh25", "oh17", "oh30"]
    assert set(described.sections) == {"oh1", "rsc197", "oh99"}


async def test_resolve_returns_candidates(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("dedalo_resolve", {"name": "informant"}, ctx)
    assert result.data["unique"] is True
    assert result.data["candidates"][0]["tipo"] == "oh24"
    result = await registry.call("dedalo_resolve", {"name": "Title", "kind": "field"}, ctx)
    assert result.data["unique"] is False
    assert {c["tipo"] for c in result.data["candidates"]} == {"oh16", "oh99t"}
    within = await registry.call(
        "dedalo_resolve", {"name": "Title", "kind": "field", "section_tipo": "oh1"}, ctx
    )
    assert [c["tipo"] for c in within.data["candidates"]] == ["oh16"]


async def test_resolve_path_tool(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call(
        "dedalo_resolve_path", {"path": "Oral history > Informant > Name"}, ctx
    )
    assert result.data["path"] == ["oh1", "oh24", "rsc197", "rsc85"]
    assert [s["label"] for s in result.data["steps"]] == [
        "Oral history",
        "Informant",
        "People",
        "Name",
    ]
    bad = await registry.call("dedalo_resolve_path", {"path": "Oral history > Nothing"}, ctx)
    assert (bad.ok, bad.code) == (False, "mcp.field_unknown")
    assert bad.details["candidates"]


async def test_describe_node(registry: ToolRegistry, ctx: ToolContext) -> None:
    field = await registry.call("dedalo_describe_node", {"tipo": "oh24"}, ctx)
    assert field.data["node"] == "field" and field.data["target_section"] == "rsc197"
    section = await registry.call("dedalo_describe_node", {"tipo": "rsc197"}, ctx)
    assert section.data["node"] == "section"
    assert section.data["fields"] == ["rsc85", "rsc89", "rsc90", "rsc91"]
    missing = await registry.call("dedalo_describe_node", {"tipo": "xx9"}, ctx)
    assert missing.code == "mcp.node_unknown"
