"""Write tools: label resolution, writability, idempotence, links, audit rows, plan validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey
from app.core.archive.model import Link
from app.core.errors import ArxiuError
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry
from app.core.tools.write import validate_write_args

ANNA = {
    "section_tipo": "rsc197",
    "match": {"Name": "Anna Pujol"},
    "set": {"Birth date": "1931", "Birthplace": "Súria"},
}


async def _ok(registry: ToolRegistry, ctx: ToolContext, name: str, args: dict[str, Any]) -> Any:
    result = await registry.call(name, args, ctx)
    assert result.ok, f"{result.code}: {result.message}"
    return result


async def test_create_record_with_field_labels(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    args = {"section_tipo": "rsc197", "values": {"Nom": "Anna Pujol", "rsc89": "1931"}}
    result = await _ok(registry, ctx, "dedalo_create_record", args)
    assert result.data == {"section_tipo": "rsc197", "section_id": 3, "created": True}
    record = oral.get_record(RecordKey("rsc197", 3))
    assert record.values["rsc85"] == [{"id": 1, "lang": "lg-nolan", "value": "Anna Pujol"}]
    assert result.records == (RecordKey("rsc197", 3),)


async def test_an_unknown_label_gives_candidates_and_writes_nothing(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    args = {"section_tipo": "rsc197", "values": {"Name": "Anna", "birth": "1931"}}
    result = await registry.call("dedalo_create_record", args, ctx)
    assert (result.ok, result.code) == (False, "mcp.field_unknown")
    assert {c["tipo"] for c in result.details["candidates"]} == {"rsc89", "rsc90", "rsc91"}
    assert oral.count_records("rsc197") == 2
    assert oral.audit_rows() == []


async def test_writes_only_in_writable_sections(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    result = await registry.call(
        "dedalo_set_field",
        {"section_tipo": "numisdata4", "section_id": 1, "field": "Mint", "value": "X"},
        ctx,
    )
    assert (result.ok, result.code) == (False, "mcp.section_not_writable")
    assert oral.get_record(RecordKey("numisdata4", 1)).text("numisdata27") == "Emporion"


async def test_find_or_create_is_idempotent(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    first = await _ok(registry, ctx, "dedalo_find_or_create", ANNA)
    second = await _ok(registry, ctx, "dedalo_find_or_create", ANNA)
    assert first.data["created"] is True and second.data["created"] is False
    assert first.data["section_id"] == second.data["section_id"] == 3
    assert oral.count_records("rsc197") == 3
    anna = oral.get_record(RecordKey("rsc197", 3))
    assert anna.text("rsc90") == "Súria" and anna.text("rsc89") == "1931"
    again = {**ANNA, "match": {"rsc85": "anna  PUJOL"}}
    assert (await _ok(registry, ctx, "dedalo_find_or_create", again)).data["section_id"] == 3
    assert [row["action"] for row in oral.audit_rows()] == ["create"]


async def test_find_or_create_finds_existing_records(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    args = {"section_tipo": "rsc197", "match": {"Name": "Josep Vila"}, "set": {"rsc90": "X"}}
    result = await _ok(registry, ctx, "dedalo_find_or_create", args)
    assert result.data == {
        "section_tipo": "rsc197",
        "section_id": 1,
        "created": False,
        "matched": 1,
    }
    assert oral.get_record(RecordKey("rsc197", 1)).text("rsc90") == "Súria"


async def test_portal_link_and_unlink_update_the_links_table(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    target = {"section_tipo": "rsc197", "section_id": 2}
    args = {"section_tipo": "oh1", "section_id": 1, "field": "Informant", "target": target}
    linked = await _ok(registry, ctx, "dedalo_portal_link", args)
    assert linked.data["linked"] is True
    again = await _ok(registry, ctx, "dedalo_portal_link", args)
    assert again.data["linked"] is False
    interview = RecordKey("oh1", 1)
    assert oral.links_to(RecordKey("rsc197", 2)) == [
        Link(interview, "oh24", RecordKey("rsc197", 2)),
        Link(RecordKey("oh1", 2), "oh24", RecordKey("rsc197", 2)),
    ]
    assert len(oral.get_record(interview).items("oh24")) == 2
    await _ok(registry, ctx, "dedalo_portal_unlink", args)
    assert [link.target for link in oral.links_from(interview)] == [RecordKey("rsc197", 1)]
    assert oral.find_record(RecordKey("rsc197", 2)) is not None


async def test_portal_link_checks_field_and_target(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    base = {"section_tipo": "oh1", "section_id": 1}
    wrong_section = {**base, "field": "oh24", "target": {"section_tipo": "oh99", "section_id": 1}}
    assert (await registry.call("dedalo_portal_link", wrong_section, ctx)).code == (
        "mcp.invalid_target"
    )
    missing = {**base, "field": "oh24", "target": {"section_tipo": "rsc197", "section_id": 42}}
    assert (await registry.call("dedalo_portal_link", missing, ctx)).code == (
        "archive.record_not_found"
    )
    not_relation = {**base, "field": "Title", "target": {"section_tipo": "rsc197", "section_id": 1}}
    assert (await registry.call("dedalo_portal_link", not_relation, ctx)).code == (
        "mcp.field_not_relation"
    )


async def test_audit_rows_carry_the_plan_info(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    args = {
        "section_tipo": "oh1",
        "section_id": 1,
        "field": "oh16",
        "value": "Marxar",
        "lang": "lg-cat",
    }
    await _ok(registry, ctx, "dedalo_set_field", args)
    (row,) = oral.audit_rows()
    assert (row["action"], row["section_tipo"], row["section_id"]) == ("update", "oh1", 1)
    assert (row["plan_hash"], row["op_id"], row["model"]) == ("h" * 64, "op1", "scripted")
    assert row["before"]["oh16"][0]["value"] == "Quan ens van fer marxar"
    values = {i["lang"]: i["value"] for i in row["after"]["oh16"]}
    assert values == {"lg-cat": "Marxar", "lg-eng": "When they made us leave"}


async def test_save_component_duplicate_and_delete(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    items = [{"lang": "lg-cat", "value": "Títol nou"}, {"lang": "lg-spa", "value": "Título"}]
    args = {"section_tipo": "oh1", "section_id": 2, "field": "oh16", "items": items}
    await _ok(registry, ctx, "dedalo_save_component", args)
    assert oral.get_record(RecordKey("oh1", 2)).text("oh16", "lg-spa") == "Título"
    copy = await _ok(
        registry, ctx, "dedalo_duplicate_record", {"section_tipo": "oh1", "section_id": 2}
    )
    assert copy.data["section_id"] == 4 and copy.data["created"] is True
    assert oral.get_record(RecordKey("oh1", 4)).text("oh16", "lg-spa") == "Título"
    await _ok(registry, ctx, "dedalo_delete_record", {"section_tipo": "oh1", "section_id": 4})
    assert oral.find_record(RecordKey("oh1", 4)) is None
    assert [r["action"] for r in oral.audit_rows()] == ["update", "duplicate", "delete"]


async def test_upload_media(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive, tmp_path: Path
) -> None:
    source = tmp_path / "take1.txt"
    source.write_text("audio stand-in")
    args = {"section_tipo": "oh1", "section_id": 1, "field": "Audio", "path": str(source)}
    result = await _ok(registry, ctx, "dedalo_upload_media", args)
    assert result.data["media"]["field"] == "oh17"
    assert (oral.media_dir / result.data["media"]["path"]).read_text() == "audio stand-in"
    assert oral.audit_rows()[-1]["action"] == "upload_media"
    wrong = await registry.call("dedalo_upload_media", {**args, "field": "Title"}, ctx)
    assert wrong.code == "mcp.field_not_media"
    gone = await registry.call("dedalo_upload_media", {**args, "path": str(tmp_path / "x")}, ctx)
    assert gone.code == "mcp.media_missing"


def test_validate_write_args_normalises_without_writing(
    registry: ToolRegistry, oral: Archive
) -> None:
    checked = validate_write_args(registry, "dedalo_find_or_create", ANNA, oral)
    assert checked["match"] == {"rsc85": "Anna Pujol"}
    assert checked["set"] == {"rsc89": "1931", "rsc90": "Súria"}
    link = {
        "section_tipo": "Oral history",
        "section_id": "1",
        "field": "Informant",
        "target": {"ref": "p1"},
    }
    checked = validate_write_args(registry, "dedalo_portal_link", link, oral)
    assert checked == {
        "section_tipo": "oh1",
        "section_id": 1,
        "field": "oh24",
        "target": {"ref": "p1"},
    }
    assert oral.count_records("rsc197") == 2 and oral.audit_rows() == []


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}, "mcp.not_write_tool"),
        ("dedalo_burn", {}, "mcp.tool_unknown"),
        (
            "dedalo_delete_record",
            {"section_tipo": "oh99", "section_id": 1},
            "mcp.section_not_writable",
        ),
        ("dedalo_delete_record", {"section_tipo": "oh1"}, "mcp.invalid_args"),
        (
            "dedalo_set_field",
            {"section_tipo": "oh1", "section_id": 1, "field": "Place", "value": "x"},
            "mcp.field_unknown",
        ),
        ("dedalo_find_or_create", {"section_tipo": "rsc197", "match": {}}, "mcp.invalid_args"),
        (
            "dedalo_portal_link",
            {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh24",
                "target": {"section_tipo": "rsc197"},
            },
            "mcp.invalid_args",
        ),
    ],
)
def test_validate_write_args_refusals(
    registry: ToolRegistry, oral: Archive, tool: str, args: dict[str, Any], code: str
) -> None:
    with pytest.raises(ArxiuError) as info:
        validate_write_args(registry, tool, args, oral)
    assert info.value.code == code


async def test_the_seed_recipe_applied_twice_makes_one_person_and_one_link(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    """find_or_create then portal_link with the created record, as a plan's apply runs them."""
    link = {"section_tipo": "oh1", "section_id": 3, "field": "Informant", "target": {"ref": "p1"}}
    validate_write_args(registry, "dedalo_find_or_create", ANNA, oral)
    validate_write_args(registry, "dedalo_portal_link", link, oral)
    for _ in range(2):
        person = await _ok(registry, ctx, "dedalo_find_or_create", ANNA)
        target = {"section_tipo": "rsc197", "section_id": person.data["section_id"]}
        await _ok(registry, ctx, "dedalo_portal_link", {**link, "target": target})
    anna = await registry.call(
        "dedalo_search_records",
        {"section_tipo": "rsc197", "filters": [{"field": "Name", "value": "Anna Pujol"}]},
        ctx,
    )
    assert anna.data["total"] == 1
    assert [x.target for x in oral.links_from(RecordKey("oh1", 3))] == [RecordKey("rsc197", 3)]
    assert [r["action"] for r in oral.audit_rows()] == ["create", "update"]


def test_relation_values_may_reference_earlier_ops(registry: ToolRegistry, oral: Archive) -> None:
    args = {"section_tipo": "oh1", "values": {"Title": "Nova", "Informant": {"ref": "p1"}}}
    checked = validate_write_args(registry, "dedalo_create_record", args, oral)
    assert checked["values"] == {"oh16": "Nova", "oh24": {"ref": "p1"}}
    bad = {"section_tipo": "oh1", "values": {"Informant": "Anna"}}
    with pytest.raises(ArxiuError) as info:
        validate_write_args(registry, "dedalo_create_record", bad, oral)
    assert info.value.code == "mcp.invalid_value"
