"""Render resources/icons/arxiu.svg to the raster icons the installers use.

Usage: ``QT_QPA_PLATFORM=offscreen python packaging/render_icon.py``. Writes ``arxiu.png``
(256 px: the Linux menu icon and the window icon), and ``arxiu.ico`` (Windows) and
``arxiu.icns`` (macOS) where Qt's image plugins can write those formats.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QImageWriter, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"


def render(svg: Path, size: int) -> QImage:
    """The SVG drawn on a transparent ``size`` × ``size`` image."""
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(svg)).render(painter)
    painter.end()
    return image


def main() -> int:
    """Write the PNG (always) and the ICO/ICNS (when Qt can write them)."""
    app = QGuiApplication(sys.argv[:1])
    svg = ICONS / "arxiu.svg"
    image = render(svg, 256)
    written = [ICONS / "arxiu.png"] if image.save(str(ICONS / "arxiu.png")) else []
    formats = {bytes(f).decode() for f in QImageWriter.supportedImageFormats()}
    for suffix in ("ico", "icns"):
        target = ICONS / f"arxiu.{suffix}"
        if suffix in formats and image.save(str(target), suffix):
            written.append(target)
    print("wrote", ", ".join(p.name for p in written) or "nothing")
    del app
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
