"""Playing a record's audio or video from a timecode, in the app when Qt Multimedia exists.

``pyside6-essentials`` does not ship Qt Multimedia; it comes with ``pyside6-addons``. Without it
the file opens in the system's player (which cannot seek to the timecode) and the view says so.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices


def timecode_seconds(timecode: str) -> float:
    """``HH:MM:SS.mmm`` as seconds."""
    hours, minutes, seconds = timecode.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def multimedia_available() -> bool:
    """Whether Qt Multimedia can be imported."""
    return importlib.util.find_spec("PySide6.QtMultimedia") is not None


class MediaPlayer(QObject):
    """Plays a media file from a position.

    Signals:
        notice: a sentence for the status bar (e.g. why playback left the app).
    """

    notice = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._player: Any = None
        self._audio: Any = None

    def play(self, path: Path, start_s: float = 0.0) -> None:
        """Play ``path`` from ``start_s`` seconds."""
        if multimedia_available():
            self._play_inside(path, start_s)
            return
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
        self.notice.emit(
            self.tr(
                "Playing in the system player: in-app playback from a timecode needs Qt "
                "Multimedia (install pyside6-addons)."
            )
        )

    def stop(self) -> None:
        """Stop playback."""
        if self._player is not None:
            self._player.stop()

    def _play_inside(self, path: Path, start_s: float) -> None:
        multimedia = importlib.import_module("PySide6.QtMultimedia")
        if self._player is None:
            self._player = multimedia.QMediaPlayer(self)
            self._audio = multimedia.QAudioOutput(self)
            self._player.setAudioOutput(self._audio)
        self._player.setSource(QUrl.fromLocalFile(str(path)))
        self._player.setPosition(int(start_s * 1000))
        self._player.play()
        self.notice.emit(
            self.tr("Playing {name} from {start:.0f} s").format(name=path.name, start=start_s)
        )
