"""What a photograph or a scan says about itself: EXIF, IPTC and XMP, read with Pillow.

:func:`read_image` opens the image's header only (no pixels are decoded) and returns
:class:`ImageMeta`:

==========  ===========================================================================
what        from (first found)
==========  ===========================================================================
title       XMP ``dc:title``, IPTC 2:05 Object Name, EXIF ``XPTitle``
caption     EXIF ``ImageDescription``, IPTC 2:120 Caption, XMP ``dc:description``
date        EXIF ``DateTimeOriginal``, IPTC 2:55 Date Created, XMP
            ``photoshop:DateCreated`` / ``exif:DateTimeOriginal``, EXIF ``DateTime``
place       EXIF GPS latitude/longitude (a ``geo`` value)
place name  IPTC 2:92/2:90/2:95/2:101 (sublocation, city, state, country), XMP
            ``Iptc4xmpCore:Location``, ``photoshop:City``/``State``/``Country``
creator     EXIF ``Artist``, IPTC 2:80 By-line, XMP ``dc:creator``
rights      EXIF ``Copyright``, IPTC 2:116, XMP ``dc:rights``
==========  ===========================================================================

The XMP packet is parsed with :mod:`~app.core.archive.importers.safe_xml` (no entities, no
network). An image of more than :data:`MAX_PIXELS` pixels is refused as a decompression bomb
(``import.image_bomb``), whatever Pillow's own limit is; an unreadable one is
``import.image_broken``.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.archive.importers.safe_xml import local, parse_bytes, text_of
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

MAX_PIXELS = 89_478_485
"""Pillow's default decompression-bomb threshold (about 0.25 GB of RGBA), fixed here."""
BOMB = "import.image_bomb"
BROKEN = "import.image_broken"

EXIF_IFD, GPS_IFD = 0x8769, 0x8825
DESCRIPTION, DATETIME, ARTIST, COPYRIGHT, XPTITLE = 270, 306, 315, 33432, 0x9C9B
DATETIME_ORIGINAL = 36867
IPTC_TITLE, IPTC_DATE, IPTC_BYLINE, IPTC_CAPTION, IPTC_RIGHTS = 5, 55, 80, 120, 116
IPTC_PLACE = (92, 90, 95, 101)
XMP_DATES = ("DateCreated", "DateTimeOriginal", "CreateDate")
XMP_PLACE = ("Location", "City", "State", "Country")
_EXIF_DATE = re.compile(r"^(\d{4})[:\-](\d{2})[:\-](\d{2})")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ImageMeta:
    """The metadata found in an image (empty strings and ``None`` where there is none)."""

    width: int
    height: int
    format: str
    title: str = ""
    caption: str = ""
    date: str = ""
    """ISO ``YYYY-MM-DD``."""
    date_source: str = ""
    """Which tag the date came from (``EXIF DateTimeOriginal``...)."""
    lat: float | None = None
    lon: float | None = None
    place: str = ""
    creator: str = ""
    rights: str = ""


def read_image(path: Path) -> ImageMeta:
    """The metadata of the image at ``path`` (see the module doc).

    Raises:
        ImportFailed: ``import.image_bomb``, ``import.image_broken``.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                width, height = image.size
                if width * height > MAX_PIXELS:
                    raise _bomb(path, width, height)
                return _meta(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _bomb(path, 0, 0) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ImportFailed(
            BROKEN,
            Phrase.of("{name} cannot be read as an image: {why}", name=path.name, why=str(exc)),
            hint="Open it in an image viewer and save it again.",
            details={"path": str(path)},
        ) from exc


def _bomb(path: Path, width: int, height: int) -> ImportFailed:
    if width:
        message = Phrase.of(
            "{name} is too large an image to open safely ({width} x {height} pixels): "
            "a decompression bomb?",
            name=path.name,
            width=width,
            height=height,
        )
    else:
        message = Phrase.of(
            "{name} is too large an image to open safely: a decompression bomb?", name=path.name
        )
    return ImportFailed(
        BOMB,
        message,
        hint=Phrase.of(
            "Images of up to {most:,} pixels are imported; scale it down first.", most=MAX_PIXELS
        ),
        details={"path": str(path), "max_pixels": MAX_PIXELS},
    )


def _meta(image: Any) -> ImageMeta:
    exif = _exif(image)
    iptc = _iptc(image)
    xmp = _xmp(image)
    date, source = _date(exif, iptc, xmp)
    lat, lon = _gps(exif.get("gps", {}))
    place = ", ".join(p for p in (iptc.get(n, "") for n in IPTC_PLACE) if p)
    place = place or ", ".join(xmp[n] for n in XMP_PLACE if xmp.get(n))
    return ImageMeta(
        width=int(image.width),
        height=int(image.height),
        format=str(image.format or ""),
        title=xmp.get("title") or iptc.get(IPTC_TITLE) or _text(exif.get(XPTITLE)),
        caption=_text(exif.get(DESCRIPTION))
        or iptc.get(IPTC_CAPTION)
        or xmp.get("description", ""),
        date=date,
        date_source=source,
        lat=lat,
        lon=lon,
        place=place,
        creator=_text(exif.get(ARTIST)) or iptc.get(IPTC_BYLINE) or xmp.get("creator", ""),
        rights=_text(exif.get(COPYRIGHT)) or iptc.get(IPTC_RIGHTS) or xmp.get("rights", ""),
    )


def _exif(image: Any) -> dict[Any, Any]:
    """IFD0 and the Exif IFD's tags in one dict, and the GPS IFD under ``"gps"``."""
    try:
        exif = image.getexif()
        tags: dict[Any, Any] = dict(exif)
        tags.update(exif.get_ifd(EXIF_IFD))
        tags["gps"] = dict(exif.get_ifd(GPS_IFD))
    except Exception:  # a corrupt EXIF block loses only the metadata
        return {}
    return tags


def _iptc(image: Any) -> dict[int, str]:
    """IPTC dataset 2 values by number (the first of repeated ones), decoded."""
    from PIL import IptcImagePlugin

    try:
        info = IptcImagePlugin.getiptcinfo(image) or {}
    except Exception:  # a corrupt IPTC block loses only the metadata
        return {}
    out: dict[int, str] = {}
    for (record, number), value in info.items():
        first = value[0] if isinstance(value, list) and value else value
        if record == 2 and isinstance(first, bytes):
            out[number] = _text(first)
    return out


def _xmp(image: Any) -> dict[str, str]:
    """The XMP packet's title, description, creator, rights, dates and place, by name."""
    packet = image.info.get("xmp") or image.info.get("XML:com.adobe.xmp")
    if not packet:
        return {}
    data = packet.encode("utf-8") if isinstance(packet, str) else bytes(packet)
    try:
        root = parse_bytes(data.strip(b"\x00 \n"), "XMP")
    except ImportFailed:
        return {}
    out: dict[str, str] = {}
    for node in root.iter():
        name = local(node)
        for key, value in node.attrib.items():
            out.setdefault(str(key).rpartition("}")[2], _text(str(value)))
        if name in ("title", "description", "creator", "rights", *XMP_DATES, *XMP_PLACE):
            text = text_of(node)
            if text:
                out.setdefault(name, text)
    return out


def _date(exif: dict[Any, Any], iptc: dict[int, str], xmp: dict[str, str]) -> tuple[str, str]:
    """The best date and where it came from."""
    candidates = [
        (_text(exif.get(DATETIME_ORIGINAL)), "EXIF DateTimeOriginal"),
        (iptc.get(IPTC_DATE, ""), "IPTC Date Created"),
        *[(xmp.get(name, ""), f"XMP {name}") for name in XMP_DATES],
        (_text(exif.get(DATETIME)), "EXIF DateTime"),
    ]
    for value, source in candidates:
        iso = iso_date(value)
        if iso:
            return iso, source
    return "", ""


def iso_date(value: str) -> str:
    """``YYYY-MM-DD`` from an EXIF (``2009:05:17 14:45:56``), IPTC (``20090517``) or XMP date."""
    value = value.strip()
    if re.fullmatch(r"\d{8}", value):
        value = f"{value[:4]}-{value[4:6]}-{value[6:]}"
    match = _EXIF_DATE.match(value)
    if not match or match.group(1) == "0000":
        return ""
    year, month, day = match.groups()
    if not ("01" <= month <= "12" and "01" <= day <= "31"):
        return ""
    return f"{year}-{month}-{day}"


def _gps(gps: dict[Any, Any]) -> tuple[float | None, float | None]:
    """Latitude and longitude in degrees from the GPS IFD, or ``(None, None)``."""
    try:
        lat, lon = _degrees(gps[2]), _degrees(gps[4])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None, None
    if str(gps.get(1, "N")).upper().startswith("S"):
        lat = -lat
    if str(gps.get(3, "E")).upper().startswith("W"):
        lon = -lon
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return None, None
    return round(lat, 6), round(lon, 6)


def _degrees(value: Any) -> float:
    parts = [float(v) for v in value]
    parts += [0.0] * (3 - len(parts))
    return parts[0] + parts[1] / 60 + parts[2] / 3600


def _text(value: Any) -> str:
    """A tag's value as clean text (bytes decoded as UTF-8, UTF-16 for ``XP*`` tags, cp1252)."""
    if value is None:
        return ""
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        value = bytes(value)
    if isinstance(value, bytes):
        if len(value) > 1 and value[1:2] == b"\x00":
            value = value.decode("utf-16-le", errors="replace")
        else:
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                value = value.decode("cp1252", errors="replace")
    return _SPACE.sub(" ", str(value).replace("\x00", "")).strip()
