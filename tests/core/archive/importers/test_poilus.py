"""Poilus wills: page markers in the transcription, page images as media, idempotence."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey
from app.core.archive.importers import run_import
from app.core.archive.importers.poilus import page_marker
from app.core.archive.media import media_of
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import SliceFn


def _rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _will(archive: Archive, doc_id: str) -> RecordKey:
    key = archive.external_key("poilus", doc_id)
    assert key is not None
    return key


def test_each_page_opens_with_its_marker(archive: Archive, data_slice: SliceFn) -> None:
    path = data_slice("poilus/wills.jsonl.gz", 40)
    rows = _rows(path)

    summary = run_import(archive, "poilus", path)

    assert summary.created == len(rows) and not summary.skipped
    will = max(rows, key=lambda r: len(r["pages"]))
    assert len(will["page_texts"]) > 1
    record = archive.get_record(_will(archive, will["id"]))
    text = record.text("poilus12", "lg-fra") or ""
    for number, page in enumerate(will["page_texts"], start=1):
        marker = page_marker(number)
        assert marker in text
        assert text.index(marker) < text.index(page.strip()[:40])
    assert page_marker(len(will["page_texts"]) + 1) not in text
    assert record.text("poilus4") == will["testator"]
    assert record.items("poilus12")[0]["lang"] == "lg-fra"


def test_page_images_are_attached_once(archive: Archive, tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    folder = tmp_path / "poilus"
    shutil.copytree(shared_data("poilus"), folder)
    images = sorted(p.name for p in (folder / "pages").glob("*.jpg"))
    listed = sum(len(r["pages"]) for r in _rows(folder / "wills.jsonl.gz"))

    first = run_import(archive, "poilus", folder)
    second = run_import(archive, "poilus", folder)

    assert (first.media, first.media_missing) == (len(images), listed - len(images))
    assert second.created == 0 and second.media == len(images)
    doc_id = images[0].rsplit("-", 1)[0]
    media = media_of(archive, _will(archive, doc_id))
    assert len(media) == 1
    assert media[0].mime == "image/jpeg" and media[0].width
    assert (archive.media_dir / media[0].path).is_file()
