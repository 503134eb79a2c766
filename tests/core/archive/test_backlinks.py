"""What a record's page lists as "Linked from": each linking record once, with all the fields
it links through; the records the page shows already (in its fields, itself) left out."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from app.core.archive import Archive, Field, RecordKey, Section
from app.core.archive.backlinks import Backlink, linked_from
from app.core.archive.importers import run_import
from tests.conftest import shared_data


@pytest.fixture
def places(archive: Archive) -> Archive:
    archive.put_section(Section("tp1", {"lg-eng": "Places"}, label_field="tp2", writable=True))
    archive.put_field(Field("tp2", "tp1", {"lg-eng": "Name"}))
    archive.put_field(
        Field("tp3", "tp1", {"lg-eng": "Near"}, kind="relation", target_section="tp1")
    )
    archive.put_section(Section("oh1", {"lg-eng": "Oral history"}, label_field="oh16"))
    archive.put_field(Field("oh16", "oh1", {"lg-eng": "Title"}))
    for tipo, label in (("oh33", "Places mentioned"), ("oh30", "Interview place")):
        archive.put_field(
            Field(tipo, "oh1", {"lg-eng": label}, kind="relation", target_section="tp1")
        )
    return archive


def _place(archive: Archive, name: str, near: list[RecordKey] | None = None) -> RecordKey:
    values: dict[str, list[dict[str, Any]]] = {
        "tp2": [{"value": name}],
        "tp3": [{"value": k.to_locator()} for k in near or []],
    }
    return archive.create_record("tp1", values)


def test_a_record_linking_through_two_fields_is_listed_once_with_both(places: Archive) -> None:
    valley = _place(places, "Sant Romà")
    interview = places.create_record(
        "oh1",
        {
            "oh16": [{"value": "El pantà"}],
            "oh30": [{"value": valley.to_locator()}],
            "oh33": [{"value": valley.to_locator()}],
        },
    )
    other = places.create_record("oh1", {"oh33": [{"value": valley.to_locator()}]})
    assert [link.source for link in places.links_to(valley)] == [interview, interview, other]

    listed = linked_from(places, valley)

    assert [b.source for b in listed] == [interview, other]
    assert listed[0] == Backlink(interview, ("oh33", "oh30"))  # in the section's field order
    assert listed[1] == Backlink(other, ("oh33",))


def test_a_relation_kept_on_both_sides_is_not_listed_again(places: Archive) -> None:
    town = _place(places, "Vilanova")
    river = _place(places, "El riu", near=[town])
    places.set_field(town, "tp3", [{"value": river.to_locator()}, {"value": town.to_locator()}])
    far = _place(places, "Lluny", near=[town])
    assert {link.source for link in places.links_to(town)} == {town, river, far}

    listed = linked_from(places, town)

    assert listed == [Backlink(far, ("tp3",))]  # river is in town's own field; town is itself


def test_children_are_left_to_the_contents_list(places: Archive) -> None:
    fonds = _place(places, "Comarca")
    part = _place(places, "Poble", near=[fonds])
    assert linked_from(places, fonds) == [Backlink(part, ("tp3",))]
    assert linked_from(places, fonds, children_field="tp3") == []


def test_the_anf_agents_and_finding_aids_are_each_listed_once(archive: Archive) -> None:
    """The Archives nationales' finding aids and authorities: agents that name each other as
    related, and an agent's "Created" against its fonds' "Creators"."""
    run_import(archive, "ead", shared_data("ead", "anf"))
    run_import(archive, "eac-cpf", shared_data("eac-cpf", "anf"))
    checked = mirrored = 0
    for record in archive.list_records("agent1", limit=200):
        key = record.key
        own = {link.target for link in archive.links_from(key)}
        incoming = [link for link in archive.links_to(key) if link.source != key]
        expected = Counter(link.source for link in incoming if link.source not in own)
        listed = linked_from(archive, key)
        sources = [b.source for b in listed]
        assert len(sources) == len(set(sources))
        assert set(sources) == set(expected)
        for backlink in listed:
            fields = {link.field_tipo for link in incoming if link.source == backlink.source}
            assert set(backlink.field_tipos) == fields
            assert len(backlink.field_tipos) == expected[backlink.source]
        mirrored += sum(1 for link in incoming if link.source in own)
        checked += 1
    assert checked > 50 and mirrored > 100  # the data does hold relations kept on both sides
