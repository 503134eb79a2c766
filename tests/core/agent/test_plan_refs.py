"""Typed plan references: a ``{"ref": op_id}`` only where a record of the right section goes.

The regression: p1 creates a person in rsc197 and the next op sets a field on ``oh1`` with
``section_id: {"ref": "p1"}``. It used to validate and overwrote the title of oh1/2.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError
from app.core.tools.registry import ToolRegistry

PERSON = {
    "op_id": "p1",
    "tool": "dedalo_create_record",
    "args": {"section_tipo": "rsc197", "values": {"rsc85": "Anna Pujol"}},
    "summary": "create a person",
}
INTERVIEW = {
    "op_id": "i1",
    "tool": "dedalo_create_record",
    "args": {"section_tipo": "oh1", "values": {"oh2": "New interview"}},
    "summary": "create an interview",
}
CREATORS = {"rsc197": PERSON, "oh1": INTERVIEW}


def _plan(*ops: dict[str, Any]) -> dict[str, Any]:
    return {"summary": "refs", "ops": list(ops)}


def test_a_person_ref_as_an_interview_section_id_is_refused(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    overwrite = {
        "op_id": "s1",
        "tool": "dedalo_set_field",
        "args": {"section_tipo": "oh1", "section_id": {"ref": "p1"}, "field": "oh2", "value": "X"},
        "summary": "set the title",
    }
    with pytest.raises(ArxiuError) as caught:
        validate_plan(_plan(PERSON, overwrite), oh_archive, registry)
    assert caught.value.code == "mcp.plan_invalid"
    assert caught.value.details["op_id"] == "s1"
    assert "rsc197" in caught.value.message and "oh1" in caught.value.message
    assert oh_archive.get_record(RecordKey("oh1", 2)).text("oh2") == "Interview with Maria Puig"


async def test_apply_checks_the_ref_again_against_the_record_made(
    oh_archive: Archive, registry: ToolRegistry
) -> None:
    """A confirmed plan whose ref became ill-typed (forged after validation) is stopped."""
    good = {
        "op_id": "s1",
        "tool": "dedalo_set_field",
        "args": {
            "section_tipo": "rsc197",
            "section_id": {"ref": "p1"},
            "field": "rsc90",
            "value": "Súria",
        },
        "summary": "set the birthplace",
    }
    plan = validate_plan(_plan(PERSON, good), oh_archive, registry).to_dict()
    forged = copy.deepcopy(plan)
    forged["ops"][1]["args"]["section_tipo"] = "oh1"
    forged["ops"][1]["args"]["field"] = "oh2"
    forged.pop("plan_hash")
    from app.core.agent.plans import plan_hash

    env = ApplyContext(oh_archive, registry, model_id="local")
    with pytest.raises(ArxiuError) as caught:
        await apply_plan(forged, plan_hash(forged), env)
    assert caught.value.code == "mcp.plan_invalid"
    assert oh_archive.get_record(RecordKey("oh1", 2)).text("oh2") == "Interview with Maria Puig"
    report = await apply_plan(plan, plan["plan_hash"], env)
    assert report.ok
    assert oh_archive.get_record(RecordKey("rsc197", report.created["p1"])).text("rsc90") == "Súria"


def test_a_ref_as_a_text_value_is_refused(oh_archive: Archive, registry: ToolRegistry) -> None:
    text_ref = {
        "op_id": "s1",
        "tool": "dedalo_set_field",
        "args": {"section_tipo": "oh1", "section_id": 1, "field": "oh2", "value": {"ref": "p1"}},
        "summary": "a title that is a record?",
    }
    with pytest.raises(ArxiuError) as caught:
        validate_plan(_plan(PERSON, text_ref), oh_archive, registry)
    assert (caught.value.code, caught.value.details["op_id"]) == ("mcp.plan_invalid", "s1")


# -- generated: a ref in every argument position ------------------------------------------------
# Each position: (tool, args builder given the ref, the section a record there must be of, or
# None when no record is expected there).
def _positions() -> list[tuple[str, str, Any, str | None]]:
    def ref_at(ref: dict[str, str]) -> dict[str, Any]:
        return ref

    return [
        ("set.section_id", "dedalo_set_field",
         lambda r: {"section_tipo": "oh1", "section_id": r, "field": "oh2", "value": "x"}, "oh1"),
        ("set.value.text", "dedalo_set_field",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh2", "value": r}, None),
        ("set.value.relation", "dedalo_set_field",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh24", "value": r},
         "rsc197"),
        ("set.value.item", "dedalo_set_field",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh24",
                    "value": [{"lang": "lg-nolan", "value": r}]}, "rsc197"),
        ("save.items", "dedalo_save_component",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh24",
                    "items": [{"value": r}]}, "rsc197"),
        ("save.text", "dedalo_save_component",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh3",
                    "items": [{"lang": "lg-eng", "value": r}]}, None),
        ("link.section_id", "dedalo_portal_link",
         lambda r: {"section_tipo": "oh1", "section_id": r, "field": "oh24",
                    "target": {"section_tipo": "rsc197", "section_id": 1}}, "oh1"),
        ("link.target", "dedalo_portal_link",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh24", "target": r},
         "rsc197"),
        ("unlink.target", "dedalo_portal_unlink",
         lambda r: {"section_tipo": "oh1", "section_id": 1, "field": "oh24", "target": r},
         "rsc197"),
        ("create.values.relation", "dedalo_create_record",
         lambda r: {"section_tipo": "oh1", "values": {"oh2": "t", "oh24": r}}, "rsc197"),
        ("create.values.text", "dedalo_create_record",
         lambda r: {"section_tipo": "oh1", "values": {"oh2": r}}, None),
        ("foc.match.ref", "dedalo_find_or_create",  # a match names existing values only
         lambda r: {"section_tipo": "oh1", "match": {"oh24": r}}, None),
        ("foc.set.relation", "dedalo_find_or_create",
         lambda r: {"section_tipo": "oh1", "match": {"oh2": "Brand new"}, "set": {"oh24": r}},
         "rsc197"),
        ("foc.set.text", "dedalo_find_or_create",
         lambda r: {"section_tipo": "rsc197", "match": {"rsc85": "Nobody yet"},
                    "set": {"rsc90": r}}, None),
        ("duplicate.section_id", "dedalo_duplicate_record",
         lambda r: {"section_tipo": "rsc197", "section_id": r}, "rsc197"),
        ("delete.section_id", "dedalo_delete_record",
         lambda r: {"section_tipo": "oh1", "section_id": r}, "oh1"),
    ]  # fmt: skip


POSITIONS = _positions()


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    position=st.sampled_from(POSITIONS),
    made_in=st.sampled_from(sorted(CREATORS)),
    nested=st.booleans(),
)
def test_refs_in_every_argument_position(
    oh_archive: Archive,
    registry: ToolRegistry,
    position: tuple[str, str, Any, str | None],
    made_in: str,
    nested: bool,
) -> None:
    """Accepted exactly when the position takes a record and the ref makes one of its section."""
    name, tool, build, required = position
    creator = CREATORS[made_in]
    ref: Any = {"ref": creator["op_id"]}
    args = build(ref)
    if nested and name.endswith("relation"):
        args = build([ref])  # a list of references is a relation value too
    op = {"op_id": "x1", "tool": tool, "args": args, "summary": name}
    try:
        plan = validate_plan(_plan(creator, op), oh_archive, registry).to_dict()
    except ArxiuError as error:
        assert required != made_in, f"{name}: refused {error.code}: {error.message}"
        assert error.details.get("op_id") == "x1", name
        allowed = {"mcp.plan_invalid"} if required else {"mcp.plan_invalid", "mcp.invalid_args"}
        assert error.code in allowed, f"{name}: {error.code}"
        return
    assert required == made_in, f"{name}: accepted a ref to a {made_in} record"
    assert plan["ops"][1]["op_id"] == "x1"
