"""nomisma concepts and IGCH hoards: a slice of each, then the full datasets linked together."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey
from app.core.archive.importers import concept_key, run_import
from app.core.archive.importers.nomisma import is_slug
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import SliceFn


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def _links_from_section(archive: Archive, section: str) -> int:
    with archive.db.reading() as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM links WHERE from_section = ?", (section,)
            ).fetchone()[0]
        )


def test_a_nomisma_slice_keeps_every_language_and_resolves_links_inside_it(
    archive: Archive, data_slice: SliceFn
) -> None:
    path = data_slice("nomisma/concepts.jsonl.gz", 400)
    rows = list(_rows(path))

    summary = run_import(archive, "nomisma", path)

    assert summary.created == len(rows) and not summary.skipped
    row = max(rows, key=lambda r: len(r["labels"]))
    record = archive.get_record(_key(archive, row["id"]))
    assert len(record.items("nomisma2")) == len(row["labels"])
    assert record.text("nomisma2", "lg-eng") == row["labels"]["en"]
    assert record.text("nomisma5") == row["type"]
    ids = {r["id"] for r in rows}
    internal = {
        (r["id"], link["target"])
        for r in rows
        for link in r["links"]
        if link["rel"] in ("part_of", "broader") and link["target"] in ids
    }
    assert internal, "the slice should hold links between its own concepts"
    source, target = sorted(internal)[0]
    targets = {link.target for link in archive.links_from(_key(archive, source))}
    assert _key(archive, target) in targets
    assert summary.links == _links_from_section(archive, "nomisma1")


def test_a_mint_has_its_coordinates(archive: Archive, data_slice: SliceFn) -> None:
    path = data_slice("nomisma/concepts.jsonl.gz", 1500)
    mint = next(r for r in _rows(path) if r["type"] == "mint" and r["lat"] is not None)

    run_import(archive, "nomisma", path)

    record = archive.get_record(_key(archive, mint["id"]))
    assert record.items("nomisma8")[0]["value"] == {"lat": mint["lat"], "lon": mint["long"]}


def test_igch_before_nomisma_leaves_mints_unresolved_until_imported_again(
    archive: Archive, data_slice: SliceFn
) -> None:
    hoards = data_slice("igch/hoards.jsonl.gz", 60)
    concepts = shared_data("nomisma", "concepts.jsonl.gz")
    pairs = sum(len(r["mints"]) for r in _rows(hoards))

    first = run_import(archive, "igch", hoards)
    assert (first.links, first.unresolved) == (0, pairs)
    assert archive.count_records("nomisma1") == 0  # no placeholder mints

    run_import(archive, "nomisma", concepts)
    again = run_import(archive, "igch", hoards)
    assert again.created == 0
    assert again.links + again.unresolved == pairs
    assert again.links == _links_from_section(archive, "igch1") > 0


@pytest.fixture(scope="module")
def full_archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Archive, list[Any]]]:
    """The whole nomisma and IGCH datasets imported into one archive (nomisma first)."""
    from app.core.archive import open_archive

    archive = open_archive(tmp_path_factory.mktemp("full") / "archive", create=True)
    summaries = [
        run_import(archive, "nomisma", shared_data("nomisma")),
        run_import(archive, "igch", shared_data("igch")),
    ]
    yield archive, summaries
    archive.close()


def test_the_full_import_has_the_readme_counts(full_archive: tuple[Archive, list[Any]]) -> None:
    archive, (nomisma, igch) = full_archive
    assert nomisma.created == 8959 - len(nomisma.skipped)
    assert igch.created == 2387 - len(igch.skipped)
    assert archive.count_records("nomisma1") == nomisma.created
    assert archive.count_records("igch1") == igch.created
    assert nomisma.error is None and igch.error is None


def test_every_igch_mint_that_nomisma_defines_is_linked(
    full_archive: tuple[Archive, list[Any]],
) -> None:
    archive, (_, igch) = full_archive
    concepts = {r["id"] for r in _rows(shared_data("nomisma", "concepts.jsonl.gz"))}
    pairs = [
        (r["id"], m) for r in _rows(shared_data("igch", "hoards.jsonl.gz")) for m in r["mints"]
    ]
    known = [(h, m) for h, m in pairs if m in concepts]

    assert len(pairs) == 7954  # the README's hoard-mint pairs
    assert igch.links == len(known) == _links_from_section(archive, "igch1")
    assert igch.unresolved == len(pairs) - len(known)
    hoard, mint = known[0]
    hoard_key = archive.external_key("igch", hoard)
    assert hoard_key is not None
    mint_key = concept_key(archive, mint)
    assert mint_key is not None
    assert any(link.source == hoard_key for link in archive.links_to(mint_key))


def test_nomisma_links_count_every_internal_relation(
    full_archive: tuple[Archive, list[Any]],
) -> None:
    archive, (nomisma, _) = full_archive
    assert nomisma.links == _links_from_section(archive, "nomisma1")
    assert nomisma.unresolved_targets["habsburgs"] == 10  # README: 16 links to absent slugs
    assert nomisma.unresolved == 16
    assert all(is_slug(target) for target in nomisma.unresolved_targets)


def test_importing_again_creates_nothing(full_archive: tuple[Archive, list[Any]]) -> None:
    archive, (nomisma, igch) = full_archive
    records = archive.count_records()

    again = [run_import(archive, "nomisma", nomisma.path), run_import(archive, "igch", igch.path)]

    assert [s.created for s in again] == [0, 0]
    assert [s.unchanged for s in again] == [nomisma.created, igch.created]
    assert archive.count_records() == records
    assert again[1].links == igch.links


def _key(archive: Archive, slug: str) -> RecordKey:
    key = concept_key(archive, slug)
    assert key is not None, slug
    return key
