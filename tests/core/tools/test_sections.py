"""Sections a call names, for the egress gate: targets, filter paths, fields, labels resolved."""

from __future__ import annotations

from app.core.archive import Archive
from app.core.tools.sections import sections_named


def test_sections_named_in_nested_filters_and_targets() -> None:
    args = {
        "section_tipo": "oh1",
        "filters": [
            {"path": ["oh1", "oh24", "rsc197", "rsc85"], "op": "contains", "value": "Pujol"},
            {"path": ["oh1", "oh30", "oh99", "oh99t"], "op": "exists"},
        ],
    }
    assert sections_named(args) == {"oh1", "rsc197", "oh99"}
    link = {
        "section_tipo": "oh1",
        "section_id": 1,
        "field": "oh24",
        "target": {"section_tipo": "rsc197", "section_id": 3},
    }
    assert sections_named(link) == {"oh1", "rsc197"}
    sem = {"query": "x", "sections": ["oh1", "numisdata4"]}
    assert sections_named(sem) == {"oh1", "numisdata4"}


def test_sections_named_skips_plan_references() -> None:
    args = {
        "section_tipo": "oh1",
        "section_id": 1,
        "field": "oh24",
        "target": {"ref": "p1", "section_tipo": "oh99"},
    }
    assert sections_named(args) == {"oh1"}


def test_sections_named_with_the_archive_resolves_label_and_short_paths(
    oral: Archive,
) -> None:
    args = {"section_tipo": "oh1", "filters": [{"path": ["Oral history", "Closed part", "Title"]}]}
    assert sections_named(args, archive=oral) == {
        "oh1",
        "oh99",
    }
    short = {"section_tipo": "oh1", "filters": [{"path": ["oh1", "oh24", "rsc85"]}]}
    assert sections_named(short) == {"oh1", "rsc85"}
    assert sections_named(short, archive=oral) == {
        "oh1",
        "rsc197",
    }


def test_unresolvable_paths_are_named_whole(oral: Archive) -> None:
    args = {"section_tipo": "oh1", "filters": [{"path": ["oh1", "Secret stuff", "x"]}]}
    named = sections_named(args, archive=oral)
    assert named == {"oh1", "Secret stuff", "x"}


def test_sections_named_with_the_archive_resolves_relative_paths_and_fields(
    oral: Archive,
) -> None:
    relative = {"section_tipo": "Oral history", "filters": [{"path": ["oh30", "oh99t"]}]}
    assert sections_named(relative, archive=oral) == {
        "oh1",
        "oh99",
    }
    by_field = {"section_tipo": "oh1", "filters": [{"field": "Closed part", "value": "x"}]}
    assert sections_named(by_field) == {"oh1"}
    assert sections_named(by_field, archive=oral) == {
        "oh1",
        "oh99",
    }
    unknown = {"section_tipo": "oh1", "filters": [{"field": "Nothing like it"}]}
    named = sections_named(unknown, archive=oral)
    assert named == {"oh1", "Nothing like it"}


def test_sections_named_resolves_field_lists_and_fields_without_a_section(
    oral: Archive,
) -> None:
    read = {"section_tipo": "oh1", "section_id": 2, "fields": ["Title", "Closed part"]}
    assert sections_named(read, archive=oral) == {"oh1", "oh99"}
    odd = {"section_tipo": "oh1", "section_id": 2, "fields": ["Closed"]}  # partial: no guess
    assert sections_named(odd, archive=oral) == {"oh1", "Closed"}
    loose = {"filters": [{"field": "closed part", "op": "exists"}]}  # no section to resolve in
    assert sections_named(loose, archive=oral) == {"oh1", "oh99"}
    assert sections_named({"field": "Nope"}, archive=oral) == {"Nope"}
