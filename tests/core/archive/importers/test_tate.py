"""Tate artists and artworks: contributors with roles, subject paths, folder or file paths."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey
from app.core.archive.importers import run_import
from app.core.errors import ImportFailed
from tests.core.archive.importers.conftest import SliceFn


def _rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture
def tate_slice(data_slice: SliceFn) -> Path:
    """A tate folder with every artist and the first 400 artworks."""
    data_slice("tate/artists.jsonl.gz", 10_000)
    return data_slice("tate/artworks.jsonl.gz", 400).parent


def _artwork(archive: Archive, artwork_id: int) -> RecordKey:
    key = archive.external_key("tate-artworks", str(artwork_id))
    assert key is not None
    return key


def test_the_folder_imports_artists_then_artworks_linked(
    archive: Archive, tate_slice: Path
) -> None:
    artists = _rows(tate_slice / "artists.jsonl.gz")
    artworks = _rows(tate_slice / "artworks.jsonl.gz")

    summary = run_import(archive, "tate", tate_slice)

    assert summary.sections == {"tate1": len(artists), "tate20": len(artworks)}
    assert summary.created == len(artists) + len(artworks) and not summary.skipped
    work = next(w for w in artworks if w["contributors"] and w["subjects"])
    record = archive.get_record(_artwork(archive, work["id"]))
    assert record.text("tate21") == work["title"]
    assert [i["value"] for i in record.items("tate31")] == work["subjects"]
    artist_key = archive.external_key("tate-artists", str(work["contributors"][0]["artist_id"]))
    assert artist_key is not None
    assert artist_key in {link.target for link in archive.links_from(record.key)}
    assert record.key in {link.source for link in archive.links_to(artist_key)}
    assert record.items("tate29")[0]["value"]["role"] == work["contributors"][0]["role"]


def test_contributor_roles_and_places_are_kept(archive: Archive, tate_slice: Path) -> None:
    artworks = _rows(tate_slice / "artworks.jsonl.gz")
    run_import(archive, "tate", tate_slice)

    with_place = next(w for w in artworks if any(s.startswith("places >") for s in w["subjects"]))
    record = archive.get_record(_artwork(archive, with_place["id"]))
    leaves = {s.split(" > ")[-1] for s in with_place["subjects"] if s.startswith("places >")}
    assert {i["value"] for i in record.items("tate32")} == leaves
    roles = {c["role"] for w in artworks for c in w["contributors"]}
    stored = {i["value"]["role"] for r in archive.iter_records("tate20") for i in r.items("tate29")}
    assert stored == roles


def test_artworks_alone_leave_contributors_unresolved(
    archive: Archive, data_slice: SliceFn
) -> None:
    path = data_slice("tate/artworks.jsonl.gz", 50)
    credits = sum(len(w["contributors"]) for w in _rows(path))

    summary = run_import(archive, "tate", path)

    assert summary.created == 50
    assert (summary.links, summary.unresolved) == (0, credits)
    noted = [i["value"] for r in archive.iter_records("tate20") for i in r.items("tate30")]
    assert len(noted) == credits
    assert all(value.startswith("artist ") for value in noted)


def test_a_second_import_creates_nothing(archive: Archive, tate_slice: Path) -> None:
    first = run_import(archive, "tate", tate_slice)
    second = run_import(archive, "tate", tate_slice)

    assert second.created == 0
    assert second.unchanged == first.created
    assert second.links == first.links
    assert archive.count_records() == first.created


def test_a_changed_artwork_is_updated_in_place(archive: Archive, tate_slice: Path) -> None:
    run_import(archive, "tate", tate_slice)
    path = tate_slice / "artworks.jsonl.gz"
    rows = _rows(path)
    rows[0]["title"] = "A corrected title"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    key = _artwork(archive, rows[0]["id"])
    version = archive.get_record(key).version

    summary = run_import(archive, "tate", path)

    assert (summary.created, summary.updated) == (0, 1)
    record = archive.get_record(key)
    assert record.text("tate21") == "A corrected title"
    assert record.version == version + 1


def test_a_file_of_unknown_name_is_refused(archive: Archive, tmp_path: Path) -> None:
    path = tmp_path / "collection.jsonl.gz"
    path.write_bytes(gzip.compress(b"{}\n"))
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "tate", path)
    assert caught.value.code == "import.unreadable"
