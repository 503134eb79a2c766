"""What a write op touches, and the wall for a caller without the restricted right.

The world is the agent tests' archive (``oh1/3`` links the restricted witness ``rsc300/1``)
plus ``rsc197/2``, linked from the restricted interview ``oh1/4`` (record flag) and from the
open ``oh1/5``, and ``rsc197/3``, linked from nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError
from app.core.tools.base import ToolContext
from app.core.tools.registry import build_registry
from app.core.tools.write_effects import guard_effects, guard_plan, guard_unlinks, touched_records
from tests.core.agent.conftest import SECRET, build_archive

CLOSED = RecordKey("oh1", 4)


def _link(tipo: str, sid: int) -> list[dict[str, Any]]:
    return [{"lang": "lg-nolan", "value": {"section_tipo": tipo, "section_id": sid}}]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Archive]:
    """The archive described above."""
    archive = build_archive(tmp_path / "oh")
    archive.create_record("rsc197", {"rsc85": [{"lang": "lg-eng", "value": "Rosa Vidal"}]})
    archive.create_record("rsc197", {"rsc85": [{"lang": "lg-eng", "value": "Jordi Mas"}]})
    title = [{"lang": "lg-eng", "value": f"{SECRET} closed interview"}]
    archive.create_record("oh1", {"oh2": title, "oh24": _link("rsc197", 2)}, restricted=True)
    archive.create_record("oh1", {"oh2": [{"lang": "lg-eng", "value": "Open"}]})
    archive.update_record(RecordKey("oh1", 5), {"oh24": _link("rsc197", 2)})
    yield archive
    archive.close()


def _refusal(archive: Archive, tool: str, args: dict[str, Any]) -> ArxiuError | None:
    try:
        guard_effects(archive, tool, args)
    except ArxiuError as error:
        return error
    return None


def test_a_delete_touches_the_record_its_linkers_and_its_targets(world: Archive) -> None:
    args = {"section_tipo": "rsc197", "section_id": 2, "unlink": True}
    assert set(touched_records(world, "dedalo_delete_record", args)) == {
        RecordKey("rsc197", 2),
        CLOSED,
        RecordKey("oh1", 5),
    }
    three = {"section_tipo": "oh1", "section_id": 3}
    assert RecordKey("rsc300", 1) in touched_records(world, "dedalo_delete_record", three)


def test_a_field_write_touches_the_links_it_drops_by_label_too(world: Archive) -> None:
    args = {"section_tipo": "oh1", "section_id": 3, "field": "Witness", "value": None}
    assert RecordKey("rsc300", 1) in touched_records(world, "dedalo_set_field", args)
    refused = _refusal(world, "dedalo_save_component", {**args, "items": []})
    assert refused is not None and refused.code == "mcp.egress_restricted"
    assert not refused.details and "rsc300" not in refused.message


def test_a_linked_delete_names_only_the_open_linkers(world: Archive) -> None:
    refused = _refusal(world, "dedalo_delete_record", {"section_tipo": "rsc197", "section_id": 2})
    assert refused is not None and refused.code == "archive.record_linked"
    assert refused.message == "Record rsc197/2 cannot be deleted: other records link to it."
    assert refused.details == {
        "linked_from": [{"section_tipo": "oh1", "section_id": 5, "field_tipo": "oh24"}]
    }
    unlinking = {"section_tipo": "rsc197", "section_id": "2", "unlink": True}  # digits count
    refused = _refusal(world, "dedalo_delete_record", unlinking)
    assert refused is not None and refused.code == "mcp.egress_restricted"
    assert (
        _refusal(world, "dedalo_delete_record", {"section_tipo": "rsc197", "section_id": 3}) is None
    )
    assert _refusal(world, "dedalo_delete_record", {**unlinking, "section_id": 3}) is None


def test_a_find_or_create_that_finds_a_restricted_record_is_refused(world: Archive) -> None:
    match = {"section_tipo": "oh1", "match": {"Title": f"{SECRET} closed interview"}}
    refused = _refusal(world, "dedalo_find_or_create", match)
    assert refused is not None and refused.code == "mcp.egress_restricted"
    assert _refusal(world, "dedalo_find_or_create", {**match, "match": {"Title": "Open"}}) is None


def test_open_ops_pass_and_refs_wait_for_the_apply(world: Archive) -> None:
    ops = [
        {
            "op_id": "u1",
            "tool": "dedalo_portal_unlink",
            "args": {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh24",
                "target": {"section_tipo": "rsc197", "section_id": 1},
            },
        },
        {"op_id": "d1", "tool": "dedalo_delete_record", "args": {"section_id": {"ref": "p1"}}},
        "not an op",
    ]
    guard_plan(world, ops)
    with pytest.raises(ArxiuError) as caught:
        guard_plan(world, [{"tool": "dedalo_delete_record", "args": {"section_id": 10**30}}])
    assert caught.value.code == "archive.id_out_of_range"


async def test_the_delete_tool_refuses_inside_its_transaction(world: Archive) -> None:
    registry = build_registry()
    context = ToolContext(archive=world, exclude_restricted=True, audit={"actor": "t"})
    args = {"section_tipo": "rsc197", "section_id": 2, "unlink": True}
    result = await registry.call("dedalo_delete_record", args, context)
    assert not result.ok and result.code == "mcp.egress_restricted"
    with pytest.raises(ArxiuError) as caught:
        world.delete_record_unlinking(
            RecordKey("rsc197", 2), unlink=True, guard=lambda links: guard_unlinks(world, links)
        )
    assert caught.value.code == "mcp.egress_restricted"
    assert world.get_record(CLOSED).version == 1 and world.find_record(RecordKey("rsc197", 2))
    allowed = ToolContext(archive=world, audit={"actor": "t"})  # the restricted right
    done = await registry.call("dedalo_delete_record", args, allowed)
    assert (
        done.ok
        and {"section_tipo": "oh1", "section_id": 4, "field": "oh24"} in done.data["unlinked"]
    )


def test_a_bare_id_in_a_relation_value_counts_as_its_target(world: Archive) -> None:
    create = {"section_tipo": "oh1", "values": {"Witness": 1, "Title": "New"}}
    assert RecordKey("rsc300", 1) in touched_records(world, "dedalo_create_record", create)
    set_ = {"section_tipo": "oh1", "section_id": 1, "field": "oh26", "value": [1]}
    refused = _refusal(world, "dedalo_set_field", set_)
    assert refused is not None and refused.code == "mcp.egress_restricted"
    assert _refusal(world, "dedalo_create_record", {**create, "values": {"Informant": 3}}) is None
