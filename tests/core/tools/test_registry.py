"""The registry: registration rules, the tripwire, specs, summaries, calls."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from app.core.errors import ArxiuError, ToolError
from app.core.tools import discovery, read, search, write
from app.core.tools.base import EGRESS_CLASSES, EgressClass, ToolContext, ToolResult, tool
from app.core.tools.registry import ToolRegistry, build_registry

SEED_TOOLS: dict[EgressClass, set[str]] = {
    "structure": {
        "dedalo_list_sections",
        "dedalo_describe_section",
        "dedalo_resolve",
        "dedalo_resolve_path",
        "dedalo_describe_node",
    },
    "content": {
        "dedalo_read_record",
        "dedalo_search_records",
        "dedalo_count_records",
        "dedalo_search_section",
        "dedalo_get_media_info",
        "dedalo_semantic_search",
        "dedalo_retrieve_passages",
    },
    "write": {
        "dedalo_create_record",
        "dedalo_duplicate_record",
        "dedalo_delete_record",
        "dedalo_set_field",
        "dedalo_save_component",
        "dedalo_portal_link",
        "dedalo_portal_unlink",
        "dedalo_find_or_create",
        "dedalo_upload_media",
    },
}


# -- the tripwire ------------------------------------------------------------------------------
def test_tripwire_every_tool_has_a_class_and_a_description(registry: ToolRegistry) -> None:
    for registered in registry.tools():
        assert registered.egress in EGRESS_CLASSES, registered.name
        assert registered.description.strip(), registered.name
        for name, prop in registered.parameters["properties"].items():
            assert prop.get("description"), f"{registered.name}.{name} is not described"


def test_tripwire_every_tool_function_in_the_modules_is_registered(
    registry: ToolRegistry,
) -> None:
    for module in (discovery, read, search, write):
        defined = {
            name
            for name, fn in inspect.getmembers(module, inspect.iscoroutinefunction)
            if name.startswith("dedalo_")
        }
        assert defined <= set(registry.names()), module.__name__
        for name in defined:
            assert getattr(module, name).__arxiu_tool__.egress in EGRESS_CLASSES


def test_the_registry_holds_exactly_the_seed_tools_by_class(registry: ToolRegistry) -> None:
    for egress, names in SEED_TOOLS.items():
        assert {t.name for t in registry.tools([egress])} == names


def test_registering_without_a_class_is_refused() -> None:
    async def dedalo_x(ctx: ToolContext) -> ToolResult:
        """Something."""
        return ToolResult(ok=True)

    with pytest.raises(TypeError, match="egress"):
        ToolRegistry().register(dedalo_x)
    with pytest.raises(TypeError, match="egress"):
        ToolRegistry().register(dedalo_x, egress="public")  # type: ignore[arg-type]


def test_registering_without_a_docstring_or_twice_is_refused() -> None:
    @tool("structure", "x")
    async def dedalo_undocumented(ctx: ToolContext) -> ToolResult:
        return ToolResult(ok=True)

    with pytest.raises(TypeError, match="docstring"):
        ToolRegistry().register(dedalo_undocumented)
    reg = ToolRegistry()
    reg.register(discovery.dedalo_list_sections)
    with pytest.raises(TypeError, match="twice"):
        reg.register(discovery.dedalo_list_sections)


# -- specs and summaries -----------------------------------------------------------------------
def test_specs_filter_by_class(registry: ToolRegistry) -> None:
    specs = registry.specs(["structure", "content"])
    names = {s.name for s in specs}
    assert names == SEED_TOOLS["structure"] | SEED_TOOLS["content"]
    spec = next(s for s in specs if s.name == "dedalo_read_record")
    assert spec.parameters["required"] == ["section_tipo", "section_id"]
    assert spec.description.startswith("Read one record")
    assert len(registry.specs()) == 21


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("dedalo_read_record", {"section_tipo": "oh1", "section_id": 4}, "Read record oh1/4"),
        (
            "dedalo_search_records",
            {"section_tipo": "oh1", "filters": [{}, {}]},
            "Search records in oh1 with 2 filters",
        ),
        ("dedalo_count_records", {"section_tipo": "rsc197"}, "Count records in rsc197"),
        ("dedalo_semantic_search", {"query": "reservoir"}, "Search by meaning: “reservoir”"),
        ("dedalo_read_record", {"section_tipo": "oh1"}, "Read record oh1/?"),
        (
            "dedalo_portal_link",
            {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh24",
                "target": {"section_tipo": "rsc197", "section_id": 3},
            },
            'Link {"section_tipo": "rsc197", "section_id": 3} as oh24 of oh1/1',
        ),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
def test_summaries(registry: ToolRegistry, name: str, args: dict[str, Any], expected: str) -> None:
    assert registry.summary(name, args) == expected


def test_long_values_are_shortened_in_summaries(registry: ToolRegistry) -> None:
    text = registry.summary("dedalo_semantic_search", {"query": "x" * 500})
    assert len(text) < 100 and text.endswith("…”")


# -- calls -------------------------------------------------------------------------------------
async def test_unknown_tool_is_a_result_not_a_crash(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await registry.call("dedalo_drop_everything", {}, ctx)
    assert (result.ok, result.code) == (False, "mcp.tool_unknown")


async def test_invalid_args_name_the_problem(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("dedalo_read_record", {"section_tipo": "oh1", "x": 1}, ctx)
    assert (result.ok, result.code) == (False, "mcp.invalid_args")
    assert "missing 'section_id'" in result.message
    assert "unknown argument 'x'" in result.message
    assert result.to_model_payload()["error"]["code"] == "mcp.invalid_args"


async def test_an_arxiu_error_inside_a_tool_becomes_a_failed_result(ctx: ToolContext) -> None:
    @tool("content", "boom")
    async def dedalo_boom(ctx: ToolContext) -> ToolResult:
        """Fail on purpose."""
        raise ToolError("mcp.boom", "It failed.", hint="Try less.", details={"why": "test"})

    reg = ToolRegistry()
    reg.register(dedalo_boom)
    result = await reg.call("dedalo_boom", None, ctx)
    assert not result.ok
    payload = result.to_model_payload()
    assert payload == {
        "ok": False,
        "error": {
            "code": "mcp.boom",
            "message": "It failed.",
            "hint": "Try less.",
            "details": {"why": "test"},
        },
    }


async def test_a_bug_inside_a_tool_is_not_swallowed(ctx: ToolContext) -> None:
    @tool("content", "bug")
    async def dedalo_bug(ctx: ToolContext) -> ToolResult:
        """A bug."""
        raise ZeroDivisionError

    reg = ToolRegistry()
    reg.register(dedalo_bug)
    with pytest.raises(ZeroDivisionError):
        await reg.call("dedalo_bug", {}, ctx)


async def test_record_not_found_comes_back_coded(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call(
        "dedalo_read_record", {"section_tipo": "oh1", "section_id": 99}, ctx
    )
    assert (result.ok, result.code) == (False, "archive.record_not_found")


def test_get_unknown_raises_coded() -> None:
    with pytest.raises(ArxiuError) as info:
        build_registry().get("nope")
    assert info.value.code == "mcp.tool_unknown"
