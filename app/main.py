"""The composition root: settings, paths, logging, the archive, services, the window.

``run_app(args)`` is what ``arxiu`` with no command calls. Only PySide6, qasync and the archive
store are imported at startup; the assistant session and the index (llama.cpp,
sentence-transformers, torch) are built on first use, off the GUI thread.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core import paths
from app.core.archive import Archive

if TYPE_CHECKING:
    from app.core.index.hits import Searcher
    from app.core.index.opening import ArchiveIndex
    from app.core.session import AssistantSession
    from app.ui.app_settings import AppSettings
    from app.ui.archive_switch import StartupArchive

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


def build_session(
    archive: Archive, searcher: Searcher | None, settings: AppSettings, lang: str = "lg-eng"
) -> AssistantSession:
    """The assistant session over ``archive`` (imports the agent stack lazily); its tools label
    in ``lang``, the UI's archive language (``lg-eng``, ``lg-cat``, ``lg-spa``)."""
    from app.core.session import AssistantSession

    options = settings.assistant_settings(lang)
    return AssistantSession(archive, searcher=searcher, settings=options)


def build_index(archive: Archive, settings: AppSettings) -> ArchiveIndex:
    """The index over ``archive`` (imports the index stack lazily): a folder's, or a shared
    archive's in its server; its models run in a child process, so the GUI process never
    imports torch nor runs model code."""
    from app.core.index.opening import open_index

    return open_index(archive, isolate=True)


def run_app(args: argparse.Namespace) -> int:
    """Open the desktop app (or, with ``--screenshot``, render one state to a PNG and exit)."""
    configure_logging()
    screenshot: str | None = getattr(args, "screenshot", None)
    if screenshot and "QT_QPA_PLATFORM" not in os.environ and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import qasync
    from PySide6.QtWidgets import QApplication

    from app.ui import i18n
    from app.ui.app_settings import AppSettings
    from app.ui.archive_switch import start_archive
    from app.ui.crash import install_excepthook
    from app.ui.gui_thread import GuiThreadCollector
    from app.ui.style import apply_style

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Arxiu")
    app.setOrganizationName("Arxiu")
    app.setDesktopFileName("arxiu")  # matches packaging/linux/arxiu.desktop
    app.setQuitOnLastWindowClosed(False)  # _main ends the loop once its clean-up has run
    _set_window_icon(app)
    settings = AppSettings()
    lang = i18n.choose_language(settings.get("language"))
    i18n.install_qt_translator(app, lang)  # Qt's own dialogs; the app's table is asked first
    i18n.install_translator(app, lang)
    apply_style(app)
    collector = GuiThreadCollector(app)  # Qt objects in reference cycles die on this thread
    started = start_archive(args, settings)
    archive = started.archive
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    previous_hook = install_excepthook(show_dialog=not screenshot)
    try:
        with loop:
            code: int = loop.run_until_complete(
                _main(app, started, settings, i18n.ARCHIVE_LANGS[lang], args)
            )
            return code
    finally:
        sys.excepthook = previous_hook
        archive.close()
        collector.stop()


def _set_window_icon(app: Any) -> None:
    from PySide6.QtGui import QIcon

    icon = paths.resources_dir() / "icons" / "arxiu.png"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))


async def _main(
    app: Any, started: StartupArchive, settings: Any, lang: str, args: argparse.Namespace
) -> int:
    from app.ui.archive_switch import WindowHost
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    def make_window(current: Archive) -> tuple[MainWindow, Services]:
        services = Services(
            current, settings, lang=lang, session_factory=build_session, index_factory=build_index
        )
        return MainWindow(services), services

    # File → New/Open archive… swap windows
    host = WindowHost(started.archive, settings, make_window)
    try:
        screenshot: str | None = getattr(args, "screenshot", None)
        if screenshot:
            from app.ui.screenshot import capture

            await capture(host.window, getattr(args, "show", "main") or "main", Path(screenshot))
            return 0
        closed = asyncio.Event()
        app.lastWindowClosed.connect(closed.set)
        host.window.show()
        await asyncio.sleep(0)  # let the first expose and paint through
        log.info("main window shown")  # benchmarks/bench_startup.py waits for this line
        gc.freeze()  # startup's objects live on: full collections no longer walk them (a stall)
        host.window.start_background()
        if started.problem is not None:  # the shared archive opened last did not open
            host.window.choose_shared_archive(started.wanted, started.problem, at_start=True)
        await closed.wait()
        return 0
    finally:
        await host.aclose()
