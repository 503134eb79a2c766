"""Write tools keep links real: relation values checked like portal targets; no guessed match."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.archive import Archive, RecordKey
from app.core.errors import ArxiuError
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry
from app.core.tools.write import validate_write_args

MISSING = {"section_tipo": "rsc197", "section_id": 999}
WRONG_SECTION = {"section_tipo": "numisdata4", "section_id": 1}


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        (
            "dedalo_set_field",
            {"section_tipo": "oh1", "section_id": 1, "field": "oh24", "value": MISSING},
            "archive.record_not_found",
        ),
        (
            "dedalo_set_field",
            {"section_tipo": "oh1", "section_id": 1, "field": "oh24", "value": WRONG_SECTION},
            "mcp.invalid_target",
        ),
        (
            "dedalo_set_field",
            {"section_tipo": "oh1", "section_id": 1, "field": "oh24", "value": 999},
            "archive.record_not_found",
        ),
        (
            "dedalo_save_component",
            {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh24",
                "items": [{"value": MISSING}],
            },
            "archive.record_not_found",
        ),
        (
            "dedalo_create_record",
            {"section_tipo": "oh1", "values": {"oh16": "New", "oh24": WRONG_SECTION}},
            "mcp.invalid_target",
        ),
        (
            "dedalo_find_or_create",
            {"section_tipo": "oh1", "match": {"oh16": "Another"}, "set": {"oh24": MISSING}},
            "archive.record_not_found",
        ),
        (
            "dedalo_find_or_create",
            {
                "section_tipo": "oh1",
                "match": {"oh16": "Another"},
                "set": {"oh24": {"section_tipo": "numisdata4", "section_id": 424242}},
            },
            "mcp.invalid_target",
        ),
    ],
    ids=[
        "set-missing",
        "set-wrong-section",
        "set-missing-id",
        "save-missing",
        "create-wrong-section",
        "foc-set-missing",
        "foc-set-wrong-section",
    ],
)
async def test_relation_values_must_name_real_records_of_the_target_section(
    registry: ToolRegistry,
    ctx: ToolContext,
    oral: Archive,
    tool: str,
    args: dict[str, Any],
    code: str,
) -> None:
    before = [r.values for r in oral.iter_records()]
    with pytest.raises(ArxiuError) as proposal:
        validate_write_args(registry, tool, args, oral)
    assert proposal.value.code == code
    result = await registry.call(tool, args, ctx)
    assert (result.ok, result.code) == (False, code)
    assert [r.values for r in oral.iter_records()] == before
    assert oral.audit_rows() == []


async def test_a_match_with_several_records_is_refused_with_its_candidates(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    twin = {"rsc85": [{"lang": "lg-nolan", "value": "Josep Vila"}]}
    oral.create_record("rsc197", twin)
    args = {"section_tipo": "rsc197", "match": {"Name": "Josep Vila"}, "set": {"rsc90": "Vic"}}
    with pytest.raises(ArxiuError) as proposal:
        validate_write_args(registry, "dedalo_find_or_create", args, oral)
    assert proposal.value.code == "mcp.match_ambiguous"
    expected = [
        {"label": "Josep Vila", "section_tipo": "rsc197", "section_id": 1},
        {"label": "Josep Vila", "section_tipo": "rsc197", "section_id": 3},
    ]
    assert proposal.value.details["candidates"] == expected
    result = await registry.call("dedalo_find_or_create", args, ctx)  # at apply, too
    assert (result.ok, result.code) == (False, "mcp.match_ambiguous")
    assert result.details["candidates"] == expected
    assert "rsc197/1" in result.message and "rsc197/3" in result.message
    assert oral.count_records("rsc197") == 3
    assert oral.get_record(RecordKey("rsc197", 1)).text("rsc90") == "Súria"


async def test_delete_refuses_a_linked_record_and_unlinks_on_request(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    person = {"section_tipo": "rsc197", "section_id": 1}
    refused = await registry.call("dedalo_delete_record", person, ctx)
    assert (refused.ok, refused.code) == (False, "archive.record_linked")
    assert refused.details["linked_from"] == [
        {"section_tipo": "oh1", "section_id": 1, "field_tipo": "oh24"}
    ]
    with pytest.raises(ArxiuError):
        validate_write_args(registry, "dedalo_delete_record", person, oral)
    done = await registry.call("dedalo_delete_record", {**person, "unlink": True}, ctx)
    assert done.ok, done.message
    assert done.data["unlinked"] == [{"section_tipo": "oh1", "section_id": 1, "field": "oh24"}]
    assert oral.links_to(RecordKey("rsc197", 1)) == []
