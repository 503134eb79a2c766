"""Importing Arxiu JSON exports: bad files are coded, taken keys move, dangling links drop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.model import RecordKey, Section
from app.core.errors import ImportFailed
from app.core.i18n_tables import load_table
from app.core.import_report import skip_reason


def export_doc(records: list[dict[str, Any]]) -> dict[str, Any]:
    """A small export: section ``p1`` (people) with a name and a "knows" relation."""
    return {
        "arxiu_export": 1,
        "notice": None,
        "sections": [
            {"tipo": "p1", "labels": {"lg-eng": "People"}, "label_field": "p2"},
        ],
        "fields": [
            {"tipo": "p2", "section_tipo": "p1", "labels": {"lg-eng": "Name"}},
            {
                "tipo": "p3",
                "section_tipo": "p1",
                "labels": {"lg-eng": "Knows"},
                "kind": "relation",
                "target_section": "p1",
            },
        ],
        "records": records,
    }


def person(sid: int, name: str, knows: list[int]) -> dict[str, Any]:
    values: dict[str, Any] = {"p2": [{"id": 1, "lang": "lg-cat", "value": name}]}
    if knows:
        values["p3"] = [
            {"id": n + 1, "lang": "lg-nolan", "value": {"section_tipo": "p1", "section_id": k}}
            for n, k in enumerate(knows)
        ]
    return {"section_tipo": "p1", "section_id": sid, "values": values}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_taken_key_moves_and_the_links_to_it_follow(archive: Archive, tmp_path: Path) -> None:
    archive.put_section(Section("p1", {"lg-eng": "People"}))
    taken = archive.create_record("p1", section_id=1)
    doc = export_doc([person(1, "Anna", [2, 9]), person(2, "Bernat", [1])])

    summary = run_import(archive, "json", write(tmp_path / "people.json", doc))

    assert summary.created == 2 and summary.unresolved == 1  # p1/9 is nowhere
    assert archive.get_record(taken).values == {}  # the record already there is untouched
    names = {r.text("p2"): r for r in archive.iter_records("p1") if r.values}
    anna, bernat = names["Anna"], names["Bernat"]
    assert anna.section_id != 1
    assert [i["value"]["section_id"] for i in anna.items("p3")] == [bernat.section_id]
    assert [link.target for link in archive.links_from(bernat.key)] == [anna.key]
    again = run_import(archive, "json", tmp_path / "people.json")
    assert (again.created, again.unchanged) == (0, 2)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"records": []}', b'{"arxiu_export": 1, "sections": {}}', b"[1, 2]"],
)
def test_a_file_that_is_not_an_export_is_a_coded_error(
    archive: Archive, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)

    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "json", path)

    assert caught.value.code == "import.json_malformed"
    assert archive.sections() == []


def test_a_folder_skips_its_bad_files_and_bad_records(archive: Archive, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "a-broken.json").write_bytes(b"\x00\x01")
    write(folder / "b-people.json", export_doc([person(4, "Clara", []), {"values": {}}]))

    summary = run_import(archive, "json", folder)

    assert summary.created == 1
    assert [(s.file, s.code) for s in summary.skipped] == [
        ("a-broken.json", "import.json_malformed"),
        ("b-people.json", "import.bad_row"),
    ]
    assert archive.find_record(RecordKey("p1", 4)) is not None


def test_a_record_whose_values_are_not_item_lists_is_a_bad_row(
    archive: Archive, tmp_path: Path
) -> None:
    not_a_list = {"section_tipo": "p1", "section_id": 5, "values": {"p2": "Dora"}}
    not_objects = {"section_tipo": "p1", "section_id": 6, "values": {"p2": ["Eva"]}}
    stray = {**person(7, "Ferran", []), "values": {**person(7, "Ferran", [])["values"]}}
    stray["values"]["p3"] = ["not an item", {"value": {"section_tipo": "p1", "section_id": 4}}]
    doc = export_doc([person(4, "Clara", []), not_a_list, not_objects, stray])

    summary = run_import(archive, "json", write(tmp_path / "people.json", doc))

    assert [(s.line, s.code, s.reason) for s in summary.skipped] == [
        (2, "import.bad_row", "field p2: values must be a list of {lang, value} items"),
        (3, "import.bad_row", "field p2: every item must be a {lang, value} object"),
    ]
    assert (summary.created, summary.links, summary.unresolved) == (2, 1, 1)
    ferran = archive.get_record(RecordKey("p1", 7))
    assert [i["value"]["section_id"] for i in ferran.items("p3")] == [4]


BAD_ENTRIES = {
    "ca": [
        "un registre necessita «section_tipo», «section_id» i «values»",
        "un registre necessita «section_tipo» i un «section_id» enter",
        "camp p2: els valors han de ser una llista d'elements {lang, value}",
        "camp p2: cada element ha de ser un objecte {lang, value}",
    ],
    "es": [
        "un registro necesita «section_tipo», «section_id» y «values»",
        "un registro necesita «section_tipo» y un «section_id» entero",
        "campo p2: los valores deben ser una lista de elementos {lang, value}",
        "campo p2: cada elemento debe ser un objeto {lang, value}",
    ],
}


def test_a_bad_record_is_said_in_catalan_and_spanish(archive: Archive, tmp_path: Path) -> None:
    """An export with a record lacking its values, one whose id is not a number, and two whose
    values are not item lists: each skip's reason is a phrase, English in JSON."""
    doc = export_doc(
        [
            {"section_tipo": "p1", "section_id": 1},
            {"section_tipo": "p1", "section_id": "first", "values": {}},
            {"section_tipo": "p1", "section_id": 5, "values": {"p2": "Dora"}},
            {"section_tipo": "p1", "section_id": 6, "values": {"p2": ["Eva"]}},
            person(7, "Ferran", []),
        ]
    )

    summary = run_import(archive, "json", write(tmp_path / "people.json", doc))

    assert summary.created == 1
    assert [(s.line, s.file, s.code) for s in summary.skipped] == [
        (n, "people.json", "import.bad_row") for n in (1, 2, 3, 4)
    ]
    for lang, said in BAD_ENTRIES.items():
        assert [skip_reason(s, load_table(lang)) for s in summary.skipped] == said
    assert summary.skipped[3].to_dict() == {
        "line": 4,
        "reason": "field p2: every item must be a {lang, value} object",
        "file": "people.json",
        "code": "import.bad_row",
        "template": "field {field}: every item must be a {{lang, value}} object",
        "params": {"field": "p2"},
    }
