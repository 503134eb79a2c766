"""``arxiu --screenshot PNG --show STATE``: render one state of the window for the README.

``conversation`` and ``confirm-card`` play a scripted model (:mod:`app.ui.demo_script`)
through the real session, so what is shown is what the app renders for a real run.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from app.core.archive import RecordKey
from app.ui import demo_script
from app.ui.main_window import MainWindow

IDLE_TIMEOUT_S = 30.0
QUESTIONS = {
    "conversation": "Which interviews talk about families who had to leave when the reservoir "
    "flooded the valley?",
    "confirm-card": "Create a person record for Anna Pujol, born 1931, and link her as the "
    "informant of this interview.",
}


async def wait_idle(window: MainWindow, timeout_s: float = IDLE_TIMEOUT_S) -> None:
    """Wait until no run or task is going and the event queue is drained."""
    deadline = time.monotonic() + timeout_s
    quiet = 0
    while time.monotonic() < deadline and quiet < 5:
        await asyncio.sleep(0.05)  # the qasync loop processes Qt events meanwhile
        quiet = 0 if window.is_busy() else quiet + 1


def showcase_record(window: MainWindow) -> RecordKey | None:
    """A record worth showing: an oral history, else a coin, else the first record."""
    archive = window.services.archive
    interviews = demo_script.flood_interviews(archive, limit=1)
    if interviews:
        return interviews[0].key
    for section in archive.sections():
        records = archive.list_records(section.tipo, limit=1)
        if records:
            return records[0].key
    return None


def record_with_media(window: MainWindow) -> RecordKey | None:
    """A record with a picture (the record view shows its thumbnail), if the archive has one."""
    from app.core.archive.media import media_of

    archive = window.services.archive
    for section in archive.sections():
        for record in archive.list_records(section.tipo, limit=50):
            if any(m.mime.startswith("image/") for m in media_of(archive, record.key)):
                return record.key
    return None


async def capture(window: MainWindow, state: str, path: Path) -> None:
    """Render ``state`` and save the window as ``path``."""
    window.resize(1600, 940)
    window.show()
    key = showcase_record(window)
    if state == "record":
        key = record_with_media(window) or key
    if key is not None:
        window.open_record(key)
    if state in QUESTIONS:
        await _scripted_run(window, state, key)
    else:  # the picker filled as in the app, without loading a real model
        window.services.set_session(demo_script.demo_session(window.services.archive, []))
        await window.assistant.load_models()
    await wait_idle(window)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(path)):
        raise OSError(f"could not write {path}")


async def _scripted_run(window: MainWindow, state: str, key: RecordKey | None) -> None:
    archive, lang = window.services.archive, window.services.lang
    if state == "confirm-card":
        script = demo_script.plan_script(archive, key)
    else:
        script = demo_script.conversation_script(archive, lang)
    window.services.set_session(demo_script.demo_session(archive, script, lang))
    await window.assistant.load_models()
    if state == "confirm-card":
        window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
        if key is not None:
            window.assistant.ask_about(key)
    window.assistant.send(QUESTIONS[state])
    await wait_idle(window)
