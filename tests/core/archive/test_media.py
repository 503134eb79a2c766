"""Media files are copied beside the database, described and thumbnailed."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from app.core.archive import Archive, Field, Section
from app.core.archive.media import add_media, media_of
from app.core.errors import ArchiveError


@pytest.fixture
def images(archive: Archive) -> Archive:
    archive.put_section(Section("rsc170", {"lg-eng": "Images"}))
    archive.put_field(Field("rsc29", "rsc170", {"lg-eng": "Image"}, kind="media"))
    return archive


def test_image_is_stored_once_with_dimensions_and_thumbnail(
    images: Archive, tmp_path: Path
) -> None:
    source = tmp_path / "photo.png"
    Image.new("RGB", (640, 480), (200, 120, 40)).save(source)
    key = images.create_record("rsc170", {})
    media = add_media(images, key, "rsc29", source)
    again = add_media(images, key, "rsc29", source)
    assert again.id == media.id
    assert (media.mime, media.width, media.height, media.size) == (
        "image/png",
        640,
        480,
        source.stat().st_size,
    )
    stored = images.media_dir / media.path
    assert stored.read_bytes() == source.read_bytes()
    assert media.thumbnail is not None
    with Image.open(images.media_dir / media.thumbnail) as thumb:
        assert max(thumb.size) == 256
    assert [m.id for m in media_of(images, key)] == [media.id]


def test_non_image_media_has_no_thumbnail(images: Archive, tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("hello")
    key = images.create_record("rsc170", {})
    media = add_media(images, key, "rsc29", source)
    assert (media.mime, media.thumbnail, media.width) == ("text/plain", None, None)


def test_missing_file_and_missing_record(images: Archive, tmp_path: Path) -> None:
    key = images.create_record("rsc170", {})
    with pytest.raises(ArchiveError) as info:
        add_media(images, key, "rsc29", tmp_path / "none.png")
    assert info.value.code == "archive.media_missing"
    source = tmp_path / "x.txt"
    source.write_text("x")
    with pytest.raises(ArchiveError) as info:
        add_media(images, key.__class__("rsc170", 99), "rsc29", source)
    assert info.value.code == "archive.record_not_found"


def test_media_lands_in_the_record_field_with_audit(images: Archive, tmp_path: Path) -> None:
    source = tmp_path / "coin.png"
    Image.new("RGB", (100, 100)).save(source)
    key = images.create_record("rsc170", {})
    media = add_media(images, key, "rsc29", source, audit={"op_id": "m1", "plan_hash": "h"})
    record = images.get_record(key)
    assert record.version == 2
    assert record.items("rsc29")[0]["value"] == {
        "media_id": media.id,
        "path": media.path,
        "mime": "image/png",
    }
    [row] = images.audit_rows()
    assert (row["action"], row["op_id"], row["plan_hash"]) == ("upload_media", "m1", "h")
