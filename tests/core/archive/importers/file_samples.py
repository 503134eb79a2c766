"""Files the folder-import tests write: PDFs by hand, a WAV, a decompression-bomb PNG.

PDF is a text format: :func:`text_pdf` writes a real one (catalogue, page tree, a Helvetica
font, one content stream of ``Tj`` text per page, a correct cross-reference table), so pypdf
reads its text layer as it would any producer's. Scans are made by Pillow from the real
Poilus page JPEGs (an image-only PDF, as a scanner writes it).
"""

from __future__ import annotations

import struct
import wave
import zlib
from pathlib import Path

JAVASCRIPT = (
    b"/OpenAction << /S /JavaScript /JS (app.alert\\('hi'\\)) >> "
    b"/Names << /JavaScript << /Names [(x) << /S /JavaScript /JS (app.alert\\(1\\)) >>] >> >> "
)
"""Catalogue entries of a PDF that runs JavaScript when opened."""


def _escape(line: str) -> bytes:
    return (
        line.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    )


def text_pdf(pages: list[str], catalog_extra: bytes = b"", info: bytes = b"") -> bytes:
    """A PDF whose page N shows the lines of ``pages[N-1]`` (Latin-1 text)."""
    objects: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for number, text in enumerate(pages):
        page, content = 4 + 2 * number, 5 + 2 * number
        kids.append(f"{page} 0 R".encode())
        shown = b"".join(b"(" + _escape(line) + b") Tj 0 -14 Td " for line in text.split("\n"))
        stream = b"BT /F1 12 Tf 72 720 Td " + shown + b"ET"
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents "
            + str(content).encode()
            + b" 0 R >>"
        )
        objects.append(
            b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream"
        )
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b">>"
    objects[1] = (
        b"<< /Type /Pages /Kids ["
        + b" ".join(kids)
        + b"] /Count "
        + str(len(pages)).encode()
        + b" >>"
    )
    if info:
        objects.append(info)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    info_ref = f" /Info {len(objects)} 0 R" if info else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info_ref} >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def scanned_pdf(jpeg: Path, target: Path) -> Path:
    """An image-only PDF of a real scan (no text layer), written by Pillow."""
    from PIL import Image

    with Image.open(jpeg) as image:
        image.convert("RGB").save(target, "PDF", resolution=150.0)
    return target


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(tag + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A tiny PNG declaring ``width`` x ``height`` one-bit pixels: a decompression bomb."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(b"\0" * 1024))
        + _png_chunk(b"IEND", b"")
    )


def write_wav(target: Path, seconds: float, rate: int = 8000) -> Path:
    """A silent mono 16-bit WAV of ``seconds``."""
    with wave.open(str(target), "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(rate)
        sound.writeframes(b"\0\0" * int(seconds * rate))
    return target


def gps_jpeg(
    source: Path,
    target: Path,
    lat: tuple[float, float, float],
    lon: tuple[float, float, float],
    caption: str,
) -> Path:
    """``source`` saved again with an EXIF caption and a GPS position (north, east)."""
    from PIL import Image

    with Image.open(source) as image:
        exif = Image.Exif()
        exif[270] = caption
        exif.get_ifd(0x8825).update({1: "N", 2: lat, 3: "E", 4: lon})
        image.save(target, exif=exif)
    return target
