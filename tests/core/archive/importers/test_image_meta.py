"""EXIF, IPTC and XMP of real scans and photographs; decompression bombs refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, IptcImagePlugin

from app.core.archive.importers.image_meta import BOMB, BROKEN, iso_date, read_image
from app.core.errors import ImportFailed
from tests.conftest import shared_data
from tests.core.archive.importers.file_samples import bomb_png, gps_jpeg


def test_a_real_archival_scan_gives_its_caption_title_and_rights() -> None:
    path = shared_data("poilus", "pages", "TestamentsDePoilus_will_AN_0191-0.jpg")
    with Image.open(path) as image:
        iptc = IptcImagePlugin.getiptcinfo(image) or {}
        size = image.size

    meta = read_image(path)

    assert (meta.width, meta.height) == size
    assert meta.caption == " ".join(
        iptc[(2, 120)].decode().split()
    )  # "12 mai 1915 Langlais testament"
    assert meta.title == iptc[(2, 5)].decode()  # the archival reference MC/ET/XXXI/1552
    assert meta.rights == iptc[(2, 116)].decode()
    assert meta.date_source.startswith("XMP") and meta.date == "2018-05-15"


def test_a_camera_photograph_gives_its_date_taken() -> None:
    path = shared_data("coins", "theophilus-solidus.jpg")
    with Image.open(path) as image:
        taken = image.getexif().get_ifd(0x8769)[36867]

    meta = read_image(path)

    assert (meta.date, meta.date_source) == (iso_date(taken), "EXIF DateTimeOriginal")
    assert meta.date == "2009-05-17"


def test_gps_becomes_a_position(tmp_path: Path) -> None:
    source = shared_data("coins", "athens-owl-tetradrachm.jpg")
    path = gps_jpeg(
        source, tmp_path / "owl.jpg", (41.0, 59.0, 0.0), (2.0, 49.0, 12.0), "Owl of Athens"
    )

    meta = read_image(path)

    assert (meta.lat, meta.lon) == (round(41 + 59 / 60, 6), round(2 + 49 / 60 + 12 / 3600, 6))
    assert meta.caption == "Owl of Athens"


@pytest.mark.parametrize("side", [100_000, 10_000])
def test_a_decompression_bomb_is_refused(tmp_path: Path, side: int) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(bomb_png(side, side))

    with pytest.raises(ImportFailed) as caught:
        read_image(path)

    assert caught.value.code == BOMB


def test_a_broken_image_is_a_coded_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.jpg"
    path.write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG any more")

    with pytest.raises(ImportFailed) as caught:
        read_image(path)

    assert caught.value.code == BROKEN


def test_dates_in_each_metadata_form() -> None:
    assert iso_date("2009:05:17 14:45:56") == "2009-05-17"
    assert iso_date("20090517") == "2009-05-17"
    assert iso_date("2018-05-15T11:46:31+02:00") == "2018-05-15"
    assert iso_date("0000:00:00 00:00:00") == iso_date("2009:13:01") == ""
