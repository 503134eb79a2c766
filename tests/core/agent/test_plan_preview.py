"""A plan's ops in the archive's words: sections, fields and records by their labels in the
card's language, a plan reference by the step that makes its record, values as text, and a
field's value before and after (on the demo archive, whose labels exist in ca, es and en)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.plan_preview import FieldValue, OpPreview, RecordName, plan_previews
from app.core.agent.plan_types import ChangePlan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive, RecordKey, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.tools.registry import build_registry
from tests.core.agent.plan_samples import SET_HER_BIRTH_DATE

OPS = [
    {
        "op_id": "c1",
        "tool": "dedalo_create_record",
        "args": {"section_tipo": "rsc197", "values": {"rsc84": "Anna Pujol", "rsc85": "Anna"}},
        "summary": "create Anna Pujol",
    },
    SET_HER_BIRTH_DATE,
    {
        "op_id": "l1",
        "tool": "dedalo_portal_link",
        "args": {
            "section_tipo": "oh1",
            "section_id": 1,
            "field": "oh28",
            "target": {"ref": "c1"},
        },
        "summary": "mention her in oh1/1",
    },
    {
        "op_id": "d1",
        "tool": "dedalo_set_field",
        "args": {"section_tipo": "oh1", "section_id": 1, "field": "oh29", "value": "1987-05-15"},
        "summary": "fix the date",
    },
]
LABELS = {
    "lg-cat": ("Persones", "Data de naixement", "Persones esmentades", "Data de l'entrevista"),
    "lg-spa": ("Personas", "Fecha de nacimiento", "Personas mencionadas", "Fecha de la entrevista"),
    "lg-eng": ("People", "Birth date", "People mentioned", "Interview date"),
}
TITLES = {
    "lg-cat": "Quan ens van fer marxar de Sant Romà",
    "lg-spa": "Cuando nos hicieron marchar de Sant Romà",
    "lg-eng": "When they made us leave Sant Romà",
}
ANNA = RecordName(None, "Anna Pujol", step=1, ref="c1", created=True)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, demo_archive_dir: Path) -> Iterator[Archive]:
    folder = tmp_path_factory.mktemp("preview") / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    set_writes_allowed(archive, True)
    yield archive
    archive.close()


@pytest.fixture(scope="module")
def plan(demo: Archive) -> ChangePlan:
    return validate_plan({"summary": "Anna Pujol", "ops": OPS}, demo, build_registry())


@pytest.mark.parametrize("lang", sorted(LABELS))
def test_every_op_is_named_by_labels_in_the_cards_language(
    demo: Archive, plan: ChangePlan, lang: str
) -> None:
    people, birth, mentioned, date = LABELS[lang]
    previews = plan_previews(demo, plan, lang)
    assert list(previews) == ["c1", "s1", "l1", "d1"]
    create, birth_date, link, fix = previews.values()
    assert create.step == 1 and create.section == people and create.record is None
    assert create.values[0].text == "Anna Pujol"
    assert create.makes == ANNA  # the label its label field (rsc84) will hold
    assert birth_date == OpPreview(
        step=2,
        tool="dedalo_set_field",
        section=people,
        record=ANNA,  # not "{'ref': 'c1'}": the record step 1 creates
        field_label=birth,
        values=(FieldValue(birth, text="1931"),),
    )
    interview = RecordName(RecordKey("oh1", 1), TITLES[lang])
    assert (link.record, link.field_label, link.target) == (interview, mentioned, ANNA)
    assert fix.record == interview and fix.change is not None
    assert (fix.change.field_label, fix.change.before, fix.change.after) == (
        date,
        "1987-05-14",
        "1987-05-15",
    )


def test_a_relation_change_names_the_records_and_a_find_names_its_match(demo: Archive) -> None:
    ops = [
        {
            "op_id": "f1",
            "tool": "dedalo_find_or_create",
            "args": {
                "section_tipo": "rsc197",
                "match": {"rsc85": "Mestra"},
                "set": {"rsc89": "1931"},
            },
            "summary": "find or create",
        },
        {
            "op_id": "i1",
            "tool": "dedalo_save_component",
            "args": {
                "section_tipo": "oh1",
                "section_id": 1,
                "field": "oh24",
                "items": [{"value": {"section_tipo": "rsc197", "section_id": 1}}],
            },
            "summary": "another informant",
        },
    ]
    plan = validate_plan({"summary": "x", "ops": ops}, demo, build_registry())
    find, informant = plan_previews(demo, plan, "lg-cat").values()
    assert find.makes == RecordName(None, "Mestra", step=1, ref="f1", created=False)
    assert [(v.field_label, v.text) for v in find.values] == [("Nom", "Mestra")]
    assert [(v.field_label, v.text) for v in find.only_if_created] == [
        ("Data de naixement", "1931")
    ]
    assert informant.change is not None
    first = demo.record_label(RecordKey("rsc197", 1), "lg-cat")
    assert informant.change.before == "Rosa Vilaseca i Pujol (rsc197/6)"
    assert informant.change.after == f"{first} (rsc197/1)"


def test_a_reference_is_named_by_its_key_once_applied() -> None:
    assert ANNA.applied({"c1": RecordKey("rsc197", 64)}) == RecordName(
        RecordKey("rsc197", 64), "Anna Pujol"
    )
    assert ANNA.applied({"x": RecordKey("rsc197", 64)}) == ANNA


def test_before_is_every_value_the_op_replaces(demo: Archive) -> None:
    """A set_field replaces only the language it writes: one without ``lang`` gets the
    value's language (the text's, else the question's: "Mestra" asked in Catalan is Catalan),
    so the card shows the Catalan value it overwrites and the language of the new one; a
    ``{lang: text}`` value replaces its languages."""
    base = {"section_tipo": "rsc197", "section_id": 1, "field": "rsc93", "value": "Mestra"}
    both = {**base, "value": {"lg-cat": "Mestra", "lg-spa": "Maestra"}}
    ops = [
        {"op_id": "a", "tool": "dedalo_set_field", "args": base, "summary": "guessed"},
        {
            "op_id": "b",
            "tool": "dedalo_set_field",
            "args": {**base, "lang": "lg-cat"},
            "summary": "ca",
        },
        {"op_id": "c", "tool": "dedalo_set_field", "args": both, "summary": "ca and es"},
    ]
    question = "Afegeix que la Maria Vila va ser mestra de l'escola"
    plan = validate_plan({"summary": "x", "ops": ops}, demo, build_registry(), question=question)
    guessed, catalan, two = plan_previews(demo, plan, "lg-eng").values()
    assert plan.ops[0].args["lang"] == "lg-cat"  # stored in the plan the person confirms
    assert guessed.change is not None and catalan.change is not None and two.change is not None
    assert guessed.change == catalan.change
    assert catalan.change.before == "historiadora"
    assert catalan.change.after == "ca: Mestra" and catalan.change.langs == ("lg-cat",)
    assert two.change.before == "ca: historiadora · es: historiadora"
    assert two.change.after == "ca: Mestra · es: Maestra"
    assert two.change.langs == ("lg-cat", "lg-spa")
