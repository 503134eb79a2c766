"""The composition root: settings, paths, logging, the archive, services, the window.

``run_app(args)`` is what ``arxiu`` with no command calls. Only PySide6, qasync and the archive
store are imported at startup; the assistant session and the index (llama.cpp,
sentence-transformers, torch) are built on first use, off the GUI thread.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

from app.core import paths
from app.core.archive import Archive

log = logging.getLogger("arxiu")


def configure_logging() -> None:
    """Log warnings and worse to stderr, everything from INFO to ``arxiu.log``."""
    root = logging.getLogger()
    if root.handlers:
        return
    root.setLevel(logging.INFO)
    stream = logging.StreamHandler(sys.stderr)
    stream.setLevel(logging.WARNING)
    root.addHandler(stream)
    try:
        paths.home().mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(paths.home() / "arxiu.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    except OSError as error:
        log.warning("no log file: %s", error)


def build_session(archive: Archive, searcher: Any, settings: Any) -> Any:
    """The assistant session over ``archive`` (imports the agent stack lazily)."""
    from app.core.session import AssistantSession, AssistantSettings

    options = AssistantSettings(
        write_allowed=bool(settings.get("write_mode")),
        external_content=bool(settings.get("external_content")),
    )
    return AssistantSession(archive, searcher=searcher, settings=options)


def build_index(archive: Archive, settings: Any) -> Any:
    """The index over ``archive`` (imports the index stack lazily)."""
    from app.core.index.service import Index

    return Index(archive)


def run_app(args: argparse.Namespace) -> int:
    """Open the desktop app (or, with ``--screenshot``, render one state to a PNG and exit)."""
    configure_logging()
    screenshot: str | None = getattr(args, "screenshot", None)
    if screenshot and "QT_QPA_PLATFORM" not in os.environ and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import qasync
    from PySide6.QtWidgets import QApplication

    from app.commands.common import open_current
    from app.ui import i18n
    from app.ui.app_settings import AppSettings
    from app.ui.crash import install_excepthook
    from app.ui.style import apply_style

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Arxiu")
    app.setOrganizationName("Arxiu")
    settings = AppSettings()
    lang = i18n.choose_language(settings.get("language"))
    i18n.install_translator(app, lang)
    apply_style(app)
    archive = open_current(args)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    previous_hook = install_excepthook(show_dialog=not screenshot)
    try:
        with loop:
            code: int = loop.run_until_complete(
                _main(app, archive, settings, i18n.ARCHIVE_LANGS[lang], args)
            )
            return code
    finally:
        sys.excepthook = previous_hook
        archive.close()


async def _main(
    app: Any, archive: Archive, settings: Any, lang: str, args: argparse.Namespace
) -> int:
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    services = Services(
        archive, settings, lang=lang, session_factory=build_session, index_factory=build_index
    )
    window = MainWindow(services)
    try:
        screenshot: str | None = getattr(args, "screenshot", None)
        if screenshot:
            from app.ui.screenshot import capture

            await capture(window, getattr(args, "show", "main") or "main", Path(screenshot))
            return 0
        closed = asyncio.Event()
        app.lastWindowClosed.connect(closed.set)
        window.show()
        window.start_background()
        await closed.wait()
        return 0
    finally:
        window.close()
        await window.aclose()
        await services.aclose()
